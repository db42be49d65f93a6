package nous_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nous-go/nous"
)

// ifaceCounter is of a comparable struct type, but a map in its interface
// field makes == on two of them panic.
type ifaceCounter struct{ vocab any }

func (ifaceCounter) CountTokens(m nous.Message) int { return nous.ApproxCounter{}.CountTokens(m) }

// scaledCounter counts a multiple of ApproxCounter: a pointer counter, so
// that two of them are told apart by identity, whatever they count.
type scaledCounter struct{ by int }

func (s *scaledCounter) CountTokens(m nous.Message) int {
	return s.by * nous.ApproxCounter{}.CountTokens(m)
}

// funcCounter is a counter == cannot compare at all.
type funcCounter func(nous.Message) int

func (f funcCounter) CountTokens(m nous.Message) int { return f(m) }

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

// The counts kept between plans are the counter's: a context planned with
// counters in turn (equal values, pointers, counters == cannot compare)
// plans each time as a fresh copy of it does.
func TestPlanCountersInTurnPlanAsAFreshCopy(t *testing.T) {
	double, triple := &scaledCounter{2}, &scaledCounter{3}
	counters := []nous.TokenCounter{nous.ApproxCounter{}, double, triple, &scaledCounter{2},
		ifaceCounter{vocab: map[string]int{}}, ifaceCounter{vocab: 1}, funcCounter(func(m nous.Message) int { return len(m.Content) })}
	r := rand.New(rand.NewPCG(nous.Seed(t), 17))
	c := turns(t, 4)
	for step := range 60 {
		if step%3 == 0 {
			mustDo(t, c.AddMessages(nous.UserMessage(words(1+r.IntN(20))), nous.AssistantMessage(words(1+r.IntN(20)))))
		}
		tc := counters[r.IntN(len(counters))]
		opts := []nous.CompactOption{nous.WithTokenCounter(tc), nous.WithSummaryReserve(8)}
		budget := r.IntN(3 * count(c))
		got, gerr := c.PlanCompaction(budget, opts...)
		want, werr := c.Clone().PlanCompaction(budget, opts...)
		if (gerr == nil) != (werr == nil) || got.First != want.First || got.Last != want.Last ||
			got.TokensBefore != want.TokensBefore || got.TokensAfter != want.TokensAfter {
			t.Fatalf("step %d, counter %T: planned %d..%d (%d, %d, %v), a fresh copy %d..%d (%d, %d, %v)", step, tc,
				got.First, got.Last, got.TokensBefore, got.TokensAfter, gerr, want.First, want.Last, want.TokensBefore, want.TokensAfter, werr)
		}
	}
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
