package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

var quietOption = nous.WithLogger(slog.New(slog.DiscardHandler))

// lostReplyStore stores a batch and then, once armed, fails as a connection
// lost after the commit would.
type lostReplyStore struct {
	nous.Store
	armed bool
}

var errLostReply = errors.New("connection reset after the commit")

func (s *lostReplyStore) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.armed {
		s.armed = false
		return errLostReply
	}
	return nil
}

func documentOf(t *testing.T, c *nous.Context) string {
	t.Helper()
	b, err := c.Serialize()
	mustDo(t, err)
	return string(b)
}

// A save without events (state or tool calls only) whose reply was lost is
// found by the next save after more changes too, and a save after the
// state changed back is not skipped: retrying stores nothing twice and
// loses nothing.
func TestLostReplyOfAStateOnlySave(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*lostReplyStore, *nous.Context) {
		s := &lostReplyStore{Store: storetest.NewMemory()}
		c := nous.NewContext(quietOption)
		mustDo(t, c.AddMessage(nous.UserMessage("one")))
		mustDo(t, c.Save(ctx, s))
		c.IncrementIteration() // a state-only save whose reply is lost
		s.armed = true
		if err := c.Save(ctx, s); !errors.Is(err, errLostReply) {
			t.Fatalf("save with its reply lost: %v", err)
		}
		return s, c
	}

	// A turn after the failed save: every later save of c conflicts,
	// though no other writer exists; Refresh conflicts too (unsaved
	// changes), so the turn can only be redone on a fresh Load.
	t.Run("then a turn", func(t *testing.T) {
		s, c := setup(t)
		mustDo(t, c.AddMessage(nous.UserMessage("two")))
		c.IncrementIteration()
		for range 2 {
			if err := c.Save(ctx, s); err != nil {
				t.Fatalf("retry after a turn (no other writer): %v", err)
			}
		}
	})

	// The state changed back: Save returns nil without storing anything,
	// and the store keeps the lost batch's state, which Load returns.
	t.Run("then the state changed back", func(t *testing.T) {
		s, c := setup(t)
		c.Iteration--
		mustDo(t, c.Save(ctx, s))
		got, err := nous.Load(ctx, s, c.Log().ID())
		mustDo(t, err)
		if got.Iteration != c.Iteration {
			t.Fatalf("Save returned nil with Iteration %d; Load gives %d", c.Iteration, got.Iteration)
		}
	})
}

// flakyStore stores a batch and loses its reply (lose), or fails before the
// store is reached (down), as a connection that drops after a commit and
// a store that is then unreachable for a while do.
type flakyStore struct {
	nous.Store
	lose, down bool
}

var (
	errCommitReplyLost = errors.New("connection reset after the commit")
	errStoreDown       = errors.New("connection refused")
)

func (s *flakyStore) Append(ctx context.Context, b nous.Batch) error {
	if s.down {
		return errStoreDown
	}
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.lose {
		s.lose = false
		return errCommitReplyLost
	}
	return nil
}

// A state-only save whose reply is lost, then a save after one more turn
// that fails before it reaches the store, then a save once the store is
// back: with no other writer, it stores what is new (every attempt whose
// outcome was unknown is remembered, not only the last).
func TestLostReplyEveryAttemptRemembered(t *testing.T) {
	ctx := context.Background()
	s := &flakyStore{Store: storetest.NewMemory()}
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))

	c.IncrementIteration() // lands, reply lost
	s.lose = true
	if err := c.Save(ctx, s); !errors.Is(err, errCommitReplyLost) {
		t.Fatalf("save with its reply lost: %v", err)
	}
	c.IncrementIteration() // the store is down: nothing stored
	s.down = true
	if err := c.Save(ctx, s); !errors.Is(err, errStoreDown) {
		t.Fatalf("save while the store is down: %v", err)
	}
	s.down = false
	c.IncrementIteration()
	for i := range 3 {
		if err := c.Save(ctx, s); err != nil {
			t.Fatalf("save %d once the store is back (no other writer): %v", i+1, err)
		}
	}
}

// Two contexts loaded at one head both record the same call and save;
// exactly one may succeed: c's save conflicts (d's batch is not taken for
// c's own, for its event is d's, not c's).
func TestLostReplyIsNotAnotherWritersBatch(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Arguments: json.RawMessage(`{"v":1}`)})
	mustDo(t, c.Save(ctx, s))

	d, err := nous.Load(ctx, s, c.Log().ID())
	mustDo(t, err)
	d.AddToolCall(nous.ToolCall{ID: "b", Name: "g", Arguments: json.RawMessage(`{"v":2}`)})
	mustDo(t, d.Save(ctx, s))

	c.AddToolCall(nous.ToolCall{ID: "b", Name: "g"})
	err = c.Save(ctx, s)
	got, lerr := nous.Load(ctx, s, c.Log().ID())
	mustDo(t, lerr)
	if !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("c's save after d's: %v, want ErrConflict; the store now holds call b with arguments %s (d saved {\"v\":2})",
			err, got.ToolCalls[1].Arguments)
	}
}

// A store whose Read shows fewer events than its head says is not believed
// about a lost reply: the events c did not see stored may not be its own,
// so the retry conflicts instead of taking them as saved.
func TestLostReplyNotTakenOnEventsUnseen(t *testing.T) {
	ctx := context.Background()
	s := &flakyStore{Store: storetest.NewMemory()}
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.AddMessages(nous.UserMessage("two"), nous.UserMessage("three")))
	s.lose = true
	if err := c.Save(ctx, s); !errors.Is(err, errCommitReplyLost) {
		t.Fatalf("save with its reply lost: %v", err)
	}
	short := &lying{Store: s, edit: func(st *nous.Stored) {
		if len(st.Events) > 1 {
			st.Events = st.Events[:1]
		}
	}}
	if err := c.Save(ctx, short); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("retry through a store that shows one of its two events: %v, want ErrConflict", err)
	}
}

// reformatting is a store whose Read gives the state as a JSON column
// would: the same document, written another way.
type reformatting struct{ nous.Store }

func (s reformatting) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	if err == nil {
		var buf bytes.Buffer
		if err := json.Indent(&buf, st.State, "", "  "); err != nil {
			return st, err
		}
		st.State = buf.Bytes()
	}
	return st, err
}

// A lost reply found on a store that writes the state its own way is taken
// with the state as this package writes it: the retry stores nothing, and
// the next save with nothing new writes nothing.
func TestLostReplyOnAStoreThatReformatsTheState(t *testing.T) {
	ctx := context.Background()
	flaky := &flakyStore{Store: storetest.NewMemory()}
	s := reformatting{flaky}
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.AddMessage(nous.UserMessage("two")))
	c.IncrementIteration()
	flaky.lose = true
	if err := c.Save(ctx, s); !errors.Is(err, errCommitReplyLost) {
		t.Fatalf("save with its reply lost: %v", err)
	}
	landed := headOf(t, s, c.Log().ID())
	for range 2 {
		mustDo(t, c.Save(ctx, s))
	}
	if got := headOf(t, s, c.Log().ID()); got != landed {
		t.Fatalf("the retry of a batch that landed, and a save with nothing new, moved the head from %d to %d", landed, got)
	}
}

// counting is a store that counts the batches it is sent.
type counting struct {
	nous.Store
	appends int
}

func (s *counting) Append(ctx context.Context, b nous.Batch) error {
	s.appends++
	return s.Store.Append(ctx, b)
}

// A save that conflicts with another writer's batch, which is no lost reply
// of its own, sends its batch once: it is not sent again to see.
func TestLostReplyLookedForOnceOnAConflict(t *testing.T) {
	ctx := context.Background()
	mem := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, mem))
	d, err := nous.Load(ctx, mem, c.Log().ID())
	mustDo(t, err)
	mustDo(t, d.AddMessage(nous.UserMessage("d's")))
	mustDo(t, d.Save(ctx, mem))

	s := &counting{Store: mem}
	mustDo(t, c.AddMessage(nous.UserMessage("c's")))
	if err := c.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("c's save after d's: %v, want ErrConflict", err)
	}
	if s.appends != 1 {
		t.Fatalf("a conflicting save sent its batch %d times, want once", s.appends)
	}
}
