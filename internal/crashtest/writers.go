//go:build unix

package crashtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
)

// The environment of a writer of [Writers]: its name and its turns.
const (
	envWriter = "NOUS_WRITER"
	envTurns  = "NOUS_WRITER_TURNS"
)

// Writer runs a writer's turns when this process is one of [Writers]'
// children, on the store open returns, and exits; outside one it returns
// at once. Each turn is a Run of its own message, under its own key,
// printed once the Run returns.
func Writer(open func() (nous.Store, error)) {
	name := os.Getenv(envWriter)
	if name == "" {
		return
	}
	turns, _ := strconv.Atoi(os.Getenv(envTurns))
	s, err := open()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	r := &agent.Runner{Model: echo{}, Store: s, Options: []nous.Option{nous.WithMaxIterations(1 << 20)}}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil { // both start at once
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := range turns {
		msg := fmt.Sprint(name, " ", i)
		if _, err := r.Run(context.Background(), "shared", agent.Input{Messages: []nous.Message{nous.UserMessage(msg)}, Key: msg}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("turn", i)
	}
	os.Exit(0)
}

// echo is the writers' model: it answers the view's last message, after
// 2 ms, a thousandth of what a real model takes, so that a turn is a few
// saves apart in time, as real turns are, not back to back.
type echo struct{}

func (echo) Call(_ context.Context, c *nous.Context, _ nous.ModelRequest) (nous.Message, error) {
	time.Sleep(2 * time.Millisecond)
	last, _ := c.LastMessage()
	reply := nous.AssistantMessage("answer to " + last.Content)
	if err := c.AddMessage(reply); err != nil {
		return nous.Message{}, err
	}
	c.EndStep(nous.Step{Provider: "crashtest", Model: "echo"})
	return reply, nil
}

// Writers runs two writer processes of turns turns each on the session
// "shared" of the store open gives (env says to them how to open it),
// both at once, then checks the session: every message stored once and
// answered, the calls paired. It returns the share of its turns the
// slower writer had done when the faster was done.
func Writers(t *testing.T, test string, env []string, turns int, open func() (nous.Store, error)) float64 {
	var mu sync.Mutex
	done := map[string][]time.Time{} // each writer's turns, as they end
	var wg, ready sync.WaitGroup
	var starts []io.Writer
	for _, w := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
		cmd.Env = append(append(os.Environ(), env...), envWriter+"="+w, envTurns+"="+strconv.Itoa(turns))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		start, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, start)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			lines := bufio.NewScanner(out)
			for lines.Scan() {
				if lines.Text() == "ready" {
					ready.Done()
				} else if f := strings.Fields(lines.Text()); len(f) == 2 && f[0] == "turn" {
					mu.Lock()
					done[w] = append(done[w], time.Now())
					mu.Unlock()
				} else {
					t.Errorf("writer %s: %s", w, lines.Text())
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("writer %s: %v", w, err)
			}
		}()
	}
	ready.Wait() // both opened the store: both start now
	for _, start := range starts {
		fmt.Fprintln(start, "go")
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	checkShared(t, open, 2*turns)
	return share(done["a"], done["b"], turns)
}

// checkShared checks the session "shared": its calls paired, and n user
// messages, each once and answered (see [CheckAnswered]).
func checkShared(t *testing.T, open func() (nous.Store, error), n int) {
	t.Helper()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	c, err := nous.LoadByName(context.Background(), s, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckToolPairing(); err != nil {
		t.Fatal(err)
	}
	CheckAnswered(t, c.All(), n)
}

// share returns the turns the slower of two writers had done, of turns,
// when the faster was done; a and b are the times their turns ended.
func share(a, b []time.Time, turns int) float64 {
	first := a[len(a)-1]
	if b[len(b)-1].Before(first) {
		first = b[len(b)-1]
	}
	slower := turns
	for _, times := range [][]time.Time{a, b} {
		n := 0
		for _, at := range times {
			if !at.After(first) {
				n++
			}
		}
		slower = min(slower, n)
	}
	return float64(slower) / float64(turns)
}
