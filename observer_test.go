package nous_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
)

// The Observer sees every event the context appends, in seq order, as the
// log then holds it: messages, bookkeeping, recorded calls, replacements,
// patched results and steps. A clone has none; a load brings nothing in.
func TestObserverSeesEveryAppend(t *testing.T) {
	var seen []nous.Event
	c := nous.NewContext(nous.WithObserver(func(e nous.Event) { seen = append(seen, e) }))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	call := nous.ToolCall{ID: "c1", Name: "f", Arguments: []byte(`{}`)}
	must(c.AddMessage(nous.UserMessage("hi")))
	must(c.LogEvent(nous.EventTurnStart, map[string]any{"turn": 1}))
	must(c.AddMessage(nous.AssistantMessage("", call)))
	c.EndStep(nous.Usage{Requests: 1, InputTokens: 5, OutputTokens: 2, TotalTokens: 7}, "test")
	must(c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult {
		return nous.ToolResult{Content: "ok"}
	}))
	must(c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: "c2", Name: "f"})))
	c.PatchDanglingToolCalls()
	must(c.ReplaceMessage(0, nous.UserMessage("hello")))
	c.AddToolCall(nous.ToolCall{ID: "c3", Name: "g"})

	log := c.Log().Events()
	if len(seen) != len(log) {
		t.Fatalf("observed %d events of %d", len(seen), len(log))
	}
	for i, e := range log {
		o := seen[i]
		if o.Seq != e.Seq || o.Type != e.Type || !o.CreatedAt.Equal(e.CreatedAt) || (o.Message == nil) != (e.Message == nil) ||
			(o.Call == nil) != (e.Call == nil) || o.First != e.First || o.After != e.After {
			t.Errorf("event %d: observed %+v, logged %+v", i, o, e)
		}
		if e.Message != nil && o.Message.Text() != e.Message.Text() {
			t.Errorf("event %d: observed message %q, logged %q", i, o.Message.Text(), e.Message.Text())
		}
	}
	if u, ok := nous.StepUsage(seen[3]); !ok || u.InputTokens != 5 || seen[3].Data[nous.DataProvider] != "test" {
		t.Errorf("the step observed: %+v", seen[3])
	}

	n := len(seen)
	d := c.Clone()
	must(d.AddMessage(nous.UserMessage("in the fork")))
	b, err := c.Serialize()
	must(err)
	back, err := nous.Deserialize(b)
	must(err)
	back.Observer = func(e nous.Event) { seen = append(seen, e) }
	if len(seen) != n {
		t.Errorf("a clone or a load was observed: %d events more", len(seen)-n)
	}
	must(back.AddMessage(nous.UserMessage("after the load")))
	if len(seen) != n+1 || seen[n].Seq != int64(back.Log().Len()) {
		t.Errorf("the loaded context's next event was not observed with its seq")
	}
}

// A step's usage survives a save and a load, and only step_end events
// with one give it.
func TestStepUsage(t *testing.T) {
	u := nous.Usage{Requests: 1, ToolCalls: 2, InputTokens: 120, OutputTokens: 30, TotalTokens: 150,
		CacheCreationInputTokens: 7, CacheReadInputTokens: 100, ReasoningTokens: 12}
	c := nous.NewContext()
	c.EndStep(u, "anthropic")
	c.EndStep(nous.Usage{}, "")
	if c.Usage != u {
		t.Errorf("Usage %+v, want %+v", c.Usage, u)
	}
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	back, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	events := back.Log().Events()
	if got, ok := nous.StepUsage(events[0]); !ok || got != u || events[0].Data[nous.DataProvider] != "anthropic" {
		t.Errorf("after a round trip: %+v, %v, %+v", got, ok, events[0].Data)
	}
	if got, ok := nous.StepUsage(events[1]); !ok || got != (nous.Usage{}) {
		t.Errorf("a step of no usage: %+v, %v", got, ok)
	}
	if _, has := events[1].Data[nous.DataProvider]; has {
		t.Error("a step without a provider names one")
	}
	for _, e := range []nous.Event{
		{Type: nous.EventStepStart, Data: events[0].Data},
		{Type: nous.EventStepEnd},
		{Type: nous.EventStepEnd, Data: map[string]any{nous.DataUsage: "lots"}},
		{Type: nous.EventStepEnd, Data: map[string]any{nous.DataUsage: map[string]any{"input_tokens": "many"}}},
	} {
		if got, ok := nous.StepUsage(e); ok {
			t.Errorf("%+v gives usage %+v", e, got)
		}
	}
}
