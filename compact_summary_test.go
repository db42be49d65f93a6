package nous_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

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

// C7: summaries do not pile up after JSON round trips either: the mark of
// an earlier summary is stored with it.
func TestCompactRollingSummaryAfterRoundTrip(t *testing.T) {
	c := turns(t, 12)
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("summary"), nil })
	for range 3 {
		_, err := c.Compact(context.Background(), count(c)*3/4, nous.WithSummarizer(s), nous.WithSummaryReserve(10))
		mustDo(t, err)
		e, err := nous.DeserializeWithLogger(serialized(t, c), quietLog)
		mustDo(t, err)
		c = e
	}
	v := view(c)
	if v[2].Role == nous.RoleSystem {
		t.Fatalf("summaries piled up after round trips: %v", roles(v))
	}
}

// C5: the summarizer gets the stored messages of the range: an earlier
// summary at the head comes without the overlay joined to it in the view,
// so that a rolling summary never writes the overlay, which is
// configuration, into the log.
func TestCompactSummarizerGetsStoredMessages(t *testing.T) {
	c := contextOf(t, nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage(words(30)), nous.AssistantMessage(words(30)), nous.UserMessage("q"))
	c.SetSystemPromptOverlay("OVERLAY: today is Monday")
	var got []nous.Message
	rolling := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		got = dropped
		if dropped[0].Role == nous.RoleSystem { // the previous summary, carried on
			return nous.SystemMessage(dropped[0].Content + " + more"), nil
		}
		return nous.SystemMessage("summary"), nil
	})
	_, err := c.Compact(context.Background(), count(c)-20, nous.WithSummarizer(rolling), nous.WithSummaryReserve(20))
	mustDo(t, err)
	mustDo(t, c.AddMessages(nous.AssistantMessage(words(40)), nous.UserMessage(words(40)), nous.AssistantMessage("x"), nous.UserMessage("q2")))
	p, err := c.Compact(context.Background(), count(c)-30, nous.WithSummarizer(rolling), nous.WithSummaryReserve(20))
	mustDo(t, err)
	if p.First != 0 {
		t.Fatalf("setup: the range %d..%d does not start with the earlier summary", p.First, p.Last)
	}
	for _, m := range append(p.Dropped, got...) {
		if strings.Contains(m.Content, "OVERLAY") {
			t.Fatalf("the range handed out carries the overlay: %q", m.Content)
		}
	}
	c.SetSystemPromptOverlay("")
	if v := view(c); strings.Contains(v[0].Content, "OVERLAY") {
		t.Fatalf("the overlay was written into the log: the view starts %q", v[0].Content)
	}
}

// C2: the leading system messages are kept verbatim, also a system prompt
// the owner edited with ReplaceMessage: a replacement, but no summary of a
// compaction's.
func TestCompactKeepsEditedSystemPrompt(t *testing.T) {
	c := turns(t, 6)
	mustDo(t, c.ReplaceMessage(0, nous.SystemMessage("You are a careful assistant. Updated rules.")))
	_, err := c.Compact(context.Background(), count(c)/2, nous.WithSummaryReserve(10))
	mustDo(t, err)
	if v := view(c); v[0].Content != "You are a careful assistant. Updated rules." {
		t.Fatalf("the system prompt was compacted: view starts %q", v[0].Content)
	}
}

// A summary is a model call: what a UsageSummarizer reports reaches the
// context's Usage, also when its summary is refused (the call was billed),
// and nothing when no summary is needed.
func TestCompactCountsTheSummarizersUsage(t *testing.T) {
	cost := nous.Usage{Requests: 1, InputTokens: 900, OutputTokens: 60, TotalTokens: 960}
	for _, tc := range []struct {
		name    string
		summary nous.Message
		err     error
		budget  func(c *nous.Context) int
		calls   int
		wantErr bool
	}{
		{"a summary applied", nous.SystemMessage("what happened"), nil, func(c *nous.Context) int { return count(c) * 3 / 4 }, 1, false},
		{"a summarizer that fails", nous.Message{}, errors.New("model overloaded"), func(c *nous.Context) int { return count(c) * 3 / 4 }, 1, true},
		{"a summary refused", nous.ToolMessage("x", "f", "not a summary"), nil, func(c *nous.Context) int { return count(c) * 3 / 4 }, 1, true},
		{"a view that fits", nous.SystemMessage("unused"), nil, func(c *nous.Context) int { return count(c) * 2 }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := turns(t, 12)
			c.AddUsage(nous.Usage{Requests: 5, InputTokens: 100})
			before, view0 := c.Usage, view(c)
			calls := 0
			s := nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
				calls++
				return tc.summary, cost, tc.err
			})
			_, err := c.Compact(context.Background(), tc.budget(c), nous.WithSummarizer(s), nous.WithSummaryReserve(10))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Compact: %v", err)
			}
			want := before
			if calls > 0 {
				want = before.Add(cost)
			}
			if calls != tc.calls || c.Usage != want {
				t.Fatalf("%d summarizer calls, usage %+v, want %d and %+v", calls, c.Usage, tc.calls, want)
			}
			if tc.wantErr && len(view(c)) != len(view0) {
				t.Fatal("a failed compaction changed the view")
			}
		})
	}
	var s nous.Summarizer = nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
		return nous.SystemMessage("s"), cost, nil
	})
	if m, err := s.Summarize(context.Background(), nil); err != nil || m.Content != "s" {
		t.Fatalf("Summarize = %v, %v", m, err)
	}
}

// A summary a UsageSummarizer made is logged as a model call: a step_end
// with its usage right after the replace event; a summary refused logs
// nothing and counts its usage all the same.
func TestCompactLogsTheSummarizersCall(t *testing.T) {
	u := nous.Usage{Requests: 1, InputTokens: 40, OutputTokens: 8, TotalTokens: 48}
	summarizer := nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
		return nous.UserMessage("Summary: weather in Paris."), u, nil
	})
	c := nous.NewContext()
	for i := range 20 {
		if err := c.AddMessages(nous.UserMessage(fmt.Sprintf("question %d about the weather in Paris", i)), nous.AssistantMessage("an answer about the weather in Paris, at length")); err != nil {
			t.Fatal(err)
		}
	}
	n := c.Log().Len()
	p, err := c.Compact(context.Background(), 200, nous.WithSummarizer(summarizer), nous.WithSummaryReserve(40))
	if err != nil || len(p.Dropped) == 0 {
		t.Fatalf("compact: %v, dropped %d", err, len(p.Dropped))
	}
	events := c.Log().Events()[n:]
	if len(events) != 2 || events[0].Type != nous.EventReplace || c.Usage != u {
		t.Fatalf("events after the compaction: %+v; usage %+v", events, c.Usage)
	}
	if s, ok := nous.StepOf(events[1]); !ok || s != (nous.Step{Usage: u}) {
		t.Errorf("the summarizer's step: %+v, %v", s, ok)
	}

	refused := nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
		return nous.Message{Role: nous.RoleUser}, u, nil // empty: refused
	})
	d := nous.NewContext()
	if err := d.AddMessages(c.Messages()...); err != nil {
		t.Fatal(err)
	}
	n = d.Log().Len()
	if _, err := d.Compact(context.Background(), 120, nous.WithSummarizer(refused), nous.WithSummaryReserve(40)); err == nil {
		t.Fatal("an empty summary was applied")
	}
	if d.Log().Len() != n || d.Usage != u {
		t.Errorf("a refused summary: %d events more, usage %+v", d.Log().Len()-n, d.Usage)
	}
}
