package nous_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
)

// C1: calls spread over two assistant messages with one ID, A(x) A(x)
// T(x) T(x), are one group: no cut between the two calls leaves two results
// for one call, in ViewWithin's view or in Compact's.
func TestCompactKeepsGroupOfRepeatedID(t *testing.T) {
	x := nous.ToolCall{ID: "call_0", Name: "f"}
	setup := func() *nous.Context {
		return contextOf(t, nous.SystemMessage("s"), nous.UserMessage("u1"),
			nous.AssistantMessage(words(100), x), nous.AssistantMessage("", x),
			nous.ToolMessage("call_0", "f", "r1"), nous.ToolMessage("call_0", "f", "r2"),
			nous.AssistantMessage("done"), nous.UserMessage("u2"), nous.AssistantMessage("a2"))
	}
	budget := count(setup()) - 90
	wholeGroup := func(v []nous.Message) {
		t.Helper()
		calls, results := 0, 0
		for _, m := range v {
			calls += len(m.ToolCalls)
			if m.Role == nous.RoleTool {
				results++
			}
		}
		if calls != results {
			t.Fatalf("a cut inside the group: %d calls, %d results kept: %v", calls, results, roles(v))
		}
	}
	t.Run("ViewWithin", func(t *testing.T) {
		v, err := setup().ViewWithin(budget)
		mustDo(t, err)
		wholeGroup(v)
	})
	t.Run("Compact", func(t *testing.T) {
		c := setup()
		_, err := c.Compact(context.Background(), budget, nous.WithSummaryReserve(10))
		mustDo(t, err)
		wholeGroup(view(c))
	})
}

// C1: a dangling call does not block later cuts, also when a later turn
// reuses its ID (call_0 every turn, as some servers give them): the later
// result answers the later call.
func TestPlanDanglingCallWithReusedIDHoldsNoCut(t *testing.T) {
	x := nous.ToolCall{ID: "call_0", Name: "f"}
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage(words(10)), nous.AssistantMessage("", x), // dangling
		nous.UserMessage(words(100)), nous.AssistantMessage(words(100)),
		nous.UserMessage("q"), nous.AssistantMessage("", x), nous.ToolMessage("call_0", "f", "r"), nous.AssistantMessage("done"))
	budget := count(c) - 50

	d := c.Clone() // the valid cut: keep from the last user message on
	mustDo(t, d.ReplaceMessageRange(1, 4, nous.SystemMessage("[4 earlier messages omitted]")))
	if count(d) > budget {
		t.Fatalf("setup: the valid cut costs %d > %d", count(d), budget)
	}
	p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(10))
	if err != nil {
		t.Fatalf("no plan, though replacing 1..4 gives a valid view of %d <= %d tokens: %v", count(d), budget, err)
	}
	if p.TokensAfter > budget || p.Last >= 5 {
		t.Fatalf("plan %d..%d (%d tokens after) is not the smallest that fits %d", p.First, p.Last, p.TokensAfter, budget)
	}
}

// C1/C6 with WithSplitActiveTurn: a range never takes the assistant
// message whose calls are still running (the view ends with them, a big
// write_file call, say): when the runtime appends their results, they still
// follow their call, whether the plan was applied before or after. A budget
// only that message's dropping would meet is ErrOverBudget.
func TestCompactNeverTakesPendingCalls(t *testing.T) {
	setup := func() *nous.Context {
		c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage("write the report"))
		for i := range 4 {
			x := nous.ToolCall{ID: fmt.Sprint("r", i), Name: "read"}
			mustDo(t, c.AddMessages(nous.AssistantMessage("", x), nous.ToolMessage(x.ID, "read", words(20))))
		}
		w := nous.ToolCall{ID: "w", Name: "write_file", Arguments: []byte(`{"text":"` + words(200) + `"}`)}
		mustDo(t, c.AddMessage(nous.AssistantMessage("", w))) // its result is not in yet
		return c
	}
	opts := []nous.CompactOption{nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10)}
	if _, err := setup().Compact(context.Background(), count(setup())/3, opts...); !errors.Is(err, nous.ErrOverBudget) {
		t.Errorf("a budget only dropping the pending call meets: %v, want ErrOverBudget", err)
	}
	for _, budget := range []int{count(setup()) - 40, count(setup()) - 80} {
		c := setup()
		p, err := c.Compact(context.Background(), budget, opts...)
		mustDo(t, err)
		mustDo(t, c.AddMessage(nous.ToolMessage("w", "write_file", "ok"))) // the tool finished
		if err := c.CheckToolPairing(); err != nil {
			t.Errorf("budget %d: Compact took the pending call (range %d..%d); its result now follows %v: %v", budget, p.First, p.Last, roles(view(c)), err)
		}
		c = setup()
		p, err = c.PlanCompaction(budget, opts...)
		mustDo(t, err)
		mustDo(t, c.AddMessage(nous.ToolMessage("w", "write_file", "ok")))
		if err := c.ApplyCompaction(p, nous.SystemMessage("sum")); err != nil && !errors.Is(err, nous.ErrConflict) {
			t.Errorf("budget %d: a plan applied after the result came: %v", budget, err)
		}
		if err := c.CheckToolPairing(); err != nil {
			t.Errorf("budget %d: %v", budget, err)
		}
	}
}

// C1/C6: parallel calls in two assistant messages, A(c1) A(c2) T(c2), with
// c1 still running at the end of the view: no range takes A(c1), so when
// T(c1) arrives it still follows its call; a budget only dropping A(c1)
// would meet is ErrOverBudget.
func TestCompactPendingCallInEarlierMessageHoldsCuts(t *testing.T) {
	c1 := nous.ToolCall{ID: "c1", Name: "write", Arguments: []byte(`{"text":"` + words(200) + `"}`)}
	c2 := nous.ToolCall{ID: "c2", Name: "read", Arguments: []byte(`{}`)}
	setup := func() *nous.Context {
		return contextOf(t, nous.SystemMessage("s"), nous.UserMessage("do it"), nous.AssistantMessage("thinking aloud "+words(200)),
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
