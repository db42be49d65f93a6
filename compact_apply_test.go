package nous_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// C3: a summary that is not a system message, in place of an earlier
// summary at the head that the overlay was joined to, moves the overlay to
// a message of its own, with its own framing: ApplyCompaction counts it so,
// and a view it lets through fits.
func TestApplyCompactionCountsOverlayOnItsOwnMessage(t *testing.T) {
	base := contextOf(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
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

// C3: the plan leaves WithSummaryReserve tokens for the summary, also when
// the range starts with a rolling summary carrying the overlay, which the
// new summary takes: a summary exactly within the reserve is applied.
func TestApplyCompactionSummaryWithinReserveAtHead(t *testing.T) {
	c := contextOf(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	old := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("word wo"), nil })
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(old), nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q2")))
	c.SetSystemPromptOverlay("word ")
	summary := nous.SystemMessage("ab")
	reserve := nous.ApproxCounter{}.CountTokens(summary) // the summary fits its reserve exactly
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return summary, nil })
	tried := 0
	for b := count(c); b > 0; b-- {
		p, err := c.PlanCompaction(b, nous.WithSummaryReserve(reserve))
		if err != nil || len(p.Dropped) == 0 || p.First != 0 {
			continue
		}
		tried++
		d := c.Clone()
		if _, err := d.Compact(context.Background(), b, nous.WithSummarizer(s), nous.WithSummaryReserve(reserve)); err != nil {
			t.Fatalf("budget %d: plan %d..%d, TokensAfter %d <= %d with a summary of %d tokens, its reserve; Compact: %v",
				b, p.First, p.Last, p.TokensAfter, b, reserve, err)
		}
	}
	if tried == 0 {
		t.Fatal("setup: no plan at the head")
	}
}

// C6: a plan whose view changed before its range since (here the system
// prompt replaced with a longer one) is refused, and nothing changes.
func TestApplyCompactionRefusesChangedPrefix(t *testing.T) {
	c := turns(t, 6)
	p, err := c.PlanCompaction(count(c)/2, nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.ReplaceMessage(0, nous.SystemMessage(words(200))))
	before := serialized(t, c)
	if err := c.ApplyCompaction(p, nous.SystemMessage("sum")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a plan applied after its prefix changed: %v, want ErrConflict", err)
	}
	if !bytes.Equal(serialized(t, c), before) {
		t.Fatal("a refused plan changed the context")
	}
}

// C6: a plan is of the log it was made for: another context's, even one
// whose messages and log indices are the same, is refused.
func TestApplyCompactionRefusesPlanOfAnotherContext(t *testing.T) {
	a, b := turns(t, 6), turns(t, 6)
	p, err := a.PlanCompaction(count(a)/2, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if err := b.ApplyCompaction(p, nous.SystemMessage("summary of a")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a plan of another context applied: %v", err)
	}
}

// C6: a range that ends with a dangling call whose result was put right
// after it since (by PatchDanglingToolCalls) no longer ends where it did:
// the plan is refused as stale.
func TestApplyCompactionRefusesResultPatchedAfterRange(t *testing.T) {
	x := nous.ToolCall{ID: "d1", Name: "f"}
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage("u1"), nous.AssistantMessage(words(60), x),
		nous.UserMessage("u2"), nous.AssistantMessage("a2"))
	p, err := c.PlanCompaction(count(c)-40, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if p.Last != 2 {
		t.Fatalf("setup: the range %d..%d does not end with the dangling call", p.First, p.Last)
	}
	if n := c.PatchDanglingToolCalls(); n != 1 {
		t.Fatal("setup: no result patched")
	}
	if err := c.ApplyCompaction(p, nous.SystemMessage("sum")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a stale plan: %v, want ErrConflict", err)
	}
}

// C6: a plan whose range ends the view meets a tool result appended since
// (a dangling call's, come late) as a conflict: applied, it would leave the
// result after the summary, without its call. Nothing changes.
func TestApplyCompactionRefusesResultAfterRangeEndingView(t *testing.T) {
	d := nous.ToolCall{ID: "d", Name: "f"}
	c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage("go"),
		nous.AssistantMessage(words(100), d), nous.AssistantMessage(words(100)))
	p, err := c.PlanCompaction(count(c)-200, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10))
	mustDo(t, err)
	if p.Last != c.Len()-1 {
		t.Fatalf("setup: the range %d..%d does not end the view of %d messages", p.First, p.Last, c.Len())
	}
	mustDo(t, c.AddMessage(nous.ToolMessage("d", "f", "late")))
	before := serialized(t, c)
	if err := c.ApplyCompaction(p, nous.SystemMessage("sum")); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a plan ending the view, applied after a result came: %v, want ErrConflict", err)
	}
	if !bytes.Equal(serialized(t, c), before) {
		t.Fatal("a refused plan changed the context")
	}
}

// A plan names the events it was made of: replica A plans, replica B saves
// a turn first, A's save conflicts and A loads the log again, as documented;
// A's old plan then names entries that hold B's messages, and is refused.
func TestApplyCompactionRefusesAPlanOfALogLoadedAgain(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	a := nous.NewContext(nous.WithLogger(quietLog))
	for i := range 6 {
		require.NoError(t, a.AddMessages(nous.UserMessage(fmt.Sprintf("question %d %s", i, strings.Repeat("x", 200))), nous.AssistantMessage(fmt.Sprint("answer ", i))))
	}
	require.NoError(t, a.Save(ctx, s))
	b, err := nous.Load(ctx, s, a.Log().ID())
	require.NoError(t, err)

	require.NoError(t, a.AddMessages(nous.UserMessage("a's turn "+strings.Repeat("y", 400)), nous.AssistantMessage("a's answer"), nous.UserMessage("a's next")))
	plan, err := a.PlanCompaction(150, nous.WithKeepTurns(0), nous.WithSummaryReserve(20))
	require.NoError(t, err)
	require.NotEmpty(t, plan.Dropped)
	require.NoError(t, b.AddMessages(nous.UserMessage("b's turn "+strings.Repeat("z", 400)), nous.AssistantMessage("b's answer"), nous.UserMessage("b's next")))
	require.NoError(t, b.Save(ctx, s))
	require.ErrorIs(t, a.Save(ctx, s), nous.ErrConflict)
	reloaded, err := nous.Load(ctx, s, a.Log().ID())
	require.NoError(t, err)
	before := reloaded.Messages()
	err = reloaded.ApplyCompaction(plan, nous.SystemMessage("summary of a's view"))
	require.ErrorIs(t, err, nous.ErrConflict)
	assert.Equal(t, before, reloaded.Messages(), "nothing replaced")
}
