package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nous-go/nous"
)

// Recorded tool calls are events: a save carries the calls recorded since
// the last one as one event each, whether AddToolCall or a direct append
// recorded them; a list that is no longer the log's record is refused and
// stores nothing; every load has them all.
func testToolCalls(t *testing.T, s nous.Store) {
	ctx := context.Background()
	cs := &counting{Store: s}
	c := conversation(t, 1)
	check := func(what string, wantEvents int) {
		t.Helper()
		must(t, c.Save(ctx, cs))
		if cs.events != wantEvents+1 { // and the batch event
			t.Fatalf("%s: the batch carried %d events, want %d and a batch event", what, cs.events, wantEvents)
		}
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
	}
	must(t, c.Save(ctx, cs))
	for i := range 5 {
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("t", i), Name: "f", Arguments: json.RawMessage(`{"i": ` + fmt.Sprint(i) + `}`),
			Metadata: map[string]any{"signature": "sig", "n": i}})
		check(fmt.Sprint("call ", i), 1)
	}
	c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: "direct", Name: "g"}, nous.ToolCall{ID: "direct2", Name: "g"})
	check("two appended directly", 2)

	for name, edit := range map[string]func(){
		"shortened":          func() { c.ToolCalls = c.ToolCalls[:2] },
		"dropped":            func() { c.ToolCalls = nil },
		"a call put first":   func() { c.ToolCalls = append([]nous.ToolCall{{ID: "new", Name: "g"}}, c.ToolCalls...) },
		"a call deleted":     func() { c.ToolCalls = slices.Delete(slices.Clone(c.ToolCalls), 0, 1) },
		"metadata in a copy": func() { c.ToolCalls = slices.Clone(c.ToolCalls); c.ToolCalls[1].Metadata = map[string]any{"a": "x"} },
	} {
		kept := c.ToolCalls
		before := cs.appends
		edit()
		if err := c.Save(ctx, cs); !errors.Is(err, nous.ErrToolCallsEdited) {
			t.Fatalf("Save of tool calls %s: %v, want ErrToolCallsEdited", name, err)
		}
		if cs.appends != before {
			t.Fatalf("Save of tool calls %s reached the store", name)
		}
		c.ToolCalls = c.Log().ToolCalls() // the way on the error names
		if !slices.EqualFunc(c.ToolCalls, kept, func(a, b nous.ToolCall) bool { return a.ID == b.ID }) {
			t.Fatalf("the log's record after tool calls %s: %v", name, c.ToolCalls)
		}
		must(t, c.Save(ctx, cs))
		if cs.appends != before {
			t.Fatalf("restored after tool calls %s: the save reached the store, with nothing new", name)
		}
	}

	// A loaded context goes on adding to what is stored.
	d := load(t, s, c.Log().ID())
	d.AddToolCall(nous.ToolCall{ID: "after load", Name: "h"})
	must(t, d.Save(ctx, cs))
	if cs.events != 2 {
		t.Fatalf("a loaded context's next save carried %d events, want 1 and a batch event", cs.events)
	}
	got := load(t, s, c.Log().ID())
	sameContext(t, d, got)
}
