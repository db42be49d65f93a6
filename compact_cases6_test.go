package nous_test

import (
	"context"
	"errors"
	"fmt"

	"testing"

	"github.com/nous-go/nous"
)

// signedThinkingMsg is an assistant message of signed thinking alone, as
// TestCompactCaseSignedReasoningSeparated stores it.
func signedThinkingMsg(n int, sig string) nous.Message {
	m := nous.AssistantMessage("")
	m.Parts = []nous.ContentPart{nous.ThinkingPart(words(n), sig)}
	return m
}

// C4: signed reasoning stays with the call it belongs to, also when
// interleaved thinking is stored as two assistant messages of signed
// thinking before the call (or signed thinking, then a text message, then
// the call): no cut between the first and the call.
func TestCompactCase6SignedThinkingRunBeforeCall(t *testing.T) {
	x := nous.ToolCall{ID: "c1", Name: "f"}
	for name, between := range map[string]nous.Message{
		"a second thinking message": signedThinkingMsg(5, "sig2"),
		"a text message":            nous.AssistantMessage("let me look that up"),
	} {
		t.Run(name, func(t *testing.T) {
			c := rv(t, nous.SystemMessage("s"), nous.UserMessage("u1"), signedThinkingMsg(100, "sig1"), between,
				nous.AssistantMessage("", x), nous.ToolMessage("c1", "f", "r"), nous.AssistantMessage("done"), nous.UserMessage("u2"))
			for b := count(c); b > 0; b-- {
				v, err := c.ViewWithin(b)
				if err != nil {
					break
				}
				for i, m := range v {
					if len(m.ToolCalls) > 0 && (len(v[i-2].Parts) == 0 || v[i-2].Parts[0].Options["signature"] != "sig1") {
						t.Fatalf("budget %d: the call is kept without the first signed thinking before it: %v", b, roles(v))
					}
				}
			}
		})
	}
}

// C1/C6 with WithSplitActiveTurn: a range never takes the assistant
// message whose calls are still running (the view ends with them, a big
// write_file call, say): when the runtime appends their results, they still
// follow their call, whether the plan was applied before or after. A budget
// only that message's dropping would meet is ErrOverBudget.
func TestCompactCase6SplitKeepsPendingCalls(t *testing.T) {
	setup := func() *nous.Context {
		c := rv(t, nous.SystemMessage("s"), nous.UserMessage("write the report"))
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

// C8: ViewWithin counts the marker it puts in ("[2 earlier messages
// omitted]"), not one for the whole view: over 9,999 messages, a budget
// the smallest valid view fits exactly gets that view.
func TestCompactCase6ViewWithinCountsItsMarker(t *testing.T) {
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage(words(50)), nous.AssistantMessage(words(50)), nous.UserMessage("go"))
	for range 10000 {
		mustDo(t, c.AddMessage(nous.AssistantMessage("step")))
	}
	want := c.Clone()
	mustDo(t, want.ReplaceMessageRange(1, 2, nous.SystemMessage("[2 earlier messages omitted]")))
	budget := count(want)
	v, err := c.ViewWithin(budget)
	if err != nil {
		t.Fatalf("ViewWithin(%d): %v, but its own view of %d messages costs %d <= %d", budget, err, len(v), countMsgs(v), budget)
	}
}

// C3: the plan leaves WithSummaryReserve tokens for the summary, also when
// the range starts with a rolling summary carrying the overlay, which the
// new summary takes: a summary exactly within the reserve is applied.
func TestCompactCase6SummaryWithinReserveAtHead(t *testing.T) {
	c := rv(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	old := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("word wo"), nil })
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(old), nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q2")))
	c.SetSystemPromptOverlay("word ")
	summary := nous.SystemMessage("ab")
	reserve := nous.ApproxCounter{}.CountTokens(summary) // the summary fits its reserve exactly
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return summary, nil })
	tried := 0
	for b := count(c); b > 0; b-- {
		p, err := c.PlanCompaction(b, nous.WithSummaryReserve(reserve))
		if err != nil || len(p.Dropped) == 0 || p.First != 0 {
			continue
		}
		tried++
		d := c.Clone()
		if _, err := d.Compact(context.Background(), b, nous.WithSummarizer(s), nous.WithSummaryReserve(reserve)); err != nil {
			t.Fatalf("budget %d: plan %d..%d, TokensAfter %d <= %d with a summary of %d tokens, its reserve; Compact: %v",
				b, p.First, p.Last, p.TokensAfter, b, reserve, err)
		}
	}
	if tried == 0 {
		t.Fatal("setup: no plan at the head")
	}
}

// C4 with WithSplitActiveTurn: a segment whose first message is a tool
// result (the user wrote while a tool ran) is tried from its first safe
// place, keeping the user message.
func TestCompactCase6SplitSegmentStartingWithResult(t *testing.T) {
	x := nous.ToolCall{ID: "x", Name: "build"}
	c := rv(t, nous.SystemMessage("s"), nous.AssistantMessage("starting the build", x),
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
