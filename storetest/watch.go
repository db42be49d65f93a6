package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nous-go/nous"
)

// Watch yields the events stored after the seq asked for, then every batch
// saved later, with no gap and no duplicate, and ctx's error once it is
// done.
func testWatch(t *testing.T, s nous.Store) { testWatchOn(t, s, s) }

// testWatchOn watches through handle watched the saves made through s.
func testWatchOn(t *testing.T, s, watched nous.Store) {
	w, ok := watched.(nous.Watcher)
	if !ok {
		t.Skip("the store is not a nous.Watcher")
	}
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessages(nous.UserMessage("m0"), nous.UserMessage("m1")))
	must(t, c.Save(context.Background(), s))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const saves = 20
	done := make(chan error, 1)
	go func() {
		for i := 2; i < 2+saves; i++ {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("m", i))); err != nil {
				done <- err
				return
			}
			if err := c.Save(context.Background(), s); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	const head = 3 + 2*saves // the first batch's two messages and batch event, then a message and a batch event a save
	var seen []nous.Event    // asked for the events after seq 1
	var last error
	for e, err := range w.Watch(ctx, c.Log().ID(), 1) {
		if err != nil {
			last = err
			break
		}
		if seen = append(seen, e); e.Seq == head {
			cancel()
		}
	}
	must(t, <-done)
	want := c.Log().Events()[1:]
	if len(seen) != len(want) {
		t.Fatalf("watched %d events, want the %d after seq 1", len(seen), len(want))
	}
	for i, e := range seen {
		if e.Seq != want[i].Seq || e.Type != want[i].Type || (e.Message == nil) != (want[i].Message == nil) ||
			e.Message != nil && e.Message.Content != want[i].Message.Content {
			t.Fatalf("watched seq %d %s, want seq %d %s", e.Seq, e.Type, want[i].Seq, want[i].Type)
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("Watch ended with %v, want ctx's error", last)
	}
}

// A watch of a log that is deleted, or deleted and saved again under its
// ID, ends with an error wrapping ErrNotFound, and never yields an event of
// the log saved again.
func testWatchEnds(t *testing.T, s nous.Store) {
	w, ok := s.(nous.Watcher)
	if !ok {
		t.Skip("the store is not a nous.Watcher")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, again := range []bool{false, true} {
		c := nous.NewContext(nous.WithLogger(quiet))
		must(t, c.AddMessage(nous.UserMessage("old 1")))
		data, err := c.Serialize()
		must(t, err)
		must(t, c.AddMessages(nous.UserMessage("old 2"), nous.UserMessage("old 3")))
		must(t, c.Save(ctx, s))
		var last error
		for e, err := range w.Watch(ctx, c.Log().ID(), 0) {
			if err != nil {
				last = err
				break
			}
			if e.Message != nil && !strings.HasPrefix(e.Message.Content, "old") {
				t.Fatalf("watched %q, of the log saved again", e.Message.Content)
			}
			if e.Seq == 3 { // between two reads: the log goes, and another comes
				must(t, s.Delete(ctx, c.Log().ID()))
				if again {
					b, err := nous.DeserializeWithLogger(data, quiet)
					must(t, err)
					for i := range 4 {
						must(t, b.AddMessage(nous.UserMessage(fmt.Sprint("new ", i))))
					}
					must(t, b.Save(ctx, s))
				}
			}
		}
		if !errors.Is(last, nous.ErrNotFound) {
			t.Fatalf("saved again %v: the watch ended with %v, want ErrNotFound", again, last)
		}
	}
}
