package filestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nous-go/nous"
)

// A save that waits on its fsync holds up nothing else of its store: a
// save of another log, a read of the same log (which sees it as it was),
// a list, a delete of another log all finish meanwhile. A second save of
// the same log waits its turn and then conflicts, as a stale one must.
func TestSaveDoesNotHoldTheStore(t *testing.T) {
	ctx := context.Background()
	s, fs := openRecorded(t, t.TempDir())
	defer s.Close()
	slow, other, gone := nous.NewContext(), nous.NewContext(), nous.NewContext()
	for _, c := range []*nous.Context{slow, other, gone} {
		saveTurns(t, s, c, "one")
	}
	stale, err := nous.Load(ctx, s, slow.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	inSync, proceed := make(chan struct{}), make(chan struct{})
	let := sync.OnceFunc(func() { close(proceed) })
	defer let() // before the store closes: a failure must not leave the save waiting
	slowName := slow.Log().ID().String() + suffix
	fs.mu.Lock()
	fs.onSync = func(name string) {
		if name == slowName {
			close(inSync)
			<-proceed
		}
	}
	fs.mu.Unlock()
	if err := slow.AddMessage(nous.UserMessage("two")); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() { saved <- slow.Save(ctx, s) }()
	<-inSync
	meanwhile := make(chan error, 1)
	go func() {
		meanwhile <- func() error {
			if err := other.AddMessage(nous.UserMessage("two")); err != nil {
				return err
			}
			if err := other.Save(ctx, s); err != nil {
				return fmt.Errorf("a save of another log: %w", err)
			}
			got, err := nous.Load(ctx, s, slow.Log().ID())
			if err != nil {
				return fmt.Errorf("a load of the log being saved: %w", err)
			}
			if got.Len() != 1 {
				return fmt.Errorf("a load of the log being saved: %d messages, want the 1 saved", got.Len())
			}
			n := 0
			for _, err := range s.List(ctx, nous.ListOptions{}) {
				if err != nil {
					return fmt.Errorf("list: %w", err)
				}
				n++
			}
			if n != 3 {
				return fmt.Errorf("listed %d logs, want 3", n)
			}
			return s.Delete(ctx, gone.Log().ID())
		}()
	}()
	select {
	case err := <-meanwhile:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the store's other work waited for a save's fsync")
	}
	if err := stale.AddMessage(nous.UserMessage("stale")); err != nil {
		t.Fatal(err)
	}
	staleSaved := make(chan error, 1)
	go func() { staleSaved <- stale.Save(ctx, s) }()
	select {
	case err := <-staleSaved:
		t.Fatalf("a save of the log being written did not wait its turn: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	let()
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if err := <-staleSaved; !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("the stale save, after: %v, want ErrConflict", err)
	}
	got, err := nous.Load(ctx, s, slow.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 2 || !strings.Contains(got.Messages()[1].Content, "two") {
		t.Fatalf("stored %d messages, want the slow save's 2", got.Len())
	}
}

// A store closed while one of its saves waits on its fsync: the save
// finishes, durable, with no panic, and the store opened again holds it.
func TestCloseDuringASave(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, fs := openRecorded(t, dir)
	c := nous.NewContext()
	saveTurns(t, s, c, "one")
	inSync, proceed := make(chan struct{}), make(chan struct{})
	let := sync.OnceFunc(func() { close(proceed) })
	defer let()
	name := c.Log().ID().String() + suffix
	fs.mu.Lock()
	fs.onSync = func(n string) {
		if n == name {
			close(inSync)
			<-proceed
		}
	}
	fs.mu.Unlock()
	if err := c.AddMessage(nous.UserMessage("two")); err != nil {
		t.Fatal(err)
	}
	watch, stop := context.WithCancel(ctx)
	defer stop()
	watched := make(chan error, 1)
	go func() {
		for _, err := range s.Watch(watch, c.Log().ID(), 1) {
			if err != nil {
				watched <- err
				return
			}
		}
	}()
	saved := make(chan error, 1)
	go func() { saved <- c.Save(ctx, s) }()
	<-inSync
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	let()
	if err := <-saved; err != nil {
		t.Fatalf("a save whose store closed as it fsynced: %v", err)
	}
	if err := <-watched; err == nil {
		t.Fatal("a watch of a closed store ended without an error")
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, err := nous.Load(ctx, again, c.Log().ID())
	if err != nil || got.Len() != 2 {
		t.Fatalf("after the reopen: %v, %v", got, err)
	}
}

// A log being written stays in a full cache: another log's save does not
// push it out, so a read meanwhile sees the log as it was, not a frame
// before its fsync, and a write that fails poisons the entry readers use.
func TestCacheKeepsALogBeingWritten(t *testing.T) {
	ctx := context.Background()
	s, fs := openRecorded(t, t.TempDir(), WithCacheLimit(1, 1<<20))
	defer s.Close()
	a, b := nous.NewContext(), nous.NewContext()
	saveTurns(t, s, a, "one")
	saveTurns(t, s, b, "one")
	inSync, proceed := make(chan struct{}), make(chan struct{})
	let := sync.OnceFunc(func() { close(proceed) })
	defer let()
	name := a.Log().ID().String() + suffix
	injected := errors.New("injected fsync failure")
	fs.mu.Lock()
	fs.onSync = func(n string) {
		if n == name {
			close(inSync)
			<-proceed
			fs.mu.Lock()
			fs.fail, fs.err = "sync", injected
			fs.mu.Unlock()
		}
	}
	fs.mu.Unlock()
	if err := a.AddMessage(nous.UserMessage("two")); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() { saved <- a.Save(ctx, s) }()
	<-inSync
	saveTurns(t, s, b, "two") // the cache holds one log: b's save would push a out
	if st, err := s.Read(ctx, a.Log().ID(), 0); err != nil || st.Info.Head != 2 {
		t.Fatalf("a read of the log being written: head %d, %v; want 2 (a message and its batch event), the frame not fsynced unseen", st.Info.Head, err)
	}
	let()
	if err := <-saved; !errors.Is(err, injected) {
		t.Fatalf("the save whose fsync fails: %v", err)
	}
	fs.failing("", nil)
	if _, err := s.Read(ctx, a.Log().ID(), 0); err == nil {
		t.Fatal("a log whose fsync failed reads as healthy")
	}
}

// A first batch of a log that exists, racing the log's saves, is refused
// with the log's head read under the store's mutex (run with -race).
func TestFirstBatchOfAnExistingLogRacesItsSaves(t *testing.T) {
	ctx := context.Background()
	s, _ := openRecorded(t, t.TempDir(), WithoutSync())
	defer s.Close()
	c := nous.NewContext()
	saveTurns(t, s, c, "one")
	st, err := s.Read(ctx, c.Log().ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	first := nous.Batch{Info: st.Info, State: st.State}
	first.Info.Head = 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if err := s.Append(ctx, first); !errors.Is(err, nous.ErrConflict) {
				t.Errorf("a first batch of a log that exists: %v", err)
				return
			}
		}
	}()
	for i := range 100 {
		saveTurns(t, s, c, fmt.Sprint("turn ", i))
	}
	<-done
}
