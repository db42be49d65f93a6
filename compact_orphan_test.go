package nous_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

func messyConversation(t *testing.T, r *rand.Rand) *nous.Context {
	c := nous.NewContext(nous.WithLogger(quietLog))
	if r.IntN(2) == 0 {
		mustDo(t, c.AddMessage(nous.SystemMessage("sys")))
	}
	if r.IntN(3) == 0 {
		c.SetSystemPromptOverlay("ov")
	}
	id := 0
	text := func() string { return strings.Repeat("w ", 1+r.IntN(40)) }
	for range 4 + r.IntN(25) {
		switch k := r.IntN(10); {
		case k < 3:
			mustDo(t, c.AddMessage(nous.UserMessage(text())))
		case k < 4:
			id++
			// result before its call
			mustDo(t, c.AddMessages(nous.ToolMessage(fmt.Sprint("c", id), "f", text()), nous.AssistantMessage(text(), nous.ToolCall{ID: fmt.Sprint("c", id), Name: "f"})))
		default:
			var ids []string
			for range 1 + r.IntN(3) {
				a := nous.AssistantMessage(text())
				for range r.IntN(3) {
					id++
					ids = append(ids, fmt.Sprint("c", id))
					a.ToolCalls = append(a.ToolCalls, nous.ToolCall{ID: ids[len(ids)-1], Name: "f"})
				}
				mustDo(t, c.AddMessage(a))
			}
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, x := range ids {
				if r.IntN(5) > 0 {
					mustDo(t, c.AddMessage(nous.ToolMessage(x, "f", text())))
				}
			}
		}
		if r.IntN(10) == 0 {
			c.PatchDanglingToolCalls()
		}
	}
	return c
}

// unique-ID oracle: kept results have their (earlier) calls kept and vice versa.
func orphanCheck(orig, got []nous.Message) string {
	callAt := map[string]int{}
	for i, m := range orig {
		for _, tc := range m.ToolCalls {
			callAt[tc.ID] = i
		}
	}
	// An ID with a result before any call of it (a ghost) is ambiguous by
	// ID alone: its results are not checked.
	ghost := map[string]bool{}
	for i, m := range orig {
		if at, ok := callAt[m.ToolCallID]; m.Role == nous.RoleTool && (!ok || at > i || slices.IndexFunc(orig[:i], func(o nous.Message) bool {
			return slices.ContainsFunc(o.ToolCalls, func(tc nous.ToolCall) bool { return tc.ID == m.ToolCallID })
		}) < 0) {
			ghost[m.ToolCallID] = true
		}
	}
	keptCalls, keptResults := map[string]bool{}, map[string]bool{}
	for _, m := range got {
		for _, tc := range m.ToolCalls {
			keptCalls[tc.ID] = true
		}
		if m.Role == nous.RoleTool {
			keptResults[m.ToolCallID] = true
		}
	}
	for i, m := range orig {
		if m.Role != nous.RoleTool {
			continue
		}
		at, ok := callAt[m.ToolCallID]
		if !ok || at > i || ghost[m.ToolCallID] {
			continue
		}
		if keptCalls[m.ToolCallID] != keptResults[m.ToolCallID] {
			return "orphan " + m.ToolCallID
		}
	}
	return ""
}

func TestCompactNeverOrphansRandomViews(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 15))
	for run := range 3000 {
		c := messyConversation(t, r)
		if r.IntN(2) == 0 { // a first compaction, then round trip
			d := c.Clone()
			if _, err := d.Compact(context.Background(), r.IntN(count(c)+5), nous.WithSummaryReserve(6), nous.WithSplitActiveTurn(r.IntN(2) == 0)); err == nil {
				e, err := nous.DeserializeWithLogger(serialized(t, d), quietLog)
				mustDo(t, err)
				e.SetSystemPromptOverlay(c.SystemPromptOverlay())
				c = e
			}
		}
		orig := view(c)
		for range 5 {
			b := r.IntN(count(c) + 5)
			split := r.IntN(2) == 0
			opts := []nous.CompactOption{nous.WithSplitActiveTurn(split), nous.WithKeepTurns(1 + r.IntN(2))}
			v, err := c.ViewWithin(b, opts...)
			if p := orphanCheck(orig, v); p != "" {
				t.Fatalf("run %d ViewWithin(%d) err %v: %s: %v", run, b, err, p, roles(v))
			}
			if err == nil && cost(v) > b {
				t.Fatalf("run %d ViewWithin(%d): %d", run, b, cost(v))
			}
			d := c.Clone()
			_, err = d.Compact(context.Background(), b, append(opts, nous.WithSummaryReserve(6))...)
			if p := orphanCheck(orig, view(d)); p != "" {
				t.Fatalf("run %d Compact(%d): %s", run, b, p)
			}
			if err == nil && count(d) > b {
				t.Fatalf("run %d Compact(%d): %d tokens: %v", run, b, count(d), roles(view(d)))
			}
		}
	}
}
