package nous_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

func headOf(t *testing.T, s nous.Store, id uuid.UUID) int64 {
	t.Helper()
	st, err := s.Read(context.Background(), id, 0)
	mustDo(t, err)
	return st.Info.Head
}

// A save with nothing new writes nothing, also for a tool call whose
// metadata holds a NaN (which Save drops, as Serialize does).
func TestIdleSaveWithNaNInToolCallMetadata(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"score": math.NaN()}})
	mustDo(t, c.Save(ctx, s))
	before := headOf(t, s, c.Log().ID())
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.Save(ctx, s))
	if after := headOf(t, s, c.Log().ID()); after != before {
		t.Fatalf("two saves with nothing new moved the head from %d to %d", before, after)
	}
}

// A save with nothing new does not contact the store, so a context another
// writer overtook saves nothing and returns nil; its first save with
// something new conflicts, and the store keeps the other writer's turn.
func TestIdleSaveOfAnOvertakenContext(t *testing.T) {
	ctx := context.Background()
	s := &counting{Store: storetest.NewMemory()}
	a := nous.NewContext(quietOption)
	mustDo(t, a.AddMessage(nous.UserMessage("one")))
	mustDo(t, a.Save(ctx, s))
	b, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	mustDo(t, b.AddMessage(nous.UserMessage("b's turn")))
	mustDo(t, b.Save(ctx, s))
	appends := s.appends
	mustDo(t, a.Save(ctx, s))
	if s.appends != appends {
		t.Fatal("an idle save reached the store")
	}
	mustDo(t, a.AddMessage(nous.UserMessage("a's turn")))
	if err := a.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a's save with something new: %v, want ErrConflict", err)
	}
	c, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	if last, _ := c.LastMessage(); c.Len() != 2 || last.Content != "b's turn" {
		t.Fatalf("the store holds %d messages, the last %q: want b's turn kept", c.Len(), last.Content)
	}
}
