package nous_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nous-go/nous"
)

// prunable returns a context of n turns whose tool results are long (every
// other one), with the results of a running agent turn at the end.
func prunable(t *testing.T, n int) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quietLog))
	mustDo(t, c.AddMessage(nous.SystemMessage("You are a careful assistant.")))
	for i := range n {
		call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "read_file"}
		out := "short result"
		if i%2 == 0 {
			out = fmt.Sprintf("BEGIN %d ", i) + strings.Repeat("line of a long file\n", 60) + fmt.Sprintf(" END %d", i)
		}
		mustDo(t, c.AddMessages(nous.UserMessage(fmt.Sprint("question ", i)), nous.AssistantMessage("", call),
			nous.ToolMessage(call.ID, call.Name, out), nous.AssistantMessage(fmt.Sprint("answer ", i))))
	}
	return c
}

// tokensOf is what ApproxCounter says of m.
func tokensOf(m nous.Message) int { return nous.ApproxCounter{}.CountTokens(m) }

// checkPruned checks that got is orig pruned to limit tokens: a tool
// message answering the same call, marked, holding the head and the tail
// of orig's content (nothing of them when the marker alone fits) around a
// marker of what was cut.
func checkPruned(t *testing.T, orig, got nous.Message, limit int) {
	t.Helper()
	head, tail, found := strings.Cut(got.Content, "\n[... ")
	if i := strings.Index(tail, " bytes cut ...]\n"); found && i >= 0 {
		tail = tail[i+len(" bytes cut ...]\n"):]
	} else {
		t.Fatalf("a pruned result without its marker: %q", got.Content)
	}
	switch {
	case got.Role != nous.RoleTool || got.ToolCallID != orig.ToolCallID || got.Name != orig.Name:
		t.Fatalf("a pruned result answers %q (%s), not %q", got.ToolCallID, got.Role, orig.ToolCallID)
	case got.Metadata[nous.MetadataPruned] != true:
		t.Fatal("a pruned result is not marked")
	case !strings.HasPrefix(orig.Content, head) || !strings.HasSuffix(orig.Content, tail):
		t.Fatalf("a pruned result is not the head and the tail of the original: %q", got.Content)
	case tokensOf(got) > limit && head+tail != "": // the marker alone may not fit
		t.Fatalf("a pruned result costs %d tokens, over the limit of %d", tokensOf(got), limit)
	case !utf8.ValidString(got.Content):
		t.Fatalf("a pruned result cut inside a character: %q", got.Content)
	}
}

// C10: with WithToolResultLimit, a view over the budget first has its tool
// results over the limit shortened in place, the active turn's too, the
// originals kept in the log; when that alone brings it within the budget,
// nothing is summarized. Pruned results are not pruned again.
func TestCompactPrunesToolResultsOverLimit(t *testing.T) {
	c := prunable(t, 6)
	orig, events := view(c), c.Log().Len()
	const limit = 60
	budget := count(c) - 400
	f := &fixed{text: "summary"}
	p, err := c.Compact(context.Background(), budget, nous.WithToolResultLimit(limit), nous.WithSummarizer(f))
	mustDo(t, err)
	got := view(c)
	if f.calls != 0 || len(p.Dropped) != 0 || len(got) != len(orig) {
		t.Fatalf("pruning was enough, yet %d messages were summarized (%d calls)", len(p.Dropped), f.calls)
	}
	if n := count(c); n > budget {
		t.Fatalf("%d tokens after pruning into %d", n, budget)
	}
	pruned := 0
	for i := range orig {
		if orig[i].Role == nous.RoleTool && tokensOf(orig[i]) > limit {
			checkPruned(t, orig[i], got[i], limit)
			if !strings.HasPrefix(got[i].Content, "BEGIN") || !strings.Contains(got[i].Content, "END") {
				t.Fatalf("a result pruned to %d tokens keeps nothing of its head or its tail: %q", limit, got[i].Content)
			}
			pruned++
		} else if !same(orig[i], got[i]) {
			t.Fatalf("message %d, not a result over the limit, changed: %q", i, got[i].Content)
		}
	}
	if pruned != 3 || len(p.Pruned) != 3 || c.Log().Len() != events+3 {
		t.Fatalf("%d results pruned, %d in the plan, %d events: want 3 of each", pruned, len(p.Pruned), c.Log().Len()-events)
	}
	if data := serialized(t, c); !bytes.Contains(data, []byte("END 4")) || !bytes.Contains(data, []byte(strings.Repeat("line of a long file\\n", 60))) {
		t.Fatal("the originals are not in the log")
	}
	before := serialized(t, c)
	p, err = c.Compact(context.Background(), count(c)-1, nous.WithToolResultLimit(limit/2), nous.WithSummaryReserve(8))
	mustDo(t, err)
	if len(p.Pruned) != 0 {
		t.Fatalf("pruned results pruned again: %v", p.Pruned)
	}
	if len(p.Dropped) == 0 && !bytes.Equal(serialized(t, c), before) {
		t.Fatal("a compaction that pruned and dropped nothing changed the context")
	}
}

// C10 then C2: when pruning is not enough, a range is summarized; the
// summarizer gets its results pruned, and the results kept are pruned in
// place.
func TestCompactPrunesThenSummarizes(t *testing.T) {
	c := prunable(t, 8)
	const limit = 60
	budget := count(c) / 4
	f := &fixed{text: "summary"}
	p, err := c.Compact(context.Background(), budget, nous.WithToolResultLimit(limit), nous.WithSummarizer(f), nous.WithSummaryReserve(16))
	mustDo(t, err)
	if f.calls != 1 || len(p.Dropped) == 0 || len(p.Pruned) == 0 {
		t.Fatalf("%d summarizer calls, %d dropped, %d pruned: want a summary and prunes", f.calls, len(p.Dropped), len(p.Pruned))
	}
	if n := count(c); n > budget {
		t.Fatalf("%d tokens after compacting into %d", n, budget)
	}
	mustDo(t, c.CheckToolPairing())
	inRange := 0
	for _, m := range f.got {
		if m.Role == nous.RoleTool && m.Metadata[nous.MetadataPruned] == true {
			inRange++
		}
		if m.Role == nous.RoleTool && tokensOf(m) > limit {
			t.Fatalf("the summarizer got a result of %d tokens, over the limit", tokensOf(m))
		}
	}
	if inRange == 0 {
		t.Fatal("the summarizer got no pruned result")
	}
	for _, i := range p.Pruned {
		if m := view(c)[i-(len(p.Dropped)-1)]; m.Metadata[nous.MetadataPruned] != true {
			t.Fatalf("the result planned pruned at %d is %q", i, m.Content)
		}
	}
}

// C10 with C3 and C6: PlanCompaction prunes nothing itself; its plan, with
// nothing dropped, prunes when applied (the summary is not read), is
// refused when a result it prunes was replaced or its Pruned edited, and
// leaves alone a view that fits, whatever its results.
func TestApplyCompactionPrunes(t *testing.T) {
	c := prunable(t, 4)
	budget := count(c) - 200
	opt := nous.WithToolResultLimit(60)
	before := serialized(t, c)
	p, err := c.PlanCompaction(budget, opt)
	mustDo(t, err)
	if !bytes.Equal(serialized(t, c), before) || len(p.Pruned) == 0 || len(p.Dropped) != 0 {
		t.Fatalf("PlanCompaction: %d pruned, %d dropped, the context changed: %v", len(p.Pruned), len(p.Dropped), !bytes.Equal(serialized(t, c), before))
	}
	mustDo(t, c.AddMessage(nous.UserMessage("added meanwhile")))
	mustDo(t, c.ApplyCompaction(p, nous.Message{}))
	if n := count(c) - tokensOf(nous.UserMessage("added meanwhile")); n > budget {
		t.Fatalf("%d tokens after the plan, over %d", n, budget)
	}
	for name, change := range map[string]func(c *nous.Context, p *nous.CompactPlan){
		"a result to prune replaced": func(c *nous.Context, p *nous.CompactPlan) {
			m := view(c)[p.Pruned[0]]
			mustDo(t, c.ReplaceMessage(p.Pruned[0], nous.ToolMessage(m.ToolCallID, m.Name, "replaced")))
		},
		"Pruned edited":  func(_ *nous.Context, p *nous.CompactPlan) { p.Pruned = p.Pruned[1:] },
		"Pruned swapped": func(_ *nous.Context, p *nous.CompactPlan) { p.Pruned = append([]int(nil), p.Pruned...) },
	} {
		c := prunable(t, 4)
		p, err := c.PlanCompaction(budget, opt)
		mustDo(t, err)
		change(c, &p)
		before := serialized(t, c)
		if err := c.ApplyCompaction(p, nous.Message{}); !errors.Is(err, nous.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", name, err)
		}
		if !bytes.Equal(serialized(t, c), before) {
			t.Errorf("%s: a refused plan changed the context", name)
		}
	}
	c = prunable(t, 4)
	if p, err := c.PlanCompaction(count(c), opt); err != nil || len(p.Pruned) != 0 {
		t.Fatalf("a view that fits: %v, %d pruned", err, len(p.Pruned))
	}
}

// C10 with C8: ViewWithin prunes in its copy, changing nothing.
func TestViewWithinPrunes(t *testing.T) {
	c := prunable(t, 6)
	orig, before := view(c), serialized(t, c)
	budget := count(c) - 400
	v, err := c.ViewWithin(budget, nous.WithToolResultLimit(60))
	mustDo(t, err)
	if !bytes.Equal(serialized(t, c), before) {
		t.Fatal("ViewWithin changed the context")
	}
	if len(v) != len(orig) || cost(v) > budget {
		t.Fatalf("ViewWithin(%d): %d messages of %d, %d tokens", budget, len(v), len(orig), cost(v))
	}
	for i := range v {
		if v[i].Metadata[nous.MetadataPruned] == true {
			checkPruned(t, orig[i], v[i], 60)
		}
	}
}

// C10: a result is cut between characters, never inside one.
func TestCompactPrunesWholeCharacters(t *testing.T) {
	c := contextOf(t, nous.UserMessage("q"), nous.AssistantMessage("", nous.ToolCall{ID: "x", Name: "f"}))
	long := nous.ToolMessage("x", "f", strings.Repeat("é€😀", 200))
	mustDo(t, c.AddMessages(long, nous.AssistantMessage("done"), nous.UserMessage("next")))
	for limit := 10; limit < 60; limit++ {
		v, err := c.ViewWithin(count(c)-1, nous.WithToolResultLimit(limit))
		mustDo(t, err)
		if v[2].Metadata[nous.MetadataPruned] == true {
			checkPruned(t, long, v[2], limit)
		}
	}
}

// Plans remember what they shortened, for the limit and the counter they
// shortened for: a plan with another limit, or another counter, shortens
// anew, and a plan with the same one shortens the same.
func TestPlansShortenForTheirLimit(t *testing.T) {
	c := prunable(t, 6)
	budget := count(c) / 2
	pruned := func(limit, budget int, opts ...nous.CompactOption) string {
		t.Helper()
		v, err := c.ViewWithin(budget, append(opts, nous.WithToolResultLimit(limit), nous.WithSummaryReserve(8))...)
		mustDo(t, err)
		var b strings.Builder
		for _, m := range v {
			if m.Metadata[nous.MetadataPruned] == true {
				b.WriteString(m.Content)
			}
		}
		if b.Len() == 0 {
			t.Fatalf("limit %d: nothing pruned", limit)
		}
		return b.String()
	}
	a := pruned(20, budget)
	if b := pruned(60, budget); b == a || len(b) <= len(a) {
		t.Fatalf("a plan with a limit of 60 shortened as one with 20 did")
	}
	if again := pruned(20, budget); again != a {
		t.Fatal("a second plan with the same limit shortened differently")
	}
	if other := pruned(20, budget/2, nous.WithTokenCounter(halfCounter{})); other == a {
		t.Fatal("a plan with another counter shortened as the first did")
	}
}

// halfCounter counts half what ApproxCounter does.
type halfCounter struct{}

func (halfCounter) CountTokens(m nous.Message) int { return nous.ApproxCounter{}.CountTokens(m) / 2 }

// A plan holds what it shortens: plans made after it, with another limit
// or of a view that changed, do not change what it prunes when applied.
func TestPlanOutlivesLaterPlans(t *testing.T) {
	c := prunable(t, 6)
	fresh := c.Clone()
	budget := count(c) - 200
	p, err := c.PlanCompaction(budget, nous.WithToolResultLimit(20))
	mustDo(t, err)
	want, err := fresh.PlanCompaction(budget, nous.WithToolResultLimit(20))
	mustDo(t, err)
	if len(p.Pruned) == 0 || len(p.Dropped) != 0 {
		t.Fatalf("the plan prunes %d results and drops %d messages", len(p.Pruned), len(p.Dropped))
	}
	for _, limit := range []int{60, 20, 90} { // each limit indexes the view again
		_, err := c.PlanCompaction(budget, nous.WithToolResultLimit(limit))
		mustDo(t, err)
	}
	mustDo(t, c.AddMessage(nous.UserMessage("added meanwhile")))
	mustDo(t, fresh.AddMessage(nous.UserMessage("added meanwhile")))
	mustDo(t, c.ApplyCompaction(p, nous.Message{}))
	mustDo(t, fresh.ApplyCompaction(want, nous.Message{}))
	got, wantView := view(c), view(fresh)
	for i := range got { // the messages added were added at other times
		got[i].CreatedAt = time.Time{}
	}
	for i := range wantView {
		wantView[i].CreatedAt = time.Time{}
	}
	if !reflect.DeepEqual(got, wantView) {
		t.Fatalf("the plan pruned to\n%v\nwant\n%v", got, wantView)
	}
}
