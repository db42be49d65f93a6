package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nous-go/nous"
)

func testConflict(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())
	must(t, a.AddMessage(nous.UserMessage("a's turn")))
	must(t, b.AddMessage(nous.UserMessage("b's turn")))
	must(t, a.Save(ctx, s))
	refused(t, "the second save", b, nous.ErrConflict, func() error { return b.Save(ctx, s) })
	got := load(t, s, c.Log().ID())
	sameContext(t, a, got)
}

func testNeverSavedConflicts(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	data, err := c.Serialize()
	must(t, err)
	d, err := nous.DeserializeWithLogger(data, quiet)
	must(t, err)
	must(t, d.AddMessage(nous.UserMessage("restored elsewhere")))
	if err := d.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("save of a context never saved to the store, whose log is there: %v, want ErrConflict", err)
	}
}

func testRacingWriters(t *testing.T, s nous.Store) { testRacingWritersOn(t, []nous.Store{s}) }

// testRacingWritersOn races the writers through handles, writer w through
// handles[w%len(handles)].
func testRacingWritersOn(t *testing.T, handles []nous.Store) {
	ctx := context.Background()
	s := handles[0]
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessage(nous.UserMessage("start")))
	must(t, c.Save(ctx, s))
	const writers, turns = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range turns {
				s := handles[w%len(handles)]
				for {
					d, err := nous.Load(ctx, s, c.Log().ID())
					if err != nil {
						errs <- err
						return
					}
					if err := d.AddMessage(nous.UserMessage(fmt.Sprintf("writer %d turn %d", w, turn))); err != nil {
						errs <- err
						return
					}
					err = d.Save(ctx, s)
					if err == nil {
						break
					}
					if !errors.Is(err, nous.ErrConflict) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := load(t, s, c.Log().ID())
	seen := map[string]bool{}
	for i, e := range got.Log().Events() {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Message == nil {
			continue // the batches' own events
		}
		if seen[e.Message.Content] {
			t.Fatalf("%q stored twice", e.Message.Content)
		}
		seen[e.Message.Content] = true
	}
	if len(seen) != 1+writers*turns {
		t.Fatalf("%d messages stored, want %d", len(seen), 1+writers*turns)
	}
}

// A save that changes only the state is a batch like any other: it is
// stored, another writer that did not see it conflicts, and Refresh takes
// it. A loaded context whose state does not re-encode byte for byte (1.50
// is written 1.5) is unchanged all the same.
func testStateOnlySaves(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.Deps["price"] = json.Number("1.50")
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())
	must(t, b.Refresh(ctx, s)) // nothing changed: no conflict

	a.SystemPrompt = "new instructions"
	must(t, a.Save(ctx, s))
	got := load(t, s, c.Log().ID())
	if got.SystemPrompt != "new instructions" {
		t.Fatalf("a state-only save was not stored: %q", got.SystemPrompt)
	}
	must(t, b.Refresh(ctx, s))
	if b.SystemPrompt != "new instructions" {
		t.Fatalf("Refresh did not take a state-only save: %q", b.SystemPrompt)
	}

	x := load(t, s, c.Log().ID())
	y := load(t, s, c.Log().ID())
	x.AgentName = "x"
	y.AgentName = "y"
	must(t, x.Save(ctx, s))
	if err := y.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a state-only save over another's: %v, want ErrConflict", err)
	}
	for info, err := range s.List(ctx, nous.ListOptions{}) {
		must(t, err)
		if info.ID == c.Log().ID() && info.Head != int64(x.Log().Len()) {
			t.Fatalf("List says head %d after a state-only save, want %d", info.Head, x.Log().Len())
		}
	}
}

// A log deleted and saved again under the same ID is another log, even at
// the head a context saw of the old one: that context's Save
// and Refresh conflict instead of splicing the two.
func testRecreated(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessage(nous.UserMessage("one")))
	data, err := c.Serialize()
	must(t, err)
	must(t, c.AddMessage(nous.UserMessage("two (A)")))
	must(t, c.Save(ctx, s))
	reader := load(t, s, c.Log().ID())
	must(t, s.Delete(ctx, c.Log().ID()))
	b, err := nous.DeserializeWithLogger(data, quiet) // the same ID, an older history
	must(t, err)
	must(t, b.AddMessage(nous.UserMessage("two (B)")))
	must(t, b.Save(ctx, s)) // the head and revision c saw, another log
	must(t, c.AddMessage(nous.UserMessage("three (A)")))
	refused(t, "Save onto the re-created log", c, nous.ErrConflict, func() error { return c.Save(ctx, s) })
	refused(t, "Refresh from the re-created log", reader, nous.ErrConflict, func() error { return reader.Refresh(ctx, s) })
	must(t, b.AddMessage(nous.UserMessage("three (B)")))
	must(t, b.Save(ctx, s))
	refused(t, "Refresh from the re-created log, moved on", reader, nous.ErrConflict, func() error { return reader.Refresh(ctx, s) })
	sameContext(t, b, load(t, s, b.Log().ID()))
}

// lostAck is a store whose Append stores the batch and then, once armed,
// fails as a connection lost before the reply would.
type lostAck struct {
	nous.Store
	armed bool
}

func (s *lostAck) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.armed {
		s.armed = false
		return errLostAck
	}
	return nil
}

// A save whose reply was lost after the store kept it is found at the next
// save, which stores nothing twice: retried as it was, or with more added
// since. A state-only save is taken as its own only when the store holds
// exactly what it would store, so another writer's is still a conflict.
func testLostAcknowledgement(t *testing.T, backend nous.Store) {
	ctx := context.Background()
	s := &lostAck{Store: backend}
	lose := func(c *nous.Context) {
		t.Helper()
		s.armed = true
		if err := c.Save(ctx, s); !errors.Is(err, errLostAck) {
			t.Fatalf("Save with its reply lost: %v", err)
		}
	}
	c := conversation(t, 1)
	lose(c) // the first save, which creates the log
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	must(t, c.AddMessage(nous.UserMessage("retried as it was")))
	lose(c)
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	must(t, c.AddMessage(nous.UserMessage("lost")))
	c.AddToolCall(nous.ToolCall{ID: "lost", Name: "f"})
	lose(c)
	must(t, c.AddMessage(nous.UserMessage("added after")))
	c.AddToolCall(nous.ToolCall{ID: "after", Name: "f"})
	c.Iteration++
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))
	if info := infoOf(t, s, c.Log().ID()); info.Head != int64(c.Log().Len()) {
		t.Fatalf("stored head %d, want %d", info.Head, c.Log().Len())
	}

	c.Iteration++
	lose(c) // state only
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	other := load(t, s, c.Log().ID())
	other.AgentName = "other"
	must(t, other.Save(ctx, s)) // another writer's state-only save
	c.AgentName = "mine"
	refused(t, "a state-only save after another writer's", c, nous.ErrConflict, func() error { return c.Save(ctx, s) })
	sameContext(t, other, load(t, s, c.Log().ID()))
}

// Two contexts loaded at one head through two handles, both with a turn:
// exactly one save wins, whichever handle it goes through, and the stored
// log is exactly its; the other conflicts, stores nothing, and goes on after
// a new Load through its own handle.
func testConflictTwoHandles(t *testing.T, a, b nous.Store) {
	ctx := context.Background()
	c := conversation(t, 2)
	must(t, c.Save(ctx, a))
	x, y := load(t, a, c.Log().ID()), load(t, b, c.Log().ID())
	must(t, x.AddMessage(nous.UserMessage("through the first handle")))
	must(t, y.AddMessage(nous.UserMessage("through the second handle")))
	errX, errY := make(chan error), make(chan error)
	go func() { errX <- x.Save(ctx, a) }()
	go func() { errY <- y.Save(ctx, b) }()
	ex, ey := <-errX, <-errY
	winner, lostErr, loser, other := x, ey, b, a // the loser's handle and the other
	if ex != nil {
		winner, lostErr, loser, other = y, ex, a, b
	}
	if (ex == nil) == (ey == nil) || !errors.Is(lostErr, nous.ErrConflict) {
		t.Fatalf("saves through two handles: %v and %v, want one nil and one ErrConflict", ex, ey)
	}
	for _, h := range []nous.Store{a, b} {
		sameContext(t, winner, load(t, h, c.Log().ID()))
	}
	fresh := load(t, loser, c.Log().ID())
	must(t, fresh.AddMessage(nous.UserMessage("after the conflict")))
	must(t, fresh.Save(ctx, loser))
	sameContext(t, fresh, load(t, other, c.Log().ID()))
}

// A log deleted through one handle is gone through the other: Load and
// Save there give ErrNotFound, and its name is free.
func testDeleteTwoHandles(t *testing.T, a, b nous.Store) {
	ctx := context.Background()
	c := named(t, "deleted elsewhere", nil)
	must(t, c.Save(ctx, a))
	d := load(t, b, c.Log().ID())
	must(t, a.Delete(ctx, c.Log().ID()))
	if _, err := nous.Load(ctx, b, c.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Load through the other handle of a deleted log: %v, want ErrNotFound", err)
	}
	must(t, d.AddMessage(nous.UserMessage("too late")))
	if err := d.Save(ctx, b); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Save through the other handle of a deleted log: %v, want ErrNotFound", err)
	}
	if _, err := b.Lookup(ctx, "deleted elsewhere"); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Lookup through the other handle of a deleted log's name: %v, want ErrNotFound", err)
	}
	must(t, named(t, "deleted elsewhere", nil).Save(ctx, b))
}
