package nous_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
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
			if werr != nil { // the target cannot be met: the smallest view a plan can make, within the budget
				want, werr = smallestPlan(c, budget, opts()...)
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
// fits the budget rather than failing, cutting all it may before the
// active turn.
func TestPlanWithTargetBelowWhatMustBeKept(t *testing.T) {
	c := turns(t, 6)
	mustDo(t, c.AddMessage(nous.UserMessage(words(200)))) // an active turn of some 250 tokens
	budget := count(c) - 100
	p, err := c.PlanCompaction(budget, nous.WithTarget(50), nous.WithSummaryReserve(16))
	mustDo(t, err)
	if len(p.Dropped) == 0 || p.TokensAfter > budget || p.First != 1 || p.Last != c.Len()-2 {
		t.Fatalf("plan %d..%d of %d tokens for a budget of %d; want 1..%d", p.First, p.Last, p.TokensAfter, budget, c.Len()-2)
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

// smallestPlan returns the plan, without a target, into the smallest
// budget up to most that anything fits: the smallest view a plan can make,
// or the error of most when nothing fits it.
func smallestPlan(c *nous.Context, most int, opts ...nous.CompactOption) (nous.CompactPlan, error) {
	if _, err := c.PlanCompaction(most, opts...); err != nil {
		return nous.CompactPlan{}, err
	}
	least := sort.Search(most, func(b int) bool {
		_, err := c.PlanCompaction(b, opts...)
		return err == nil
	})
	return c.PlanCompaction(least, opts...)
}

// C9: a target that cannot be met cuts as far as the active turn allows.
// For random conversations, options and targets t1 < t2 under a budget,
// the plan for t2 never leaves fewer tokens than the plan for t1 (without
// splitting the active turn, never a longer range either), the two fail
// alike, and one that cannot meet its target is the smallest view a plan
// can make. A Compact right after one that left the view over its target
// calls no summarizer and changes nothing.
func TestCompactTargetMonotoneRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 39))
	runs, unmet := 300, 0
	if nous.Long() {
		runs = 5000
	}
	for run := range runs {
		c := randomConversation(t, r, run%2 == 0)
		opts := []nous.CompactOption{nous.WithSummaryReserve(r.IntN(20)), nous.WithKeepTurns(1 + r.IntN(2)),
			nous.WithSplitActiveTurn(r.IntN(3) == 0), nous.WithReserve(r.IntN(10))}
		if r.IntN(3) == 0 {
			opts = append(opts, nous.WithToolResultLimit(8+r.IntN(20)))
		}
		total := count(c)
		budget := total/2 + r.IntN(total/2+1)
		t1 := 1 + r.IntN(budget)
		t2 := t1 + 1 + r.IntN(budget-t1+1)
		p1, err1 := c.PlanCompaction(budget, append(opts, nous.WithTarget(t1))...)
		p2, err2 := c.PlanCompaction(budget, append(opts, nous.WithTarget(t2))...)
		where := fmt.Sprintf("run %d, %d tokens, budget %d, targets %d and %d", run, total, budget, t1, t2)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: %v and %v", where, err1, err2)
		}
		if err1 != nil {
			continue
		}
		if p2.TokensAfter < p1.TokensAfter {
			t.Fatalf("%s: %d..%d leaves %d tokens, %d..%d for the larger target %d", where, p1.First, p1.Last, p1.TokensAfter, p2.First, p2.Last, p2.TokensAfter)
		}
		if p1.First == p2.First && len(p2.Dropped) > 0 && p2.Last > p1.Last {
			t.Fatalf("%s: the larger target cuts %d..%d, the smaller %d..%d", where, p2.First, p2.Last, p1.First, p1.Last)
		}
		if len(p1.Dropped) == 0 || p1.TokensAfter <= t1 {
			continue
		}
		unmet++
		want, err := smallestPlan(c, budget, opts...)
		if err != nil || want.First != p1.First || want.Last != p1.Last || want.TokensAfter != p1.TokensAfter {
			t.Fatalf("%s: target %d unmet: %d..%d (%d tokens); the smallest view is %d..%d (%d tokens, %v)", where, t1,
				p1.First, p1.Last, p1.TokensAfter, want.First, want.Last, want.TokensAfter, err)
		}
		d := c.Clone()
		f := &fixed{text: "so far"}
		compact := append(opts, nous.WithTarget(t1), nous.WithSummarizer(f))
		if _, err := d.Compact(context.Background(), budget, compact...); err != nil {
			continue // the real summary does not fit
		}
		before := d.Log().Len()
		if p, err := d.Compact(context.Background(), budget, compact...); err != nil || f.calls != 1 || d.Log().Len() != before {
			t.Fatalf("%s: a second Compact: %v, %d summarizer calls, %d..%d", where, err, f.calls, p.First, p.Last)
		}
	}
	if unmet < runs/20 {
		t.Fatalf("only %d of %d runs had a target they could not meet", unmet, runs)
	}
}

// C9: a target that cannot be met, where pruning alone leaves as few
// tokens as the largest range would, only prunes: no summarizer is called.
func TestCompactTargetUnmetPrunesOnATie(t *testing.T) {
	call := nous.ToolCall{ID: "c1", Name: "lookup", Arguments: []byte(`{}`)}
	old := []nous.Message{nous.UserMessage("an older question"), nous.AssistantMessage("an older answer")}
	c := contextOf(t, append([]nous.Message{nous.SystemMessage("system")}, append(old,
		nous.UserMessage("the question now"), nous.AssistantMessage("", call),
		nous.ToolMessage(call.ID, call.Name, words(200)), nous.AssistantMessage("the answer"))...)...)
	f := &fixed{text: "so far"}
	opts := []nous.CompactOption{nous.WithToolResultLimit(20), nous.WithSummaryReserve(cost(old)), nous.WithTarget(10), nous.WithSummarizer(f)}
	p, err := c.Compact(context.Background(), count(c)-1, opts...)
	mustDo(t, err)
	if len(p.Dropped) != 0 || len(p.Pruned) != 1 || f.calls != 0 {
		t.Fatalf("plan %d..%d, %d pruned, %d summarizer calls; want pruning alone", p.First, p.Last, len(p.Pruned), f.calls)
	}
}

// C9: with turns so large that the active turn leaves no room for the
// target, compacting before every request cuts all it may, so the view
// holds the next turn too: the summarizer runs about every other turn,
// not on every one.
func TestCompactWithTargetAndLargeTurns(t *testing.T) {
	const budget, target, turnsRun = 2000, 500, 40
	c := turns(t, 1)
	f := &fixed{text: "what happened so far"}
	for turn := range turnsRun {
		mustDo(t, c.AddMessages(nous.UserMessage(words(40)), nous.AssistantMessage(words(500)))) // some 690 tokens
		_, err := c.Compact(context.Background(), budget, nous.WithTarget(target), nous.WithSummarizer(f), nous.WithSummaryReserve(16))
		mustDo(t, err)
		if n := count(c); n > budget {
			t.Fatalf("turn %d: %d tokens after compacting into %d", turn, n, budget)
		}
	}
	t.Logf("summarizer calls in %d turns: %d", turnsRun, f.calls)
	if f.calls == 0 || f.calls > turnsRun*6/10 {
		t.Fatalf("the summarizer was called %d times in %d turns: want 1 to %d", f.calls, turnsRun, turnsRun*6/10)
	}
}
