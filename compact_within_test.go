package nous_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// C8: the overlay stays in ViewWithin's view when the range starts with an
// earlier summary at the head, which the overlay is joined to: the marker
// in its place carries the overlay.
func TestViewWithinKeepsOverlay(t *testing.T) {
	c := contextOf(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	c.SetSystemPromptOverlay("OVERLAY-TEXT")
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) {
		return nous.SystemMessage("summary " + words(10)), nil
	})
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(s), nous.WithSummaryReserve(20))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(40)), nous.UserMessage(words(40)), nous.AssistantMessage("x"), nous.UserMessage("q2")))
	if !strings.Contains(view(c)[0].Content, "OVERLAY-TEXT") {
		t.Fatal("setup: overlay not at the head")
	}
	v, err := c.ViewWithin(count(c) - 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range v {
		if strings.Contains(m.Content, "OVERLAY-TEXT") {
			return
		}
	}
	t.Fatalf("ViewWithin dropped the system-prompt overlay: view starts %q", v[0].Content)
}

// C8: ViewWithin's view is within the budget also when the range starts
// with an earlier summary carrying the overlay, which then goes on the
// marker (ApproxCounter rounds per message: a token more there).
func TestViewWithinOverlaidMarkerFitsLargerBudgets(t *testing.T) {
	c := contextOf(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("word wo"), nil })
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(s), nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q2")))
	c.SetSystemPromptOverlay("word ")
	failed := 0 // the largest budget ViewWithin found too small
	for b := count(c); b > 0; b-- {
		v, err := c.ViewWithin(b)
		if err == nil && cost(v) > b {
			t.Fatalf("ViewWithin(%d) returned a view of %d tokens: %v", b, cost(v), roles(v))
		}
		switch {
		case err != nil && failed == 0:
			failed = b
		case err == nil && failed > 0:
			t.Fatalf("ViewWithin(%d) fits, ViewWithin(%d) does not: a larger budget must fit too", b, failed)
		}
	}
}

// C8: ViewWithin counts the marker it puts in ("[2 earlier messages
// omitted]"), not one for the whole view: over 9,999 messages, a budget
// the smallest valid view fits exactly gets that view.
func TestViewWithinCountsItsOwnMarker(t *testing.T) {
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage(words(50)), nous.AssistantMessage(words(50)), nous.UserMessage("go"))
	for range 10000 {
		mustDo(t, c.AddMessage(nous.AssistantMessage("step")))
	}
	want := c.Clone()
	mustDo(t, want.ReplaceMessageRange(1, 2, nous.SystemMessage("[2 earlier messages omitted]")))
	budget := count(want)
	v, err := c.ViewWithin(budget)
	if err != nil {
		t.Fatalf("ViewWithin(%d): %v, but its own view of %d messages costs %d <= %d", budget, err, len(v), cost(v), budget)
	}
}

// C8/C3: ViewWithin fits every budget the view it returns at a larger one
// fits, also when the cut starts the view and the overlay is joined to the
// marker (a previous summary at the head).
func TestViewWithinFitsBudgetsItsViewFits(t *testing.T) {
	sum := nous.SystemMessage("an earlier summary " + words(10))
	sum.Metadata = map[string]any{nous.MetadataSummary: true}
	c := contextOf(t, sum, nous.UserMessage("u1 "+words(50)), nous.AssistantMessage("a1 "+words(50)), nous.UserMessage("u2"))
	c.SetSystemPromptOverlay("overlay text")
	var last []nous.Message
	for b := count(c) - 1; b > 0; b-- {
		v, err := c.ViewWithin(b)
		if err == nil {
			if need := cost(v); need > b {
				t.Fatalf("budget %d: view costs %d", b, need)
			}
			last = v
			continue
		}
		if last != nil && cost(last) <= b {
			t.Fatalf("ViewWithin(%d) = %v, but the view %v it returned at budget %d costs %d tokens", b, err, roles(last), b+1, cost(last))
		}
		return
	}
}
