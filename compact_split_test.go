package nous_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
)

// C4 with WithSplitActiveTurn: a split cuts inside the kept turns, never
// across their user messages: with WithKeepTurns(n), every one of the last
// n user messages stays, the latest (the request being answered) above all.
func TestCompactSplitKeepsEveryKeptUserMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep int
		msgs []nous.Message
	}{
		{"two turns", 2, []nous.Message{nous.SystemMessage("s"), nous.UserMessage("old question"), nous.AssistantMessage(words(100)),
			nous.UserMessage("current question"), nous.AssistantMessage(words(100)), nous.AssistantMessage("tail")}},
		{"three turns", 3, []nous.Message{nous.SystemMessage("s"), nous.UserMessage("U1"), nous.AssistantMessage(words(60)),
			nous.UserMessage("U2"), nous.AssistantMessage(words(60)), nous.UserMessage("U3"), nous.AssistantMessage("a")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := contextOf(t, tc.msgs...)
			compacted := 0
			for b := count(c); b > 0; b-- {
				d := c.Clone()
				p, err := d.Compact(context.Background(), b, nous.WithKeepTurns(tc.keep), nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10))
				if errors.Is(err, nous.ErrOverBudget) {
					continue
				}
				mustDo(t, err)
				if len(p.Dropped) > 0 {
					compacted++
				}
				users := 0
				for _, m := range view(d) {
					if m.Role == nous.RoleUser {
						users++
					}
				}
				if users != tc.keep {
					t.Fatalf("budget %d: a kept turn's user message was compacted: %v", b, roles(view(d)))
				}
			}
			if compacted == 0 {
				t.Fatal("no budget compacted the view")
			}
		})
	}
}

// C4 with WithSplitActiveTurn(true): a run with no user message (an agent
// started by its system prompt alone) is all active turn, and safe cuts
// inside it are allowed.
func TestCompactSplitRunWithoutUserMessage(t *testing.T) {
	c := contextOf(t, nous.SystemMessage("You are an autonomous agent. Work through the queue."))
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		x := nous.ToolCall{ID: id, Name: "work"}
		mustDo(t, c.AddMessages(nous.AssistantMessage(words(20), x), nous.ToolMessage(id, "work", words(20))))
	}
	mustDo(t, c.AddMessage(nous.AssistantMessage("done")))
	budget := count(c) / 2
	d := c.Clone()
	mustDo(t, d.ReplaceMessageRange(1, 8, nous.SystemMessage("[8 earlier messages omitted]")))
	if count(d) > budget || d.CheckToolPairing() != nil {
		t.Fatalf("setup: %d %v", count(d), d.CheckToolPairing())
	}
	_, err := c.Compact(context.Background(), budget, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10))
	if err != nil {
		t.Fatalf("split compaction of a run without user messages: %v (a safe cut at 9 fits: %d <= %d)", err, count(d), budget)
	}
}

// C4 with WithSplitActiveTurn: a segment whose first message is a tool
// result (the user wrote while a tool ran) is tried from its first safe
// place, keeping the user message.
func TestPlanSplitSegmentFromItsFirstSafePlace(t *testing.T) {
	x := nous.ToolCall{ID: "x", Name: "build"}
	c := contextOf(t, nous.SystemMessage("s"), nous.AssistantMessage("starting the build", x),
		nous.UserMessage("also run the tests when it is done"), nous.ToolMessage("x", "build", "ok"))
	for i := range 10 {
		y := nous.ToolCall{ID: fmt.Sprint("t", i), Name: "test"}
		mustDo(t, c.AddMessages(nous.AssistantMessage("", y), nous.ToolMessage(y.ID, "test", words(40))))
	}
	mustDo(t, c.AddMessage(nous.AssistantMessage("all tests pass")))
	d := c.Clone() // keep the user message and the result after it; summarize the test runs
	mustDo(t, d.ReplaceMessageRange(4, 21, nous.SystemMessage("[18 earlier messages omitted]")))
	// (ReplaceMessageRange accepted it: it brings no pairing problem the view lacks.)
	budget := count(d) + 10
	if _, err := c.PlanCompaction(budget, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10)); err != nil {
		t.Fatalf("PlanCompaction(%d) with a split: %v; replacing 4..21 gives a valid view of %d tokens: %v", budget, err, count(d), roles(view(d)))
	}
}
