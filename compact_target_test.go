package nous_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nous-go/nous"
)

// C9: with WithTarget(t), a view over the budget is planned as into t (the
// same range as a plan into t without the option), a view within the
// budget is left alone, and a target at or above the budget is the budget.
func TestPlanWithTargetPlansIntoTarget(t *testing.T) {
	c := turns(t, 12)
	total := count(c)
	opts := func(more ...nous.CompactOption) []nous.CompactOption {
		return append([]nous.CompactOption{nous.WithSummaryReserve(16), nous.WithReserve(5)}, more...)
	}
	if p, err := c.PlanCompaction(total+5, opts(nous.WithTarget(total/2))...); err != nil || len(p.Dropped) != 0 {
		t.Fatalf("a view within the budget, a target below it: %v, %d dropped", err, len(p.Dropped))
	}
	planned := 0
	for budget := total / 4; budget < total+5; budget += 13 {
		for _, target := range []int{budget / 2, budget - 40, budget, budget + 100} {
			got, gerr := c.PlanCompaction(budget, opts(nous.WithTarget(target))...)
			want, werr := c.PlanCompaction(min(target, budget), opts()...)
			if werr != nil { // the target cannot be met: the budget is
				want, werr = c.PlanCompaction(budget, opts()...)
			}
			if (gerr == nil) != (werr == nil) || got.First != want.First || got.Last != want.Last || got.TokensAfter != want.TokensAfter {
				t.Fatalf("budget %d, target %d: %d..%d (%d tokens, %v); want %d..%d (%d tokens, %v)", budget, target,
					got.First, got.Last, got.TokensAfter, gerr, want.First, want.Last, want.TokensAfter, werr)
			}
			if gerr == nil && len(got.Dropped) > 0 {
				planned++
			}
		}
	}
	if planned == 0 {
		t.Fatal("no budget planned a compaction")
	}
}

// C9: when what must be kept fits the budget but not the target, the plan
// fits the budget rather than failing.
func TestPlanWithTargetBelowWhatMustBeKept(t *testing.T) {
	c := turns(t, 6)
	mustDo(t, c.AddMessage(nous.UserMessage(words(200)))) // an active turn of some 250 tokens
	budget := count(c) - 100
	p, err := c.PlanCompaction(budget, nous.WithTarget(50), nous.WithSummaryReserve(16))
	mustDo(t, err)
	if len(p.Dropped) == 0 || p.TokensAfter > budget {
		t.Fatalf("plan %d..%d of %d tokens for a budget of %d", p.First, p.Last, p.TokensAfter, budget)
	}
	if _, err := c.PlanCompaction(100, nous.WithTarget(50)); !errors.Is(err, nous.ErrOverBudget) {
		t.Fatalf("a budget below what must be kept: %v", err)
	}
}

// C9: a conversation that grows by about g tokens a turn, compacted before
// every request into a budget b with a target t, calls the summarizer about
// once every (b-t)/g turns, and every compaction brings the view within t.
func TestCompactWithTargetSummarizesOnceInAWhile(t *testing.T) {
	const budget, target, turnsRun = 2000, 1200, 80
	c := turns(t, 1)
	f := &fixed{text: "what happened so far"}
	grown := 0
	for turn := range turnsRun {
		before := count(c)
		mustDo(t, c.AddMessages(nous.UserMessage(words(40)), nous.AssistantMessage(words(40))))
		grown += count(c) - before
		calls := f.calls
		_, err := c.Compact(context.Background(), budget, nous.WithTarget(target), nous.WithSummarizer(f), nous.WithSummaryReserve(16))
		mustDo(t, err)
		switch n := count(c); {
		case n > budget:
			t.Fatalf("turn %d: %d tokens after compacting into %d", turn, n, budget)
		case f.calls > calls && n > target:
			t.Fatalf("turn %d: a compaction left %d tokens, over the target of %d", turn, n, target)
		}
	}
	g := grown / turnsRun
	if most := turnsRun*g/(budget-target) + 1; f.calls == 0 || f.calls > most {
		t.Fatalf("the summarizer was called %d times in %d turns of %d tokens each: want 1 to %d", f.calls, turnsRun, g, most)
	}
	// Without a target, the same run calls it on almost every turn once
	// the window is full: what the target saves.
	c = turns(t, 1)
	without := &fixed{text: "what happened so far"}
	for range turnsRun {
		mustDo(t, c.AddMessages(nous.UserMessage(words(40)), nous.AssistantMessage(words(40))))
		_, err := c.Compact(context.Background(), budget, nous.WithSummarizer(without), nous.WithSummaryReserve(16))
		mustDo(t, err)
	}
	if without.calls < 3*f.calls {
		t.Fatalf("without a target the summarizer was called %d times, with one %d: the target saves too little", without.calls, f.calls)
	}
	t.Logf("summarizer calls in %d turns: %d with a target of %d in a budget of %d, %d without", turnsRun, f.calls, target, budget, without.calls)
}

// C8 with C9: ViewWithin compacts a view over the budget into the target.
func TestViewWithinWithTarget(t *testing.T) {
	c := turns(t, 12)
	budget := count(c) * 3 / 4
	target := budget / 2
	v, err := c.ViewWithin(budget, nous.WithTarget(target))
	mustDo(t, err)
	if n := cost(v); n > target {
		t.Fatalf("ViewWithin(%d) with a target of %d: %d tokens", budget, target, n)
	}
	if v, err := c.ViewWithin(count(c), nous.WithTarget(target)); err != nil || len(v) != c.Len() {
		t.Fatalf("a view within the budget: %v, %d of %d messages", err, len(v), c.Len())
	}
}
