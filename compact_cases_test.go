package nous_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

func rv(t *testing.T, msgs ...nous.Message) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quietLog))
	mustDo(t, c.AddMessages(msgs...))
	return c
}

func words(n int) string { return strings.Repeat("word ", n) }

// A counter of a comparable struct type holding an interface whose dynamic
// value is not comparable (a map, a func): comparing them with == panics.
type ifaceCounter struct{ vocab any }

func (ifaceCounter) CountTokens(m nous.Message) int { return nous.ApproxCounter{}.CountTokens(m) }

func TestCompactCaseCounterWithInterfaceField(t *testing.T) {
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage(words(50)), nous.AssistantMessage(words(50)), nous.UserMessage("q"))
	tc := ifaceCounter{vocab: map[string]int{"a": 1}}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("second plan panicked: %v", r)
		}
	}()
	_, _ = c.PlanCompaction(100, nous.WithTokenCounter(tc))
	_, _ = c.PlanCompaction(100, nous.WithTokenCounter(tc)) // panics: comparing uncomparable type map[string]int
}

// A count above MaxInt32 is cached truncated to int32.
type hugeCounter struct{}

func (hugeCounter) CountTokens(m nous.Message) int {
	if m.Content == "huge" {
		return 1<<32 + 7
	}
	return nous.ApproxCounter{}.CountTokens(m)
}

func TestCompactCaseHugeCountCachedTruncated(t *testing.T) {
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("huge"), nous.AssistantMessage("a"), nous.UserMessage("q"), nous.AssistantMessage("b"))
	opt := nous.WithTokenCounter(hugeCounter{})
	p1, err := c.PlanCompaction(1000, opt)
	if err != nil || len(p1.Dropped) == 0 {
		t.Fatalf("first plan: %v %+v", err, p1)
	}
	mustDo(t, c.ReplaceMessage(4, nous.AssistantMessage("c"))) // any non-append change: reindex from the cache
	p2, err2 := c.PlanCompaction(1000, opt)
	want, werr := c.Clone().PlanCompaction(1000, opt)
	if p2.TokensBefore != want.TokensBefore || (err2 == nil) != (werr == nil) || len(p2.Dropped) != len(want.Dropped) {
		t.Fatalf("cached plan: before=%d dropped=%d err=%v; fresh clone: before=%d dropped=%d err=%v",
			p2.TokensBefore, len(p2.Dropped), err2, want.TokensBefore, len(want.Dropped), werr)
	}
}

// After a compaction whose summary is a system message at the head, the
// overlay is appended to that summary. ViewWithin then replaces index 0 (the
// overlaid summary) with a bare marker: the overlay vanishes from the view.
func TestCompactCaseViewWithinLosesOverlay(t *testing.T) {
	c := rv(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
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

// Same set-up: replacing the overlaid head with a non-system summary moves
// the overlay to a synthetic message of its own, which costs more than the
// plan counted (framing); ApplyCompaction lets a view over budget through.
func TestCompactCaseApplyOverlayModeChangeOverBudget(t *testing.T) {
	base := rv(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	base.SetSystemPromptOverlay("an overlay of some length")
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) {
		return nous.SystemMessage("summary " + words(10)), nil
	})
	_, err := base.Compact(context.Background(), count(base)-20, nous.WithSummarizer(s), nous.WithSummaryReserve(20))
	mustDo(t, err)
	mustDo(t, base.AddMessages(nous.AssistantMessage(words(40)), nous.UserMessage(words(40)), nous.AssistantMessage("x"), nous.UserMessage("q2")))
	summary := nous.AssistantMessage("an assistant-role summary")
	res := nous.ApproxCounter{}.CountTokens(summary)
	for b := 0; b < count(base); b++ {
		d := base.Clone()
		p, err := d.PlanCompaction(b, nous.WithSummaryReserve(res))
		if err != nil || len(p.Dropped) == 0 || p.First != 0 {
			continue
		}
		if err := d.ApplyCompaction(p, summary); err != nil {
			continue
		}
		if n := count(d); n > b {
			t.Fatalf("budget %d: plan said %d, applied view costs %d", b, p.TokensAfter, n)
		}
	}
}

// A change before the plan's range between plan and apply (here the system
// prompt replaced with a longer one) is not noticed: the applied view is
// over the budget.
func TestCompactCaseApplyPrefixChangedOverBudget(t *testing.T) {
	c := turns(t, 6)
	budget := count(c) / 2
	p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.ReplaceMessage(0, nous.SystemMessage(words(200))))
	err = c.ApplyCompaction(p, nous.SystemMessage("sum"))
	if err == nil && count(c) > budget {
		t.Fatalf("ApplyCompaction succeeded, view costs %d > budget %d", count(c), budget)
	}
}

// A system prompt the owner edited with ReplaceMessage is a replacement, so
// the planner takes it for an earlier summary and compacts it away (C2:
// leading system messages are kept verbatim).
func TestCompactCaseEditedSystemPromptCompactedAway(t *testing.T) {
	c := turns(t, 6)
	mustDo(t, c.ReplaceMessage(0, nous.SystemMessage("You are a careful assistant. Updated rules.")))
	_, err := c.Compact(context.Background(), count(c)/2, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if v := view(c); v[0].Content != "You are a careful assistant. Updated rules." {
		t.Fatalf("the system prompt was compacted: view starts %q", v[0].Content)
	}
}

// Calls spread over two assistant messages with one ID: A(x) A(x) T(x) T(x)
// is one group; the planner binds both results to the second call and cuts
// between the two assistant messages, leaving two results for one call.
func TestCompactCaseDuplicateIDSpreadGroupSplit(t *testing.T) {
	x := nous.ToolCall{ID: "call_0", Name: "f"}
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("u1"),
		nous.AssistantMessage(words(100), x), nous.AssistantMessage("", x),
		nous.ToolMessage("call_0", "f", "r1"), nous.ToolMessage("call_0", "f", "r2"),
		nous.AssistantMessage("done"), nous.UserMessage("u2"), nous.AssistantMessage("a2"))
	v, err := c.ViewWithin(count(c) - 90)
	mustDo(t, err)
	calls, results := 0, 0
	for _, m := range v {
		calls += len(m.ToolCalls)
		if m.Role == nous.RoleTool {
			results++
		}
	}
	if calls != results {
		t.Fatalf("cut inside a call group: %d calls, %d results kept: %v", calls, results, roles(v))
	}
}

func roles(v []nous.Message) []string {
	var out []string
	for _, m := range v {
		out = append(out, string(m.Role)+":"+m.Content[:min(len(m.Content), 8)])
	}
	return out
}

// Signed reasoning stored as its own assistant message before the call
// (Anthropic's adapter merges consecutive assistant messages into one turn):
// a cut between them drops the thinking that belongs to the call.
func TestCompactCaseSignedReasoningSeparated(t *testing.T) {
	x := nous.ToolCall{ID: "c1", Name: "f"}
	think := nous.AssistantMessage("")
	think.Parts = []nous.ContentPart{nous.ThinkingPart(words(100), "sig")}
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("u1"), think, nous.AssistantMessage("", x),
		nous.ToolMessage("c1", "f", "r"), nous.AssistantMessage("done"), nous.UserMessage("u2"))
	v, err := c.ViewWithin(count(c) - 90)
	mustDo(t, err)
	for i, m := range v {
		if len(m.ToolCalls) > 0 && (i == 0 || len(v[i-1].Parts) == 0) {
			t.Fatalf("call kept without the signed thinking before it: %v", roles(v))
		}
	}
}

// With WithKeepTurns(2) and a split, the range starts after the older user
// message and can swallow the latest one, the request being answered.
func TestCompactCaseSplitDropsLatestUserMessage(t *testing.T) {
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("old question"), nous.AssistantMessage(words(100)),
		nous.UserMessage("CURRENT QUESTION"), nous.AssistantMessage(words(100)), nous.AssistantMessage("tail"))
	for budget := count(c); budget > 0; budget -= 5 {
		d := c.Clone()
		_, err := d.Compact(context.Background(), budget, nous.WithKeepTurns(2), nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10))
		if errors.Is(err, nous.ErrOverBudget) {
			continue
		}
		mustDo(t, err)
		kept := false
		for _, m := range view(d) {
			kept = kept || m.Content == "CURRENT QUESTION"
		}
		if !kept {
			t.Fatalf("budget %d: the latest user message was compacted: %v", budget, roles(view(d)))
		}
	}
}

// A plan made on one context applies to another whose log indices match.
func TestCompactCasePlanAppliedToOtherContext(t *testing.T) {
	a, b := turns(t, 6), turns(t, 6)
	p, err := a.PlanCompaction(count(a)/2, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if err := b.ApplyCompaction(p, nous.SystemMessage("summary of a")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a plan of another context applied: %v", err)
	}
}

// A dangling call ending the range gets its result inserted (by
// PatchDanglingToolCalls) right after the range: the plan is stale but the
// error is ErrUnpaired, not ErrConflict.
func TestCompactCasePatchAfterRangeNotConflict(t *testing.T) {
	x := nous.ToolCall{ID: "d1", Name: "f"}
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("u1"), nous.AssistantMessage(words(60), x),
		nous.UserMessage("u2"), nous.AssistantMessage("a2"))
	p, err := c.PlanCompaction(count(c)-40, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if p.Last != 2 {
		t.Skipf("range %d..%d", p.First, p.Last)
	}
	if n := c.PatchDanglingToolCalls(); n != 1 {
		t.Fatal("no patch")
	}
	if err := c.ApplyCompaction(p, nous.SystemMessage("sum")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("stale plan: %v", err)
	}
}

// Budgets <= 0, empty views, system-only views, negative counts: no panic.
type negCounter struct{}

func (negCounter) CountTokens(m nous.Message) int { return -len(m.Content) }

func TestCompactCaseNoPanics(t *testing.T) {
	for _, b := range []int{-1 << 62, -1, 0, 1} {
		for _, c := range []*nous.Context{nous.NewContext(), rv(t, nous.SystemMessage("s")), turns(t, 3)} {
			for _, ov := range []string{"", "ov"} {
				c.SetSystemPromptOverlay(ov)
				_, _ = c.PlanCompaction(b)
				_, _ = c.ViewWithin(b)
				_, _ = c.Compact(context.Background(), b, nous.WithSplitActiveTurn(true))
				_, _ = c.PlanCompaction(b, nous.WithTokenCounter(negCounter{}), nous.WithReserve(-5), nous.WithSummaryReserve(-5))
				_, _ = c.ViewWithin(b, nous.WithTokenCounter(negCounter{}))
			}
		}
	}
}
