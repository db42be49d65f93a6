package nous_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

var quietLog = slog.New(slog.DiscardHandler)

// count is what ApproxCounter says of the view, overlay included.
func count(c *nous.Context) int {
	n := 0
	for _, m := range c.All() {
		n += nous.ApproxCounter{}.CountTokens(m)
	}
	return n
}

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
		"First edited":   func(_ *nous.Context, p *nous.CompactPlan) { p.First++ },
		"Last edited":    func(_ *nous.Context, p *nous.CompactPlan) { p.Last-- },
		"Dropped edited": func(_ *nous.Context, p *nous.CompactPlan) { p.Dropped = p.Dropped[1:] },
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
	n := 0
	for _, m := range v {
		n += nous.ApproxCounter{}.CountTokens(m)
	}
	if n > budget || !strings.Contains(v[1].Content, "earlier messages omitted") {
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

// The model-based test: random conversations (parallel calls across
// assistant messages, dangling calls, ghost results, thinking, earlier
// replacements) compacted at random budgets, checking C1-C4 on every
// result, and that the compacted view is the fold of its log after a JSON
// round trip.
func TestCompactModel(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 15))
	runs := 400
	if nous.Long() {
		runs = 20000
	}
	var compacted, over, fit, splits, paired int
	defer func() {
		t.Logf("%d compacted (%d inside the active turn, %d of views that paired), %d over budget, %d fit", compacted, splits, paired, over, fit)
		if !t.Failed() && (compacted < runs || over < runs/4 || splits < runs/80 || paired < runs/10) {
			t.Errorf("the conversations no longer cover every case")
		}
	}()
	for run := range runs {
		c := conversationOf(t, r, run%3 == 0)
		orig := view(c)
		total := count(c)
		split := r.IntN(3) == 0
		keep := 1 + r.IntN(2)
		for range 6 {
			budget := r.IntN(total + 20)
			d := c.Clone()
			opts := []nous.CompactOption{nous.WithSummaryReserve(8), nous.WithKeepTurns(keep), nous.WithSplitActiveTurn(split)}
			p, err := d.Compact(context.Background(), budget, opts...)
			if errors.Is(err, nous.ErrOverBudget) {
				if !slices.EqualFunc(view(d), orig, same) {
					t.Fatalf("run %d budget %d: ErrOverBudget and a changed view", run, budget)
				}
				over++
				continue
			}
			if err != nil {
				t.Fatalf("run %d budget %d: %v", run, budget, err)
			}
			got := view(d)
			if len(p.Dropped) == 0 {
				if !slices.EqualFunc(got, orig, same) {
					t.Fatalf("run %d: an empty plan changed the view", run)
				}
				fit++
				continue
			}
			compacted++
			if p.First > 0 && orig[p.First-1].Role == nous.RoleUser {
				splits++
			}
			if problem := checkCompaction(logView(c), logView(d), p, keep, split, len(orig)-len(logView(c))); problem != "" {
				t.Fatalf("run %d budget %d range %d..%d: %s", run, budget, p.First, p.Last, problem)
			}
			if n := count(d); n > budget {
				t.Fatalf("run %d: %d tokens after compacting into %d", run, n, budget)
			}
			if c.CheckToolPairing() == nil {
				if err := d.CheckToolPairing(); err != nil {
					t.Fatalf("run %d budget %d: a view that paired does not after compacting: %v", run, budget, err)
				}
				paired++
			}
			e, err := nous.DeserializeWithLogger(serialized(t, d), quietLog)
			mustDo(t, err)
			if !slices.EqualFunc(view(e), logView(d), same) { // the overlay is not serialized
				t.Fatalf("run %d: the compacted view is not the fold of its log", run)
			}
		}
	}
}

// checkCompaction checks a compaction of orig into got by plan p: C2's
// shape, C1's groups and C4's active turn, by a definition of its own.
// With a summary at the head of the log, the overlay joins it: the views
// are compared without their overlay message (off 1 when it was one of its
// own).
func checkCompaction(orig, got []nous.Message, p nous.CompactPlan, keep int, split bool, off int) string {
	lo, hi := p.First-off, p.Last+1-off
	if len(got) != len(orig)-(hi-lo)+1 || !slices.EqualFunc(got[:lo], orig[:lo], same) || !slices.EqualFunc(got[lo+1:], orig[hi:], same) {
		return "not prefix + summary + suffix"
	}
	lead := 0 // the leading system messages, but for earlier summaries
	for lead < len(orig) && orig[lead].Role == nous.RoleSystem && orig[lead].Metadata[nous.MetadataSummary] != true {
		lead++
	}
	if lo < lead {
		return "a leading system message replaced"
	}
	if hi < len(orig) && orig[hi].Role == nous.RoleTool {
		return "the kept suffix starts with a tool message"
	}
	// Each answered call and its results: all in the range or none.
	callAt := map[string]int{}
	for i, m := range orig {
		for _, tc := range m.ToolCalls {
			if _, ok := callAt[tc.ID]; !ok {
				callAt[tc.ID] = i
			}
		}
	}
	inRange := func(i int) bool { return i >= lo && i < hi }
	for i, m := range orig {
		if m.Role != nous.RoleTool {
			continue
		}
		at, ok := callAt[m.ToolCallID]
		if !ok || at > i {
			continue // a ghost result
		}
		if inRange(at) != inRange(i) {
			return fmt.Sprintf("call %s at %d and its result at %d are on both sides of the cut", m.ToolCallID, at, i)
		}
	}
	users := 0
	active := lead
	for i := len(orig) - 1; i >= lead; i-- {
		if orig[i].Role == nous.RoleUser {
			if users++; users == keep {
				active = i
				break
			}
		}
	}
	if !split && hi > active {
		return fmt.Sprintf("the active turn (from %d) cut", active)
	}
	if split && hi > active {
		if lo < active {
			return "a split that starts before the kept turns"
		}
		for _, m := range orig[lo:hi] {
			if m.Role == nous.RoleUser {
				return "a split that drops a user message of the kept turns"
			}
		}
	}
	return ""
}

// randomConversation returns a context with a bit of everything C1 is
// about.
func randomConversation(t *testing.T, r *rand.Rand) *nous.Context {
	return conversationOf(t, r, false)
}

// conversationOf returns a random conversation; a clean one has no ghost
// results and every call answered, so that it pairs.
func conversationOf(t *testing.T, r *rand.Rand, clean bool) *nous.Context {
	c := nous.NewContext(nous.WithLogger(quietLog))
	if r.IntN(3) > 0 {
		mustDo(t, c.AddMessage(nous.SystemMessage("system prompt")))
	}
	if r.IntN(4) == 0 {
		c.SetSystemPromptOverlay("an overlay")
	}
	calls := 0
	text := func() string { return strings.Repeat("word ", 1+r.IntN(30)) }
	for range 3 + r.IntN(25) {
		switch k := r.IntN(10); {
		case k < 3:
			mustDo(t, c.AddMessage(nous.UserMessage(text())))
		case k < 4 && !clean: // a ghost result
			mustDo(t, c.AddMessage(nous.ToolMessage(fmt.Sprint("ghost", r.IntN(3)), "f", text())))
		case k < 4:
			mustDo(t, c.AddMessage(nous.UserMessage(text())))
		default:
			// Calls spread over one or more assistant messages, answered in
			// any order, some never.
			var ids []string
			spread := 1 + r.IntN(2) // the provider pairing wants one assistant message per group
			if clean {
				spread = 1
			}
			for range spread {
				a := nous.AssistantMessage(text())
				if r.IntN(3) == 0 {
					a.Parts = []nous.ContentPart{nous.ThinkingPart("thinking", "sig")}
				}
				for range r.IntN(3) {
					calls++
					id := fmt.Sprint("c", calls)
					a.ToolCalls = append(a.ToolCalls, nous.ToolCall{ID: id, Name: "f"})
					ids = append(ids, id)
				}
				mustDo(t, c.AddMessage(a))
			}
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, id := range ids {
				if clean || r.IntN(8) > 0 {
					mustDo(t, c.AddMessage(nous.ToolMessage(id, "f", text())))
				}
			}
		}
		if r.IntN(8) == 0 && c.Len() > 3 && !clean { // an earlier replacement, where the pairing allows
			i := 1 + r.IntN(c.Len()-2)
			_ = c.ReplaceMessageRange(i, i+r.IntN(min(3, c.Len()-i)), nous.SystemMessage("earlier summary"))
		}
	}
	return c
}

// logView returns the view of c without its overlay.
func logView(c *nous.Context) []nous.Message {
	d := c.Clone()
	d.SetSystemPromptOverlay("")
	return view(d)
}

// An earlier summary at the head of the view is taken into the next
// compaction's range: the summarizer sees it, and summaries do not pile up.
func TestCompactRollingSummary(t *testing.T) {
	c := turns(t, 12)
	var got [][]nous.Message
	s := nous.SummarizerFunc(func(_ context.Context, d []nous.Message) (nous.Message, error) {
		got = append(got, d)
		return nous.SystemMessage(fmt.Sprintf("summary %d", len(got))), nil
	})
	for range 3 {
		_, err := c.Compact(context.Background(), count(c)*3/4, nous.WithSummarizer(s), nous.WithSummaryReserve(10))
		mustDo(t, err)
	}
	v := view(c)
	if v[1].Content != "summary 3" || v[2].Role == nous.RoleSystem {
		t.Fatalf("the view starts %q, %q, %q: summaries piled up", v[0].Content, v[1].Content, v[2].Content)
	}
	if len(got) != 3 || got[1][0].Content != "summary 1" || got[2][0].Content != "summary 2" {
		t.Fatal("a compaction did not give the summarizer the earlier summary")
	}
}

// Planning keeps an index of the view between plans; a context that
// changes in every way between them (appends, replacements, insertions,
// the overlay) plans as a fresh copy of it does.
func TestCompactIndexFollowsChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 16))
	for run := range 200 {
		c := randomConversation(t, r)
		for step := range 12 {
			switch r.IntN(5) {
			case 0:
				mustDo(t, c.AddMessage(nous.UserMessage(strings.Repeat("more ", 1+r.IntN(20)))))
			case 1:
				if n := c.Len(); n > 2 {
					i := 1 + r.IntN(n-1)
					_ = c.ReplaceMessage(i, nous.AssistantMessage("replaced"))
				}
			case 2:
				c.PatchDanglingToolCalls()
			case 3:
				c.SetSystemPromptOverlay([]string{"", "overlay"}[r.IntN(2)])
			case 4:
				call := nous.ToolCall{ID: fmt.Sprint("late", step), Name: "f"}
				mustDo(t, c.AddMessages(nous.AssistantMessage("", call), nous.ToolMessage(call.ID, "f", "r")))
			}
			budget := r.IntN(count(c) + 10)
			got, gerr := c.PlanCompaction(budget, nous.WithSummaryReserve(8))
			want, werr := c.Clone().PlanCompaction(budget, nous.WithSummaryReserve(8))
			if (gerr == nil) != (werr == nil) || got.First != want.First || got.Last != want.Last ||
				got.TokensBefore != want.TokensBefore || got.TokensAfter != want.TokensAfter {
				t.Fatalf("run %d step %d: planned %d..%d (%d, %d, %v), a fresh copy %d..%d (%d, %d, %v)", run, step,
					got.First, got.Last, got.TokensBefore, got.TokensAfter, gerr, want.First, want.Last, want.TokensBefore, want.TokensAfter, werr)
			}
		}
	}
}
