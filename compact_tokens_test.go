package nous_test

import (
	"math"
	"slices"
	"testing"

	"github.com/nous-go/nous"
)

// ifaceCounter is of a comparable struct type, but a map in its interface
// field makes == on two of them panic.
type ifaceCounter struct{ vocab any }

func (ifaceCounter) CountTokens(m nous.Message) int { return nous.ApproxCounter{}.CountTokens(m) }

// A counter that == cannot compare is planned with, twice, without a panic.
func TestPlanCounterThatCannotBeCompared(t *testing.T) {
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage(words(50)), nous.AssistantMessage(words(50)), nous.UserMessage("q"))
	tc := ifaceCounter{vocab: map[string]int{"a": 1}}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("a second plan with the counter panicked: %v", r)
		}
	}()
	_, _ = c.PlanCompaction(100, nous.WithTokenCounter(tc))
	_, _ = c.PlanCompaction(100, nous.WithTokenCounter(tc))
}

// hugeCounter counts a message "huge" as over MaxInt32 tokens.
type hugeCounter struct{}

func (hugeCounter) CountTokens(m nous.Message) int {
	if m.Content == "huge" {
		return 1<<32 + 7
	}
	return nous.ApproxCounter{}.CountTokens(m)
}

// A count over MaxInt32 is never kept cut to 32 bits: after a change that
// makes the view indexed again from the kept counts, the plan is a fresh
// copy's.
func TestPlanCountOverInt32FromCache(t *testing.T) {
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage("huge"), nous.AssistantMessage("a"), nous.UserMessage("q"), nous.AssistantMessage("b"))
	opt := nous.WithTokenCounter(hugeCounter{})
	p1, err := c.PlanCompaction(1000, opt)
	if err != nil || len(p1.Dropped) == 0 {
		t.Fatalf("first plan: %v %+v", err, p1)
	}
	mustDo(t, c.ReplaceMessage(4, nous.AssistantMessage("c"))) // not an append: the view is indexed again
	p2, err2 := c.PlanCompaction(1000, opt)
	want, werr := c.Clone().PlanCompaction(1000, opt)
	if p2.TokensBefore != want.TokensBefore || (err2 == nil) != (werr == nil) || len(p2.Dropped) != len(want.Dropped) {
		t.Fatalf("planned again: before=%d dropped=%d err=%v; a fresh copy: before=%d dropped=%d err=%v",
			p2.TokensBefore, len(p2.Dropped), err2, want.TokensBefore, len(want.Dropped), werr)
	}
}

// saturatingCounter answers math.MaxInt for what it cannot price.
type saturatingCounter struct{}

func (saturatingCounter) CountTokens(m nous.Message) int {
	if len(m.Parts) > 0 { // an attachment this counter cannot price
		return math.MaxInt
	}
	return nous.ApproxCounter{}.CountTokens(m)
}

// C3: sums of counts never wrap: a view holding a message of MaxInt tokens
// never fits.
func TestPlanSaturatedCountNeverFits(t *testing.T) {
	img := nous.UserMessage("")
	img.Parts = []nous.ContentPart{{Type: nous.PartImageURL, Content: "https://example.com/huge.tiff"}}
	c := contextOf(t, nous.SystemMessage("s"), img, nous.AssistantMessage("a"), nous.UserMessage("q"))
	opts := []nous.CompactOption{nous.WithTokenCounter(saturatingCounter{}), nous.WithReserve(100)}
	p, err := c.PlanCompaction(1000, opts...)
	if err == nil && len(p.Dropped) == 0 {
		t.Fatalf("PlanCompaction says the view fits 1000 tokens: TokensBefore %d", p.TokensBefore)
	}
	if v, err := c.ViewWithin(1000, opts...); err == nil && slices.ContainsFunc(v, func(m nous.Message) bool { return len(m.Parts) > 0 }) {
		t.Fatalf("ViewWithin keeps a message of MaxInt tokens in a view within 1000")
	}
}
