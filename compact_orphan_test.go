package nous_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nous-go/nous"
)

// orphanCheck is an oracle of C1 by IDs alone: a result kept in got has its
// call kept, and a call kept has its results kept. It returns what breaks
// it, or "".
func orphanCheck(orig, got []nous.Message) string {
	callAt, calls := map[string]int{}, map[string]int{}
	for i, m := range orig {
		for _, tc := range m.ToolCalls {
			callAt[tc.ID] = i
			calls[tc.ID]++
		}
	}
	// An ID with a result before any call of it (a ghost), or that several
	// calls have (call_0 every turn), is ambiguous by ID alone: its results
	// are not checked (the model test pairs them by place).
	ghost := map[string]bool{}
	for id, n := range calls {
		ghost[id] = n > 1
	}
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

// C1 and C7 on random conversations: ViewWithin and Compact at random
// budgets, with and without a split or pruning, of a conversation compacted and
// round-tripped through JSON before, never orphan a call or a result, and
// what they return without an error fits.
func TestCompactNeverOrphansRandomViews(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 18))
	runs := 3000
	if nous.Long() {
		runs = 100_000
	}
	for run := range runs {
		c := randomConversation(t, r, false)
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
			opts := []nous.CompactOption{nous.WithSplitActiveTurn(split), nous.WithKeepTurns(1 + r.IntN(2)), nous.WithToolResultLimit(r.IntN(3) * 8)}
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
