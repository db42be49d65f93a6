//go:build unix

// Package crashtest is the crash matrix of the agent runner, for any
// store: a turn with three parallel calls (one idempotent, one at most
// once, one reconciled with a ledger) and one that waits for approval, run
// by a child process that kills itself with SIGKILL at its k-th point
// (each event appended, before and after each save, inside each tool once
// its effect is done), then resumed by another child; the checks that
// follow compare what the ledger says happened with what the log holds.
package crashtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
)

// The environment of a child: its point (-1 for a resumer that never
// dies), the ledger it appends to, and the session it runs.
const (
	envPoint   = "NOUS_CRASH_POINT"
	envLedger  = "NOUS_CRASH_LEDGER"
	envSession = "NOUS_CRASH_SESSION"
)

// Child runs the scenario when this process is a child of [Matrix], on
// the store open returns, and exits: 0 once the turn is done, 2 on an
// error. Outside a child it returns at once. Call it first in the test
// Matrix runs.
func Child(open func() (nous.Store, error)) {
	point := os.Getenv(envPoint)
	if point == "" {
		return
	}
	k, _ := strconv.Atoi(point)
	s, err := open()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ch := &child{kill: k, ledger: os.Getenv(envLedger), pid: os.Getpid()}
	if err := ch.run(s, os.Getenv(envSession)); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("done")
	os.Exit(0)
}

// child is one process of the matrix.
type child struct {
	kill   int // the point it dies at; -1 for never
	ledger string
	pid    int

	mu     sync.Mutex // the tools run at once
	points int
}

// point counts a point of the run, and dies at the child's.
func (ch *child) point(where string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.points++
	if ch.points == ch.kill {
		ch.record("kill", where)
		_ = syscall.Kill(ch.pid, syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// record appends a line to the ledger: what happened, in which process.
// A write returns once the kernel has it: a SIGKILL after it loses nothing.
// One write of one line is atomic with O_APPEND, so the tools running at
// once may record at once.
func (ch *child) record(what, arg string) {
	f, err := os.OpenFile(ch.ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %s %d\n", what, arg, ch.pid); err != nil {
		panic(err)
	}
}

// run drives the turn to its end: Run, decide every call that waits (a
// call decided already by an earlier process is stale, and left), Run on.
func (ch *child) run(s nous.Store, session string) error {
	ctx := context.Background()
	r := &agent.Runner{
		Model: &model{ch: ch},
		Tools: ch.tools(),
		Store: &killing{Store: s, ch: ch},
		Setup: func(c *nous.Context) {
			c.Observer = func(e nous.Event) { ch.point("event " + string(e.Type)) }
		},
		Backoff: agent.Backoff{Tries: 8},
		// The killed child's calls are taken as running there until its
		// lease ends: short, so that its resumer waits a little only.
		Lease: 50 * time.Millisecond,
	}
	turn, err := r.Run(ctx, session, agent.Input{Key: "turn", Messages: []nous.Message{nous.UserMessage("pay the bills")}})
	for err == nil && len(turn.Waiting) > 0 {
		for _, w := range turn.Waiting {
			d := nous.Decision{CallID: w.Call.ID, Request: w.Request, Digest: w.Digest, Approve: true, By: "crashtest"}
			ch.record("decide", w.Call.ID)
			if err := r.Decide(ctx, session, d); err != nil && !errors.Is(err, nous.ErrStaleDecision) {
				return err
			}
		}
		turn, err = r.Run(ctx, session, agent.Input{})
	}
	return err
}

// killing is a store whose saves are points: before the batch is sent,
// and once it is stored.
type killing struct {
	nous.Store
	ch *child
}

func (s *killing) Append(ctx context.Context, b nous.Batch) error {
	s.ch.point("before a save")
	err := s.Store.Append(ctx, b)
	if err == nil {
		s.ch.point("after a save")
	}
	return err
}

// model is the turn's model: to the user's message, four calls; once they
// are answered, a reply. Each call is in the ledger, with the replies the
// view held when it was made.
type model struct{ ch *child }

func (m *model) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	view := c.Messages()
	replies := 0
	for _, msg := range view {
		if msg.Role == nous.RoleAssistant {
			replies++
		}
	}
	m.ch.record("model", strconv.Itoa(replies))
	reply := nous.AssistantMessage("All paid.")
	if view[len(view)-1].Role == nous.RoleUser {
		reply = nous.AssistantMessage("", call("idem"), call("pay"), call("book"), call("wire"))
	}
	if err := c.AddMessage(reply); err != nil {
		return nous.Message{}, err
	}
	c.EndStep(nous.Step{Provider: "crashtest", Model: "crashtest"})
	return reply, nil
}

// call returns the model's call of tool name.
func call(name string) nous.ToolCall {
	return nous.ToolCall{ID: name + "-1", Name: name, Arguments: []byte(`{"amount":10}`)}
}

// tools returns the turn's tools: each records its run in the ledger, and
// its effect is done once it has (a point follows).
func (ch *child) tools() []agent.Tool {
	make := func(name string, policy agent.InDoubt) agent.Tool {
		def, _ := nous.NewTool(name, name, nil)
		return agent.Tool{Def: def, InDoubt: policy,
			Run: func(_ context.Context, rc nous.RunContext) nous.ToolResult {
				ch.record("run", rc.Call.ID)
				ch.point("in " + rc.Call.ID)
				return nous.ToolResult{Content: name + " done"}
			},
			Reconcile: func(_ context.Context, call nous.ToolCall) (nous.ToolResult, bool, error) {
				led, err := readLedger(ch.ledger)
				return nous.ToolResult{Content: name + " done (reconciled)"}, led.count("run", call.ID, 0) > 0, err
			}}
	}
	wire := make("wire", agent.Reconcile)
	wire.Approve = func(nous.ToolCall) bool { return true }
	return []agent.Tool{make("idem", agent.Rerun), make("pay", agent.AtMostOnce), make("book", agent.Reconcile), wire}
}

// ledger is what a round's processes recorded, in order.
type ledger [][3]string

// readLedger reads the ledger at path; none is empty.
func readLedger(path string) (ledger, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out ledger
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		parts := strings.SplitN(lines.Text(), " ", 3)
		if len(parts) == 3 {
			out = append(out, [3]string{parts[0], parts[1], parts[2]})
		}
	}
	return out, lines.Err()
}

// count returns the lines of what with arg (any, for ""), of process pid
// (any, for 0).
func (l ledger) count(what, arg string, pid int) int {
	n := 0
	for _, e := range l {
		if e[0] == what && (arg == "" || e[1] == arg) && (pid == 0 || e[2] == strconv.Itoa(pid)) {
			n++
		}
	}
	return n
}

// spawn runs test (the name of the test that calls Child) in a child
// process at point k, and returns its process ID, whether it died of its
// SIGKILL, and what it printed.
func spawn(t *testing.T, test string, env []string, k int, ledgerPath, session string) (pid int, killed bool, out string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), envPoint+"="+strconv.Itoa(k), envLedger+"="+ledgerPath, envSession+"="+session)
	b, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return cmd.Process.Pid, true, string(b)
		}
		t.Fatalf("child at point %d: %v: %s%s", k, err, b, exit.Stderr)
	}
	if err != nil {
		t.Fatalf("child at point %d: %v", k, err)
	}
	return cmd.Process.Pid, false, string(b)
}

// path returns the ledger's path of round k in dir.
func path(dir string, k int) string { return filepath.Join(dir, fmt.Sprint("ledger-", k)) }
