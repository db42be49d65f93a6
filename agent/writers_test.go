//go:build unix

package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
	"github.com/nous-go/nous/filestore"
)

// Two processes drive one session at once on the file store, 300 turns
// each, every turn a Run with its own key: each user message is stored
// once and answered, nothing is lost, the log pairs, and the slower writer
// is not starved: by the time the faster one is done, it has done a fair
// share of its turns (reported; the test fails under a tenth, which a
// writer that loses every race it runs would never reach).
func TestTwoProcessesShareASession(t *testing.T) {
	if dir := os.Getenv("NOUS_WRITERS_DIR"); dir != "" {
		writer(dir, os.Getenv("NOUS_WRITER"))
		return
	}
	if testing.Short() {
		t.Skip("runs two processes of 300 turns each")
	}
	const turns = 300
	dir := t.TempDir()
	var mu sync.Mutex
	done := map[string][]time.Time{} // each writer's turns, as they end
	var wg sync.WaitGroup
	for _, w := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcessesShareASession$", "-test.count=1")
		cmd.Env = append(os.Environ(), "NOUS_WRITERS_DIR="+dir, "NOUS_WRITER="+w, fmt.Sprint("NOUS_WRITER_TURNS=", turns))
		out, err := cmd.StdoutPipe()
		must(t, err)
		cmd.Stderr = os.Stderr
		must(t, cmd.Start())
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines := bufio.NewScanner(out)
			for lines.Scan() {
				if f := strings.Fields(lines.Text()); len(f) == 2 && f[0] == "turn" {
					mu.Lock()
					done[w] = append(done[w], time.Now())
					mu.Unlock()
				} else if lines.Text() != "PASS" {
					t.Errorf("writer %s: %s", w, lines.Text())
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("writer %s: %v", w, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s, err := filestore.Open(dir)
	must(t, err)
	defer s.Close()
	c, err := nous.LoadByName(context.Background(), s, "shared")
	must(t, err)
	must(t, c.CheckToolPairing())
	checkAnswered(t, c.Messages(), 2*turns)
	a, b := done["a"], done["b"]
	first := a[len(a)-1]
	if b[len(b)-1].Before(first) {
		first = b[len(b)-1]
	}
	slower := 0
	for _, times := range [][]time.Time{a, b} {
		if n := countBefore(times, first); slower == 0 || n < slower {
			slower = n
		}
	}
	share := float64(slower) / turns
	t.Logf("when the faster writer was done, the slower had done %d of its %d turns (%.0f%%)", slower, turns, 100*share)
	if share < 0.1 {
		t.Errorf("the slower writer was starved: %d of %d turns", slower, turns)
	}
}

// countBefore returns the times in ts at or before end.
func countBefore(ts []time.Time, end time.Time) int {
	n := 0
	for _, at := range ts {
		if !at.After(end) {
			n++
		}
	}
	return n
}

// writer is one process of TestTwoProcessesShareASession: its turns on
// the session "shared" in dir, each printed once its Run returns.
func writer(dir, name string) {
	turns, _ := strconv.Atoi(os.Getenv("NOUS_WRITER_TURNS"))
	s, err := filestore.Open(dir, filestore.WithoutSync())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	model := &fakeModel{reply: func(view []nous.Message) nous.Message {
		return nous.AssistantMessage("answer to " + view[len(view)-1].Content)
	}}
	r := &agent.Runner{Model: model, Store: s, Options: []nous.Option{nous.WithMaxIterations(1 << 20)}}
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
