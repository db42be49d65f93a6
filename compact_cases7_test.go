package nous_test

import (
	"errors"
	"testing"

	"github.com/nous-go/nous"
)

func costOf(v []nous.Message) int {
	n := 0
	for _, m := range v {
		n += nous.ApproxCounter{}.CountTokens(m)
	}
	return n
}

// C8/C3: ViewWithin fits every budget the view it returns at a larger one
// fits, also when the cut starts the view and the overlay is joined to the
// marker (a previous summary at the head).
func TestCompactCase7ViewWithinHeadJoinOverlaid(t *testing.T) {
	sum := nous.SystemMessage("an earlier summary " + words(10))
	sum.Metadata = map[string]any{nous.MetadataSummary: true}
	c := rv(t, sum, nous.UserMessage("u1 "+words(50)), nous.AssistantMessage("a1 "+words(50)), nous.UserMessage("u2"))
	c.SetSystemPromptOverlay("overlay text")
	var last []nous.Message
	for b := count(c) - 1; b > 0; b-- {
		v, err := c.ViewWithin(b)
		if err == nil {
			if need := costOf(v); need > b {
				t.Fatalf("budget %d: view costs %d", b, need)
			}
			last = v
			continue
		}
		if last != nil && costOf(last) <= b {
			t.Fatalf("ViewWithin(%d) = %v, but the view %v it returned at budget %d costs %d tokens", b, err, roles(last), b+1, costOf(last))
		}
		return
	}
}

// C1/C6: parallel calls in two assistant messages, A(c1) A(c2) T(c2), with
// c1 still running at the end of the view: no range takes A(c1), so when
// T(c1) arrives it still follows its call; a budget only dropping A(c1)
// would meet is ErrOverBudget.
func TestCompactCase7PendingParallelCallInEarlierMessage(t *testing.T) {
	c1 := nous.ToolCall{ID: "c1", Name: "write", Arguments: []byte(`{"text":"` + words(200) + `"}`)}
	c2 := nous.ToolCall{ID: "c2", Name: "read", Arguments: []byte(`{}`)}
	setup := func() *nous.Context {
		return rv(t, nous.SystemMessage("s"), nous.UserMessage("do it"), nous.AssistantMessage("thinking aloud "+words(200)),
			nous.AssistantMessage("", c1), nous.AssistantMessage("", c2), nous.ToolMessage("c2", "read", "ok"))
	}
	opts := []nous.CompactOption{nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10)}
	if _, err := setup().PlanCompaction(count(setup())/4, opts...); !errors.Is(err, nous.ErrOverBudget) {
		t.Errorf("a budget only dropping the pending call meets: %v, want ErrOverBudget", err)
	}
	c := setup()
	p, err := c.PlanCompaction(count(c)-100, opts...)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	// c1's result arrives while the summarizer runs.
	mustDo(t, c.AddMessages(nous.ToolMessage("c1", "write", "written")))
	mustDo(t, c.ApplyCompaction(p, nous.AssistantMessage("summary")))
	calls := map[string]bool{}
	for _, m := range c.Messages() {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
		if m.Role == nous.RoleTool && !calls[m.ToolCallID] {
			t.Fatalf("plan %d..%d: result %s without its call: %v", p.First, p.Last, m.ToolCallID, roles(c.Messages()))
		}
	}
}
