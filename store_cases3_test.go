package nous_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// r3flaky stores a batch and loses its reply (lose), or fails before the
// store is reached (down), as a connection that drops after a commit and
// a store that is then unreachable for a while do.
type r3flaky struct {
	nous.Store
	lose, down bool
}

var (
	errR3Lost = errors.New("connection reset after the commit")
	errR3Down = errors.New("connection refused")
)

func (s *r3flaky) Append(ctx context.Context, b nous.Batch) error {
	if s.down {
		return errR3Down
	}
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.lose {
		s.lose = false
		return errR3Lost
	}
	return nil
}

func r3revision(t *testing.T, s nous.Store, id uuid.UUID) int64 {
	t.Helper()
	st, err := s.Read(context.Background(), id, 0)
	mustDo(t, err)
	return st.Info.Revision
}

// A state-only save whose reply is lost, then a save after one more turn
// that fails before it reaches the store, then a save once the store is
// back: with no other writer, it stores what is new (every attempt whose
// outcome was unknown is remembered, not only the last).
func TestStoreCase3EveryAttemptRemembered(t *testing.T) {
	ctx := context.Background()
	s := &r3flaky{Store: storetest.NewMemory()}
	c := nous.NewContext(r2quiet)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))

	c.IncrementIteration() // lands, reply lost
	s.lose = true
	if err := c.Save(ctx, s); !errors.Is(err, errR3Lost) {
		t.Fatalf("save with its reply lost: %v", err)
	}
	c.IncrementIteration() // the store is down: nothing stored
	s.down = true
	if err := c.Save(ctx, s); !errors.Is(err, errR3Down) {
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
func TestStoreCase3LandedChecksToolCallPrefix(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(r2quiet)
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

// S5: a save with nothing new writes nothing, also for a tool call whose
// metadata holds a NaN (which Save drops, as Serialize does).
func TestStoreCase3NaNMetadataIdle(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(r2quiet)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"score": math.NaN()}})
	mustDo(t, c.Save(ctx, s))
	before := r3revision(t, s, c.Log().ID())
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.Save(ctx, s))
	if after := r3revision(t, s, c.Log().ID()); after != before {
		t.Fatalf("two saves with nothing new moved the revision from %d to %d", before, after)
	}
}

// S12: with no unsaved changes, Refresh takes what another writer saved,
// the same NaN in metadata notwithstanding.
func TestStoreCase3NaNMetadataRefresh(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(r2quiet)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"score": math.NaN()}})
	mustDo(t, c.Save(ctx, s))
	d, err := nous.Load(ctx, s, c.Log().ID())
	mustDo(t, err)
	mustDo(t, d.AddMessage(nous.UserMessage("two")))
	mustDo(t, d.Save(ctx, s))
	if err := c.Refresh(ctx, s); err != nil {
		t.Fatalf("Refresh of a context without changes: %v", err)
	}
}
