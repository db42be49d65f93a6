package nous_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// C4: "never separating signed reasoning from the call it belongs to", for
// every provider's signed thinking: Anthropic's redacted thinking
// (Options["redacted_data"]) and Gemini's thought parts
// (Options["thought_signature"]) in an assistant message of their own stay
// with the call that follows.
func TestCompactCaseSignedReasoningOtherProviders(t *testing.T) {
	redacted := nous.AssistantMessage("")
	redacted.Parts = []nous.ContentPart{{Type: nous.PartThinking,
		Options: map[string]any{"provider": "anthropic", "redacted_data": "EuYBCkQYAiJAgCs1Tq0Zq9r"}}}
	gemini := nous.AssistantMessage("")
	gemini.Parts = []nous.ContentPart{{Type: nous.PartThinking, Content: words(20),
		Options: map[string]any{"provider": "gemini", "thought_signature": "c2lnbmF0dXJlIGJ5dGVz"}}}
	openai := nous.AssistantMessage("")
	openai.Parts = []nous.ContentPart{{Type: nous.PartThinking, Content: words(20),
		Options: map[string]any{"provider": "openai", "id": "rs_1", "encrypted_content": "gAAAAABencrypted"}}}
	for name, think := range map[string]nous.Message{"anthropic redacted_thinking": redacted, "gemini thought_signature": gemini, "openai encrypted_content": openai} {
		t.Run(name, func(t *testing.T) {
			x := nous.ToolCall{ID: "c1", Name: "f"}
			c := rv(t, nous.SystemMessage("s"), nous.UserMessage(words(100)), think, nous.AssistantMessage("", x),
				nous.ToolMessage("c1", "f", "r"), nous.AssistantMessage("done"), nous.UserMessage("u2"))
			for b := count(c); b > 0; b-- {
				v, err := c.ViewWithin(b)
				if err != nil {
					return
				}
				for i, m := range v {
					if len(m.ToolCalls) > 0 && len(v[i-1].Parts) == 0 {
						t.Fatalf("budget %d: the call is kept without the signed reasoning before it: %v", b, roles(v))
					}
				}
			}
		})
	}
}

// C1: a dangling call does not block later cuts, also when a later turn
// reuses its ID (call_0 every turn, as some servers give them): the later
// result answers the later call.
func TestCompactCaseDanglingReusedIDBlocksCut(t *testing.T) {
	x := nous.ToolCall{ID: "call_0", Name: "f"}
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage(words(10)), nous.AssistantMessage("", x), // dangling
		nous.UserMessage(words(100)), nous.AssistantMessage(words(100)),
		nous.UserMessage("q"), nous.AssistantMessage("", x), nous.ToolMessage("call_0", "f", "r"), nous.AssistantMessage("done"))
	budget := count(c) - 50

	d := c.Clone() // the valid cut: keep from the last user message on
	mustDo(t, d.ReplaceMessageRange(1, 4, nous.SystemMessage("[4 earlier messages omitted]")))
	if count(d) > budget {
		t.Fatalf("setup: the valid cut costs %d > %d", count(d), budget)
	}
	p, err := c.PlanCompaction(budget, nous.WithSummaryReserve(10))
	if err != nil {
		t.Fatalf("no plan, though replacing 1..4 gives a valid view of %d <= %d tokens: %v", count(d), budget, err)
	}
	if p.TokensAfter > budget || p.Last >= 5 {
		t.Fatalf("plan %d..%d (%d tokens after) is not the smallest that fits %d", p.First, p.Last, p.TokensAfter, budget)
	}
}

// C4 with WithSplitActiveTurn(true): a run with no user message (an agent
// started by its system prompt alone) is all active turn, and safe cuts
// inside it are allowed.
func TestCompactCaseSplitWithoutUserMessage(t *testing.T) {
	c := rv(t, nous.SystemMessage("You are an autonomous agent. Work through the queue."))
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		x := nous.ToolCall{ID: id, Name: "work"}
		mustDo(t, c.AddMessages(nous.AssistantMessage(words(20), x), nous.ToolMessage(id, "work", words(20))))
	}
	mustDo(t, c.AddMessage(nous.AssistantMessage("done")))
	budget := count(c) / 2
	d := c.Clone()
	mustDo(t, d.ReplaceMessageRange(1, 8, nous.SystemMessage("[8 earlier messages omitted]")))
	if count(d) > budget || d.CheckToolPairing() != nil {
		t.Fatalf("setup: %d %v", count(d), d.CheckToolPairing())
	}
	_, err := c.Compact(context.Background(), budget, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10))
	if err != nil {
		t.Fatalf("split compaction of a run without user messages: %v (a safe cut at 9 fits: %d <= %d)", err, count(d), budget)
	}
}

// C8: ViewWithin's view is within the budget also when the range starts
// with an earlier summary carrying the overlay, which then goes on the
// marker (ApproxCounter rounds per message: a token more there).
func TestCompactCaseViewWithinOverlayRounding(t *testing.T) {
	c := rv(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("word wo"), nil })
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(s), nous.WithSummaryReserve(10))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q2")))
	c.SetSystemPromptOverlay("word ")
	failed := 0 // the largest budget ViewWithin found too small
	for b := count(c); b > 0; b-- {
		v, err := c.ViewWithin(b)
		if err == nil && countMsgs(v) > b {
			t.Fatalf("ViewWithin(%d) returned a view of %d tokens: %v", b, countMsgs(v), roles(v))
		}
		switch {
		case err != nil && failed == 0:
			failed = b
		case err == nil && failed > 0:
			t.Fatalf("ViewWithin(%d) fits, ViewWithin(%d) does not: a larger budget must fit too", b, failed)
		}
	}
}

// saturatingCounter answers math.MaxInt for what it cannot price: C3's sum
// of counts must not wrap, and the view must not "fit".
type saturatingCounter struct{}

func (saturatingCounter) CountTokens(m nous.Message) int {
	if len(m.Parts) > 0 { // an attachment this counter cannot price
		return math.MaxInt
	}
	return nous.ApproxCounter{}.CountTokens(m)
}

func TestCompactCaseCountOverflowFits(t *testing.T) {
	img := nous.UserMessage("")
	img.Parts = []nous.ContentPart{{Type: nous.PartImageURL, Content: "https://example.com/huge.tiff"}}
	c := rv(t, nous.SystemMessage("s"), img, nous.AssistantMessage("a"), nous.UserMessage("q"))
	opts := []nous.CompactOption{nous.WithTokenCounter(saturatingCounter{}), nous.WithReserve(100)}
	p, err := c.PlanCompaction(1000, opts...)
	if err == nil && len(p.Dropped) == 0 {
		t.Fatalf("PlanCompaction says the view fits 1000 tokens: TokensBefore %d", p.TokensBefore)
	}
	if v, err := c.ViewWithin(1000, opts...); err == nil && slices.ContainsFunc(v, func(m nous.Message) bool { return len(m.Parts) > 0 }) {
		t.Fatalf("ViewWithin keeps a message of MaxInt tokens in a view within 1000")
	}
}

// C4 with WithKeepTurns(3) and a split: no user message of a kept turn is
// summarized away.
func TestCompactCaseSplitKeepsKeptUserMessages(t *testing.T) {
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("U1"), nous.AssistantMessage(words(60)),
		nous.UserMessage("U2"), nous.AssistantMessage(words(60)), nous.UserMessage("U3"), nous.AssistantMessage("a"))
	for b := count(c); b > 0; b-- {
		d := c.Clone()
		if _, err := d.Compact(context.Background(), b, nous.WithKeepTurns(3), nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(10)); err != nil {
			continue
		}
		users := 0
		for _, m := range view(d) {
			if m.Role == nous.RoleUser {
				users++
			}
		}
		if users != 3 {
			t.Fatalf("budget %d: a kept turn's user message was compacted: %v", b, roles(view(d)))
		}
	}
}

// The overlay is never serialized: a summarizer gets the stored messages of
// the range, not the summary with the overlay joined, so a rolling summary
// does not write configuration into the log.
func TestCompactCaseOverlayFedToSummarizer(t *testing.T) {
	c := rv(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	c.SetSystemPromptOverlay("OVERLAY: today is Monday")
	rolling := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		if dropped[0].Role == nous.RoleSystem { // the previous summary, carried on
			return nous.SystemMessage(dropped[0].Content + " + more"), nil
		}
		return nous.SystemMessage("summary"), nil
	})
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(rolling), nous.WithSummaryReserve(20))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(40)), nous.UserMessage(words(40)), nous.AssistantMessage("x"), nous.UserMessage("q2")))
	p, err := c.PlanCompaction(count(c)-30, nous.WithSummaryReserve(20))
	mustDo(t, err)
	if p.First == 0 && strings.Contains(p.Dropped[0].Content, "OVERLAY") {
		_, _ = c.Compact(context.Background(), count(c)-30, nous.WithSummarizer(rolling), nous.WithSummaryReserve(20))
		c.SetSystemPromptOverlay("")
		t.Fatalf("Dropped[0] carries the overlay; after a rolling compaction and clearing the overlay the view still starts %q", view(c)[0].Content)
	}
}
