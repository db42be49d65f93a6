package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
)

func testRefresh(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 2)
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())

	must(t, b.Refresh(ctx, s)) // nothing new: unchanged
	sameContext(t, a, b)

	must(t, a.AddMessage(nous.UserMessage("a goes on")))
	must(t, a.ReplaceMessage(0, nous.SystemMessage("a compacts again")))
	a.Deps["topic"] = "refresh"
	must(t, a.Save(ctx, s))
	must(t, b.Refresh(ctx, s))
	sameContext(t, a, b)

	// Unsaved changes and a store that moved on: a conflict, b unchanged.
	must(t, a.AddMessage(nous.UserMessage("a again")))
	must(t, a.Save(ctx, s))
	must(t, b.AddMessage(nous.UserMessage("b's own")))
	refused(t, "Refresh with unsaved changes", b, nous.ErrConflict, func() error { return b.Refresh(ctx, s) })

	// Tool calls come with a refresh; unsaved state or tool calls, with a
	// store that moved on, are a conflict too.
	b = load(t, s, c.Log().ID())
	a.AddToolCall(nous.ToolCall{ID: "a1", Name: "f"})
	must(t, a.Save(ctx, s))
	must(t, b.Refresh(ctx, s))
	sameContext(t, a, b)
	for name, change := range map[string]func(c *nous.Context){
		"state":     func(c *nous.Context) { c.Iteration++ },
		"deps":      func(c *nous.Context) { c.Deps["b"] = true },
		"tool call": func(c *nous.Context) { c.AddToolCall(nous.ToolCall{ID: "b1", Name: "g"}) },
	} {
		b := load(t, s, c.Log().ID())
		a.MaxIterations++
		must(t, a.Save(ctx, s))
		change(b)
		refused(t, "Refresh with an unsaved change of "+name, b, nous.ErrConflict, func() error { return b.Refresh(ctx, s) })
	}
}

// A refresh reads only the events stored since, and the tool calls they
// record join ToolCalls, which saves on.
func testRefreshToolCalls(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	for i := range 3 {
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("t", i), Name: "f"})
	}
	must(t, c.Save(ctx, s))
	b := load(t, s, c.Log().ID())
	reads := &reading{Store: s}
	c.AddToolCall(nous.ToolCall{ID: "t3", Name: "f", Metadata: map[string]any{"k": []any{"v"}}})
	must(t, c.Save(ctx, s))
	must(t, b.Refresh(ctx, reads))
	sameContext(t, c, b)
	if reads.events != 2 {
		t.Fatalf("a refresh read %d events, want the 1 added and its batch event", reads.events)
	}
	b.ToolCalls[3].Metadata["k"].([]any)[0] = "changed in b"
	if b.Log().ToolCalls()[3].Metadata["k"].([]any)[0] != "v" {
		t.Fatal("a refreshed context's tool calls share their metadata with its log's")
	}
	b.ToolCalls[3].Metadata["k"].([]any)[0] = "v"
	b.AddToolCall(nous.ToolCall{ID: "t4", Name: "f"})
	must(t, b.Save(ctx, s))
	sameContext(t, b, load(t, s, c.Log().ID()))
}

// reading counts the events the last Read of a store returned.
type reading struct {
	nous.Store
	events int
}

func (r *reading) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := r.Store.Read(ctx, id, after)
	r.events = len(st.Events)
	return st, err
}
