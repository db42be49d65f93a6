package nous_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/viewgen"
)

// The model-based test: random conversations (see randomConversation)
// compacted at random budgets, checking C1-C4 on every
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
		c := randomConversation(t, r, run%3 == 0)
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
	// Each answered call and its results: all in the range or none. A
	// result answers the last call before it with its ID (a server that
	// numbers calls per turn uses call_0 each turn).
	callAt := map[string]int{}
	inRange := func(i int) bool { return i >= lo && i < hi }
	for i, m := range orig {
		for _, tc := range m.ToolCalls {
			callAt[tc.ID] = i
		}
		if m.Role != nous.RoleTool {
			continue
		}
		at, ok := callAt[m.ToolCallID]
		if !ok {
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

// randomConversation returns a context holding a random conversation of
// internal/viewgen's (parallel calls, results in any order, missing or
// stray, thinking of every provider, system messages anywhere), with what
// compaction meets besides: messages of every size, so that budgets fall
// anywhere, a system prompt and an overlay, and unless clean, the calls of
// one group spread over several assistant messages, a result before its
// call, dangling calls answered later by PatchDanglingToolCalls, and
// earlier replacements. A clean one pairs (CheckToolPairing accepts it).
func randomConversation(t *testing.T, r *rand.Rand, clean bool) *nous.Context {
	t.Helper()
	for {
		c := nous.NewContext(nous.WithLogger(quietLog))
		if r.IntN(3) > 0 {
			mustDo(t, c.AddMessage(nous.SystemMessage("system prompt")))
		}
		if r.IntN(4) == 0 {
			c.SetSystemPromptOverlay("an overlay")
		}
		add := func(m nous.Message) {
			if m.Content != "" {
				m.Content += words(r.IntN(30))
			}
			_ = c.AddMessage(m) // viewgen makes a few messages AddMessage refuses: those are left out
		}
		for _, m := range viewgen.View(r, 3+r.IntN(30)) {
			switch {
			case clean:
				add(m)
			case len(m.ToolCalls) > 1 && r.IntN(2) == 0: // one group over two assistant messages
				k := 1 + r.IntN(len(m.ToolCalls)-1)
				rest := nous.AssistantMessage("", m.ToolCalls[k:]...)
				m.ToolCalls = m.ToolCalls[:k]
				add(m)
				add(rest)
			case len(m.ToolCalls) > 0 && r.IntN(10) == 0: // a result before its call
				add(nous.ToolMessage(m.ToolCalls[0].ID, m.ToolCalls[0].Name, "early"))
				add(m)
			default:
				add(m)
			}
			if !clean && r.IntN(12) == 0 {
				c.PatchDanglingToolCalls()
			}
			if !clean && r.IntN(10) == 0 && c.Len() > 3 { // an earlier replacement, where the pairing allows
				i := 1 + r.IntN(c.Len()-2)
				_ = c.ReplaceMessageRange(i, i+r.IntN(min(3, c.Len()-i)), nous.SystemMessage("earlier summary"))
			}
		}
		if clean {
			c.PatchDanglingToolCalls()
		}
		if !clean || c.CheckToolPairing() == nil {
			return c
		}
	}
}

// logView returns the view of c without its overlay.
func logView(c *nous.Context) []nous.Message {
	d := c.Clone()
	d.SetSystemPromptOverlay("")
	return view(d)
}

// Planning keeps an index of the view between plans, and of what pruning
// saves; a context that changes in every way between them (appends,
// replacements, insertions, the overlay, compactions applied, another
// tool-result limit) plans as a fresh copy of it does.
func TestCompactIndexFollowsChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 16))
	for run := range 200 {
		c := randomConversation(t, r, false)
		for step := range 12 {
			limit := nous.WithToolResultLimit([]int{0, 12, 40}[r.IntN(3)])
			switch r.IntN(7) {
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
				out := strings.Repeat("r", 1+r.IntN(400))
				mustDo(t, c.AddMessages(nous.AssistantMessage("", call), nous.ToolMessage(call.ID, "f", out)))
			case 5:
				if p, err := c.PlanCompaction(r.IntN(count(c)+10), limit, nous.WithSummaryReserve(8)); err == nil {
					mustDo(t, c.ApplyCompaction(p, nous.SystemMessage("summary")))
				}
			case 6:
				_, _ = c.PlanCompaction(r.IntN(count(c)+10), limit) // another limit's account, cached
			}
			budget := r.IntN(count(c) + 10)
			got, gerr := c.PlanCompaction(budget, limit, nous.WithSummaryReserve(8))
			d := c.Clone()
			want, werr := d.PlanCompaction(budget, limit, nous.WithSummaryReserve(8))
			if (gerr == nil) != (werr == nil) || got.First != want.First || got.Last != want.Last ||
				got.TokensBefore != want.TokensBefore || got.TokensAfter != want.TokensAfter ||
				!slices.Equal(got.Pruned, want.Pruned) || !reflect.DeepEqual(got.Dropped, want.Dropped) {
				t.Fatalf("run %d step %d: planned %d..%d (%d, %d, pruned %v, %v), a fresh copy %d..%d (%d, %d, pruned %v, %v)", run, step,
					got.First, got.Last, got.TokensBefore, got.TokensAfter, got.Pruned, gerr,
					want.First, want.Last, want.TokensBefore, want.TokensAfter, want.Pruned, werr)
			}
			if gerr == nil && r.IntN(4) == 0 { // the cached plan applies as the fresh one would
				mustDo(t, c.ApplyCompaction(got, nous.SystemMessage("summary")))
				mustDo(t, d.ApplyCompaction(want, nous.SystemMessage("summary")))
				if !reflect.DeepEqual(logView(c), logView(d)) {
					t.Fatalf("run %d step %d: the cached plan applied to another view than the fresh one", run, step)
				}
			}
		}
	}
}
