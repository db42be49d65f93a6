package nous_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

var r2quiet = nous.WithLogger(slog.New(slog.DiscardHandler))

// r2lostReply stores a batch and then, once armed, fails as a connection
// lost after the commit would.
type r2lostReply struct {
	nous.Store
	armed bool
}

var errLostReply = errors.New("connection reset after the commit")

func (s *r2lostReply) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.armed {
		s.armed = false
		return errLostReply
	}
	return nil
}

func r2doc(t *testing.T, c *nous.Context) string {
	t.Helper()
	b, err := c.Serialize()
	mustDo(t, err)
	return string(b)
}

// A save without events (state or tool calls only) whose reply was lost is
// found by the next save after more changes too, and a save after the
// state changed back is not skipped: retrying stores nothing twice and
// loses nothing.
func TestStoreCaseEventlessLostReply(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*r2lostReply, *nous.Context) {
		s := &r2lostReply{Store: storetest.NewMemory()}
		c := nous.NewContext(r2quiet)
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

// zeroIncarnation is a store that reports no incarnation, as one written
// before incarnations were might.
type zeroIncarnation struct{ nous.Store }

func (z zeroIncarnation) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := z.Store.Read(ctx, id, after)
	st.Info.Incarnation = uuid.Nil
	return st, err
}

// A log whose stored incarnation is the zero UUID is never given a new one
// by a save (which the store refuses), and the failed save changes
// nothing: a Refresh that worked before it works after it.
func TestStoreCaseZeroIncarnation(t *testing.T) {
	ctx := context.Background()
	mem := storetest.NewMemory()
	a := nous.NewContext()
	mustDo(t, a.AddMessage(nous.UserMessage("imported")))
	mustDo(t, a.Save(ctx, mem))
	s := zeroIncarnation{mem}
	c, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	mustDo(t, c.Refresh(ctx, s))
	mustDo(t, c.AddMessage(nous.UserMessage("next")))
	if err := c.Save(ctx, s); err == nil {
		t.Fatal("a save without an incarnation was taken")
	}
	if err := c.Refresh(ctx, s); err != nil { // the store has not moved on: c left as it is
		t.Fatalf("Refresh after a failed save: %v", err)
	}
}

// S12: a Refresh of one replacement allocates about as much on a view of
// 100,000 messages as on one of 1,000 (it changes the view in place).
func TestStoreCaseRefreshCostGrowsWithView(t *testing.T) {
	ctx := context.Background()
	refresh := func(n int) uint64 {
		s := storetest.NewMemory()
		a := nous.NewContext(r2quiet)
		for i := range n {
			mustDo(t, a.AddMessage(nous.UserMessage(fmt.Sprint(i))))
		}
		mustDo(t, a.Save(ctx, s))
		b, err := nous.Load(ctx, s, a.Log().ID())
		mustDo(t, err)
		mustDo(t, a.AddMessage(nous.UserMessage("first growth of b's view")))
		mustDo(t, a.Save(ctx, s))
		mustDo(t, b.Refresh(ctx, s))
		mustDo(t, a.ReplaceMessage(a.Len()-1, nous.UserMessage("edited")))
		mustDo(t, a.Save(ctx, s))
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		mustDo(t, b.Refresh(ctx, s))
		runtime.ReadMemStats(&m1)
		if x, y := r2doc(t, a), r2doc(t, b); !bytes.Equal([]byte(x), []byte(y)) {
			t.Fatal("refreshed context differs")
		}
		return m1.TotalAlloc - m0.TotalAlloc
	}
	small, large := refresh(1_000), refresh(100_000)
	if large > 4*small {
		t.Fatalf("a Refresh of one replace event allocates %d bytes on a view of 1,000 messages, %d on one of 100,000", small, large)
	}
}
