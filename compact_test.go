package nous_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

var quietLog = slog.New(slog.DiscardHandler)

// count is what ApproxCounter says of the view, overlay included.
func count(c *nous.Context) int { return cost(c.Messages()) }

// view returns c's view.
func view(c *nous.Context) []nous.Message { return c.Messages() }

// same reports whether two messages are the same for these tests.
func same(a, b nous.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		slices.EqualFunc(a.ToolCalls, b.ToolCalls, func(x, y nous.ToolCall) bool { return x.ID == y.ID })
}

// fixed is a summarizer that returns text, and counts its calls.
type fixed struct {
	text  string
	calls int
	got   []nous.Message
}

func (f *fixed) Summarize(_ context.Context, dropped []nous.Message) (nous.Message, error) {
	f.calls++
	f.got = dropped
	return nous.SystemMessage(f.text), nil
}

// turns returns a context of n turns: a user question, an assistant
// message with a call, its result, an answer; each about 40 tokens.
func turns(t *testing.T, n int) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quietLog))
	mustDo(t, c.AddMessage(nous.SystemMessage("You are a careful assistant.")))
	for i := range n {
		call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "lookup", Arguments: []byte(`{"q":"something"}`)}
		mustDo(t, c.AddMessages(nous.UserMessage(fmt.Sprintf("question %d about something long enough", i)),
			nous.AssistantMessage("", call), nous.ToolMessage(call.ID, call.Name, "a result of some length"),
			nous.AssistantMessage(fmt.Sprintf("answer %d, with some words", i))))
	}
	return c
}

// contextOf returns a context holding msgs.
func contextOf(t *testing.T, msgs ...nous.Message) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quietLog))
	mustDo(t, c.AddMessages(msgs...))
	return c
}

// words returns n words, about n*5/4 tokens.
func words(n int) string { return strings.Repeat("word ", n) }

// roles sums v up for a failure message: each message's role and the start
// of its content.
func roles(v []nous.Message) []string {
	var out []string
	for _, m := range v {
		out = append(out, string(m.Role)+":"+m.Content[:min(len(m.Content), 8)])
	}
	return out
}

// cost is what ApproxCounter says of v.
func cost(v []nous.Message) int {
	n := 0
	for _, m := range v {
		n += nous.ApproxCounter{}.CountTokens(m)
	}
	return n
}

// C1: parallel calls spread over several assistant messages are one group,
// kept or replaced whole; a dangling call does not block later cuts.
func TestCompactToolGroups(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLog))
	a, b := nous.ToolCall{ID: "a", Name: "f"}, nous.ToolCall{ID: "b", Name: "f"}
	dangling := nous.ToolCall{ID: "never", Name: "f"}
	mustDo(t, c.AddMessages(
		nous.UserMessage(strings.Repeat("old question ", 20)),
		nous.AssistantMessage("", dangling), // never answered
		nous.UserMessage(strings.Repeat("another ", 20)),
		nous.AssistantMessage("", a), nous.AssistantMessage("", b), // one group of two
		nous.ToolMessage("a", "f", strings.Repeat("ra ", 40)), nous.ToolMessage("b", "f", strings.Repeat("rb ", 40)),
		nous.AssistantMessage("done"),
		nous.UserMessage("now"),
	))
	total := count(c)
	for budget := total; budget > 0; budget -= 3 {
		d := c.Clone()
		p, err := d.PlanCompaction(budget, nous.WithSummaryReserve(10))
		if errors.Is(err, nous.ErrOverBudget) {
			continue
		}
		mustDo(t, err)
		if len(p.Dropped) == 0 {
			continue
		}
		// The group a, b, their results: all in the range or none.
		in := 0
		for i := 3; i <= 6; i++ {
			if i >= p.First && i <= p.Last {
				in++
			}
		}
		if in != 0 && in != 4 {
			t.Fatalf("budget %d: the range %d..%d splits the group of calls a, b", budget, p.First, p.Last)
		}
		if p.Last >= 8 {
			t.Fatalf("budget %d: the range %d..%d takes the active turn", budget, p.First, p.Last)
		}
		mustDo(t, d.ApplyCompaction(p, nous.SystemMessage("s")))
	}
}

// C2: the result is the leading system messages, the summary, the kept
// suffix, by one replace event; the originals stay in the log.
func TestCompactShape(t *testing.T) {
	c := turns(t, 10)
	before, events := view(c), c.Log().Len()
	f := &fixed{text: "summary of the early turns"}
	p, err := c.Compact(context.Background(), count(c)/2, nous.WithSummarizer(f), nous.WithSummaryReserve(20))
	mustDo(t, err)
	after := view(c)
	want := append(append(append([]nous.Message{}, before[:p.First]...), nous.SystemMessage(f.text)), before[p.Last+1:]...)
	if !slices.EqualFunc(after, want, same) || p.First != 1 {
		t.Fatalf("view after compaction is not prefix + summary + suffix (range %d..%d)", p.First, p.Last)
	}
	if c.Log().Len() != events+1 {
		t.Fatalf("the log grew by %d events, want 1 replace event", c.Log().Len()-events)
	}
	if !slices.EqualFunc(f.got, before[p.First:p.Last+1], same) {
		t.Fatal("the summarizer did not get exactly the range")
	}
	if !after[1].CreatedAt.Equal(before[p.First].CreatedAt) {
		t.Fatal("the summary is not stamped with the first dropped message's time")
	}
}

// C3: fits means the counted view plus the reserve within the budget; a
// view that fits is left alone without calling the summarizer; a summary
// that does not fit changes nothing; a larger budget never moves the cut
// later; a view whose mandatory part does not fit is ErrOverBudget.
func TestCompactBudget(t *testing.T) {
	c := turns(t, 8)
	total := count(c)
	f := &fixed{text: "s"}
	p, err := c.Compact(context.Background(), total, nous.WithSummarizer(f))
	mustDo(t, err)
	if len(p.Dropped) != 0 || f.calls != 0 || p.TokensBefore != total {
		t.Fatalf("a view that fits: plan %+v, %d summarizer calls", p, f.calls)
	}
	if p, err := c.PlanCompaction(total+9, nous.WithReserve(10), nous.WithSummaryReserve(5)); err != nil || len(p.Dropped) == 0 {
		t.Fatalf("the reserve is not counted: a view one token over the budget with it: %v, %d dropped", err, len(p.Dropped))
	}
	mustDo(t, c.ApplyCompaction(nous.CompactPlan{}, nous.SystemMessage("ignored")))
	if count(c) != total {
		t.Fatal("applying the zero plan changed the view")
	}
	lastCut := len(view(c))
	for budget := total / 4; budget <= total; budget += 7 {
		p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(16))
		if errors.Is(err, nous.ErrOverBudget) {
			continue
		}
		mustDo(t, err)
		if len(p.Dropped) == 0 {
			break
		}
		if p.Last+1 > lastCut {
			t.Fatalf("budget %d cuts at %d, after the cut at %d of a smaller budget", budget, p.Last+1, lastCut)
		}
		lastCut = p.Last + 1
		if p.TokensAfter > budget {
			t.Fatalf("budget %d: the plan's view costs %d", budget, p.TokensAfter)
		}
	}
	before := serialized(t, c)
	big := &fixed{text: strings.Repeat("a very long summary ", 500)}
	if _, err := c.Compact(context.Background(), total/2, nous.WithSummarizer(big)); !errors.Is(err, nous.ErrOverBudget) {
		t.Fatalf("a summary over the budget: %v", err)
	}
	if !bytes.Equal(serialized(t, c), before) {
		t.Fatal("a summary over the budget changed the context")
	}
	if _, err := c.PlanCompaction(10); !errors.Is(err, nous.ErrOverBudget) {
		t.Fatalf("a budget below the active turn: %v", err)
	}
}

// C3: the reserve is counted when planning, not only when applying: with
// WithReserve(r), the range planned into b is the one planned into b-r
// without it, the plan leaves its TokensAfter plus r within b, and Compact,
// with a summary as large as its reserve, fits.
func TestPlanLeavesRoomForReserve(t *testing.T) {
	c := turns(t, 10)
	const reserve, summaryReserve = 37, 16
	summary := nous.SystemMessage(strings.Repeat("s", 4*(summaryReserve-nous.ApproxMessageTokens)-len(nous.RoleSystem)))
	if n := (nous.ApproxCounter{}).CountTokens(summary); n != summaryReserve {
		t.Fatalf("setup: the summary costs %d tokens, not %d", n, summaryReserve)
	}
	compacted := 0
	for b := reserve; b <= count(c)+reserve; b += 5 {
		with, err := c.PlanCompaction(b, nous.WithReserve(reserve), nous.WithSummaryReserve(summaryReserve))
		without, werr := c.PlanCompaction(b-reserve, nous.WithSummaryReserve(summaryReserve))
		if (err == nil) != (werr == nil) || with.First != without.First || with.Last != without.Last || with.TokensAfter != without.TokensAfter {
			t.Fatalf("budget %d with a reserve of %d: %d..%d (%d tokens, %v); budget %d without: %d..%d (%d tokens, %v)",
				b, reserve, with.First, with.Last, with.TokensAfter, err, b-reserve, without.First, without.Last, without.TokensAfter, werr)
		}
		if err != nil || len(with.Dropped) == 0 {
			continue
		}
		compacted++
		if with.TokensAfter+reserve > b {
			t.Fatalf("budget %d: the plan leaves %d tokens and the reserve of %d", b, with.TokensAfter, reserve)
		}
		d := c.Clone()
		if _, err := d.Compact(context.Background(), b, nous.WithReserve(reserve), nous.WithSummaryReserve(summaryReserve),
			nous.WithSummarizer(&fixed{text: summary.Content})); err != nil {
			t.Fatalf("budget %d: a summary within its reserve: %v", b, err)
		}
		if n := count(d); n+reserve > b {
			t.Fatalf("budget %d: the compacted view costs %d, with the reserve of %d", b, n, reserve)
		}
	}
	if compacted == 0 {
		t.Fatal("no budget compacted the view")
	}
}

// C4: the active turn is kept (the last user turns, WithKeepTurns), unless
// WithSplitActiveTurn, which cuts inside it after its user message and
// never between a call and its results.
func TestCompactActiveTurn(t *testing.T) {
	c := turns(t, 6)
	msgs := view(c)
	lastUser := len(msgs) - 4
	p, err := c.PlanCompaction(count(c)*2/3, nous.WithKeepTurns(2), nous.WithSummaryReserve(16))
	mustDo(t, err)
	if p.Last >= lastUser-4 {
		t.Fatalf("WithKeepTurns(2): the range %d..%d reaches the last two turns (from %d)", p.First, p.Last, lastUser-4)
	}
	// One long turn: only a split can make room.
	long := nous.NewContext(nous.WithLogger(quietLog))
	mustDo(t, long.AddMessage(nous.UserMessage("do a long task")))
	for i := range 20 {
		call := nous.ToolCall{ID: fmt.Sprint("s", i), Name: "step"}
		mustDo(t, long.AddMessages(nous.AssistantMessage("", call), nous.ToolMessage(call.ID, "step", strings.Repeat("output ", 30))))
	}
	budget := count(long) / 2
	if _, err := long.PlanCompaction(budget); !errors.Is(err, nous.ErrOverBudget) {
		t.Fatalf("one long turn without a split: %v", err)
	}
	p, err = long.PlanCompaction(budget, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(20))
	mustDo(t, err)
	if p.First != 1 || (p.Last-p.First)%2 != 1 {
		t.Fatalf("a split of the active turn: range %d..%d (it keeps the user message and takes whole call groups)", p.First, p.Last)
	}
	mustDo(t, long.ApplyCompaction(p, nous.SystemMessage("steps so far")))
	mustDo(t, long.CheckToolPairing())
	if v := view(long); v[0].Content != "do a long task" {
		t.Fatal("the split lost the turn's user message")
	}
}

// C5: a summarizer that fails, or a summary that is empty, a tool message
// or carries calls, changes nothing.
func TestCompactBadSummaries(t *testing.T) {
	c := turns(t, 6)
	budget := count(c) / 2
	boom := errors.New("model down")
	for name, s := range map[string]nous.SummarizerFunc{
		"an error": func(context.Context, []nous.Message) (nous.Message, error) { return nous.Message{}, boom },
		"empty":    func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage(""), nil },
		"a tool role": func(context.Context, []nous.Message) (nous.Message, error) {
			return nous.ToolMessage("x", "f", "s"), nil
		},
		"tool calls": func(context.Context, []nous.Message) (nous.Message, error) {
			return nous.AssistantMessage("s", nous.ToolCall{ID: "x", Name: "f"}), nil
		},
		"a scribbler": func(_ context.Context, d []nous.Message) (nous.Message, error) {
			d[0].Content = "scribbled"
			return nous.Message{}, boom
		},
	} {
		before := serialized(t, c)
		if _, err := c.Compact(context.Background(), budget, nous.WithSummarizer(s)); err == nil {
			t.Errorf("%s: Compact succeeded", name)
		}
		if !bytes.Equal(serialized(t, c), before) {
			t.Errorf("%s: a refused summary changed the context", name)
		}
	}
}

// C6: a plan made, then messages added: applying it keeps them; a plan
// whose range changed, or whose fields were edited, is ErrConflict.
func TestCompactStalePlans(t *testing.T) {
	c := turns(t, 6)
	budget := count(c) * 2 / 3
	p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.AddMessage(nous.UserMessage("added meanwhile")))
	mustDo(t, c.ApplyCompaction(p, nous.SystemMessage("s")))
	if v := view(c); v[len(v)-1].Content != "added meanwhile" {
		t.Fatal("a message added while summarizing was lost")
	}
	for name, change := range map[string]func(c *nous.Context, p *nous.CompactPlan){
		"a message in the range replaced": func(c *nous.Context, p *nous.CompactPlan) {
			mustDo(t, c.ReplaceMessage(p.Last, nous.AssistantMessage("changed")))
		},
		"First edited":      func(_ *nous.Context, p *nous.CompactPlan) { p.First++ },
		"Last edited":       func(_ *nous.Context, p *nous.CompactPlan) { p.Last-- },
		"Dropped shortened": func(_ *nous.Context, p *nous.CompactPlan) { p.Dropped = p.Dropped[1:] },
		"Dropped swapped for a slice of its length": func(_ *nous.Context, p *nous.CompactPlan) {
			p.Dropped = slices.Repeat([]nous.Message{nous.UserMessage("not planned")}, len(p.Dropped))
		},
		"Dropped swapped for its copy": func(_ *nous.Context, p *nous.CompactPlan) { p.Dropped = slices.Clone(p.Dropped) },
		"TokensAfter edited":           func(_ *nous.Context, p *nous.CompactPlan) { p.TokensAfter-- },
		"TokensBefore edited":          func(_ *nous.Context, p *nous.CompactPlan) { p.TokensBefore++ },
	} {
		c := turns(t, 6)
		p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(10))
		mustDo(t, err)
		change(c, &p)
		before := serialized(t, c)
		if err := c.ApplyCompaction(p, nous.SystemMessage("s")); !errors.Is(err, nous.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", name, err)
		}
		if !bytes.Equal(serialized(t, c), before) {
			t.Errorf("%s: a refused plan changed the context", name)
		}
	}
	// A summarizer that adds a message itself.
	c = turns(t, 6)
	adder := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) {
		return nous.SystemMessage("s"), c.AddMessage(nous.UserMessage("from the summarizer"))
	})
	_, err = c.Compact(context.Background(), budget, nous.WithSummarizer(adder), nous.WithSummaryReserve(10))
	mustDo(t, err)
	if v := view(c); v[len(v)-1].Content != "from the summarizer" {
		t.Fatal("the summarizer's own message was lost")
	}
}

// C7: compacting again, after a JSON round trip and a store round trip,
// never orphans anything.
func TestCompactRepeatable(t *testing.T) {
	c := turns(t, 20)
	ctx := context.Background()
	s := storetest.NewMemory()
	for round, budget := range []int{count(c) * 3 / 4, count(c) / 2, count(c) / 3} {
		_, err := c.Compact(ctx, budget, nous.WithSummaryReserve(20))
		mustDo(t, err)
		mustDo(t, c.CheckToolPairing())
		data := serialized(t, c)
		c, err = nous.DeserializeWithLogger(data, quietLog)
		mustDo(t, err)
		if round == 1 {
			mustDo(t, c.Save(ctx, s))
			if c, err = nous.Load(ctx, s, c.Log().ID()); err != nil {
				t.Fatal(err)
			}
		}
		mustDo(t, c.CheckToolPairing())
	}
}

// C8: ViewWithin gives a valid view within the budget, with a marker,
// without changing the context; over budget, the smallest valid view.
func TestViewWithin(t *testing.T) {
	c := turns(t, 10)
	before := serialized(t, c)
	budget := count(c) / 2
	v, err := c.ViewWithin(budget)
	mustDo(t, err)
	if !bytes.Equal(serialized(t, c), before) {
		t.Fatal("ViewWithin changed the context")
	}
	if n := cost(v); n > budget || !strings.Contains(v[1].Content, "earlier messages omitted") {
		t.Fatalf("ViewWithin: %d tokens for a budget of %d, second message %q", n, budget, v[1].Content)
	}
	v, err = c.ViewWithin(5)
	if !errors.Is(err, nous.ErrOverBudget) {
		t.Fatalf("ViewWithin of 5 tokens: %v", err)
	}
	all := view(c)
	if len(v) != 1+1+4 || v[0].Role != nous.RoleSystem || !same(v[2], all[len(all)-4]) {
		t.Fatalf("the smallest valid view is %d messages, starting %q", len(v), v[0].Content)
	}
	v[2].Content = "the caller's"
	if view(c)[len(all)-4].Content == "the caller's" {
		t.Fatal("ViewWithin's slice shares with the context")
	}
}

// negCounter counts below zero.
type negCounter struct{}

func (negCounter) CountTokens(m nous.Message) int { return -len(m.Content) }

// Budgets of zero and below, empty views, views of system messages alone,
// negative reserves and counts: no panic.
func TestCompactOddInputsNoPanic(t *testing.T) {
	for _, b := range []int{-1 << 62, -1, 0, 1} {
		for _, c := range []*nous.Context{nous.NewContext(), contextOf(t, nous.SystemMessage("s")), turns(t, 3)} {
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

// C11: ErrOverBudget says what cannot fit: the view index, role and count
// of the largest message that must be kept, and what would help.
func TestCompactOverBudgetNamesLargestKept(t *testing.T) {
	c := turns(t, 4)
	call := nous.ToolCall{ID: "big", Name: "read_file"}
	big := nous.ToolMessage(call.ID, call.Name, words(400))
	mustDo(t, c.AddMessages(nous.UserMessage("read it"), nous.AssistantMessage("", call), big))
	want := fmt.Sprintf("message %d (tool, %d tokens)", c.Len()-1, nous.ApproxCounter{}.CountTokens(big))
	_, perr := c.PlanCompaction(200)
	_, verr := c.ViewWithin(200)
	for _, err := range []error{perr, verr} {
		if !errors.Is(err, nous.ErrOverBudget) || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "WithToolResultLimit") || !strings.Contains(err.Error(), "WithSplitActiveTurn") {
			t.Errorf("%v: want ErrOverBudget naming %s and what would help", err, want)
		}
	}
	_, err := c.PlanCompaction(100, nous.WithToolResultLimit(50))
	if !errors.Is(err, nous.ErrOverBudget) || strings.Contains(err.Error(), want) {
		t.Errorf("%v: the result is counted as pruned", err)
	}
	_, err = c.PlanCompaction(200, nous.WithToolResultLimit(1000), nous.WithSplitActiveTurn(true))
	if !errors.Is(err, nous.ErrOverBudget) || strings.Contains(err.Error(), "WithToolResultLimit") || strings.Contains(err.Error(), "WithSplitActiveTurn") {
		t.Errorf("%v: the options given are no help to name", err)
	}
}

// A view whose kept part fits but not beside the summary reserve is told
// so, rather than sent to look for a large message that is not there.
func TestCompactOverBudgetNamesTheSummaryReserve(t *testing.T) {
	c := turns(t, 4)
	p, err := c.PlanCompaction(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	total := p.TokensBefore
	_, err = c.PlanCompaction(total - 1)
	if !errors.Is(err, nous.ErrOverBudget) || !strings.Contains(err.Error(), fmt.Sprintf("the %d tokens reserved for the summary", nous.DefaultSummaryReserve)) {
		t.Fatalf("budget %d of %d with the default summary reserve: %v", total-1, total, err)
	}
	if _, err := c.PlanCompaction(total-1, nous.WithSummaryReserve(1)); err != nil {
		t.Fatalf("with a reserve of 1: %v", err)
	}
}
