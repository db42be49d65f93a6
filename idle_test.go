package nous_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

func revisionOf(t *testing.T, s nous.Store, id uuid.UUID) int64 {
	t.Helper()
	st, err := s.Read(context.Background(), id, 0)
	mustDo(t, err)
	return st.Info.Revision
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
	before := revisionOf(t, s, c.Log().ID())
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.Save(ctx, s))
	if after := revisionOf(t, s, c.Log().ID()); after != before {
		t.Fatalf("two saves with nothing new moved the revision from %d to %d", before, after)
	}
}
