package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// restartCommand returns the command that restarts the test server, or
// skips t without one.
func restartCommand(t *testing.T) string {
	ctl := os.Getenv("NOUS_TEST_POSTGRES_CTL")
	if ctl == "" {
		t.Skip("NOUS_TEST_POSTGRES_CTL is not set: it names a command that restarts the test server (.ci/with-postgres sets it)")
	}
	return ctl
}

// The server restarts in the middle of a save loop: saves fail with an
// error and store nothing partial; once it is back they go on, through
// the same Store, and retrying a failed save stores nothing twice, events
// and tool calls alike. A watcher through another Store follows the whole
// run, missing nothing.
func TestSavesGoOnAfterServerRestart(t *testing.T) {
	ctl := restartCommand(t)
	dsn := freshSchema(t)
	s, watcher := open(t, dsn), open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.Save(bg, s))
	watchCtx, stop := context.WithCancel(bg)
	defer stop()
	seen := make(chan int64, 10000)
	go func() {
		defer close(seen)
		for e, err := range watcher.Watch(watchCtx, c.Log().ID(), 0) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	restarted := make(chan error, 1)
	failures := 0
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < 400 || restarted != nil; i++ {
		if i == 50 {
			go func() {
				out, err := exec.Command(ctl, "restart", "-m", "fast").CombinedOutput()
				if err != nil {
					err = fmt.Errorf("%v: %s", err, out)
				}
				restarted <- err
			}()
		}
		select {
		case err := <-restarted:
			must(t, err)
			restarted = nil
		default:
		}
		turn(t, c, i)
		for {
			err := c.Save(bg, s)
			if err == nil {
				break
			}
			if failures++; time.Now().After(deadline) {
				t.Fatalf("saves still fail: %v", err)
			}
			if errors.Is(err, nous.ErrConflict) {
				t.Fatalf("a retried save conflicts: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if failures == 0 {
		t.Fatal("no save failed: the server did not restart during the loop")
	}
	loaded, err := nous.Load(bg, s, c.Log().ID())
	must(t, err)
	same(t, c, loaded)
	want := int64(c.Log().Len())
	for seq := int64(1); seq <= want; seq++ {
		select {
		case got := <-seen:
			if got != seq {
				t.Fatalf("watched seq %d, want %d", got, seq)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("watched up to seq %d of %d", seq-1, want)
		}
	}
	t.Logf("%d saves failed while the server restarted", failures)
}

// Many watchers of several logs, through two Stores, follow a writer
// across a server restart, each seeing every seq once, promptly.
func TestWatchersFollowAcrossServerRestart(t *testing.T) {
	ctl := restartCommand(t)
	dsn := freshSchema(t)
	w1, w2, wr := open(t, dsn), open(t, dsn), open(t, dsn)
	const logs, watchers = 3, 10
	ids := make([]uuid.UUID, logs)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
		must(t, wr.Append(bg, firstBatch(ids[i], uuid.New(), 1)))
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	type seen struct {
		mu   sync.Mutex
		seqs []int64
		err  error
	}
	all := make([]*seen, logs*watchers)
	for i := range all {
		all[i] = &seen{}
		s := w1
		if i%2 == 1 {
			s = w2
		}
		go func(sn *seen, id uuid.UUID) {
			for e, err := range s.Watch(ctx, id, 0) {
				sn.mu.Lock()
				if err != nil {
					sn.err = err
					sn.mu.Unlock()
					return
				}
				sn.seqs = append(sn.seqs, e.Seq)
				sn.mu.Unlock()
			}
		}(all[i], ids[i%logs])
	}
	done := make(chan error, 1)
	for i := range 300 {
		if i == 30 {
			go func() { done <- exec.Command(ctl, "restart", "-m", "fast").Run() }()
		}
		k := i % logs
		for {
			st, err := wr.Read(bg, ids[k], 0)
			if err == nil {
				err = wr.Append(bg, nextBatch(st, 1))
				if err == nil || errors.Is(err, nous.ErrConflict) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	must(t, <-done)
	heads := make([]int64, logs)
	for k := range heads {
		heads[k] = readAll(t, wr, ids[k]).Info.Head
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, sn := range all {
		want := heads[i%logs]
		for {
			sn.mu.Lock()
			n, err := len(sn.seqs), sn.err
			var bad bool
			for j, q := range sn.seqs {
				bad = bad || q != int64(j+1)
			}
			sn.mu.Unlock()
			if bad || err != nil {
				t.Fatalf("watcher %d: %v seqs %v", i, err, sn.seqs)
			}
			if int64(n) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("watcher %d saw %d of %d", i, n, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
