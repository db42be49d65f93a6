package nous_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
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
	c.EndStep(nous.Step{Provider: "test", Usage: nous.Usage{Requests: 1, InputTokens: 5, OutputTokens: 2, TotalTokens: 7}})
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
	if s, ok := nous.StepOf(seen[3]); !ok || s.Usage.InputTokens != 5 || s.Provider != "test" {
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

// A step survives a save and a load, and only step_end events with a
// usage of whole numbers give one.
func TestStepOf(t *testing.T) {
	full := nous.Step{Provider: "anthropic", Model: "claude-opus-4-5", Error: "the reply stopped",
		Usage: nous.Usage{Requests: 1, ToolCalls: 2, InputTokens: 120, OutputTokens: 30, TotalTokens: 150,
			CacheCreationInputTokens: 7, CacheReadInputTokens: 100, ReasoningTokens: 12}}
	c := nous.NewContext()
	c.EndStep(full)
	c.EndStep(nous.Step{})
	if c.Usage != full.Usage {
		t.Errorf("Usage %+v, want %+v", c.Usage, full.Usage)
	}
	live := c.Log().Events()
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	back, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, events := range [][]nous.Event{live, back.Log().Events()} {
		if got, ok := nous.StepOf(events[0]); !ok || got != full {
			t.Errorf("step %+v, %v; want %+v", got, ok, full)
		}
		if got, ok := nous.StepOf(events[1]); !ok || got != (nous.Step{}) {
			t.Errorf("an empty step: %+v, %v", got, ok)
		}
		for _, k := range []string{nous.DataProvider, nous.DataModel, nous.DataError} {
			if _, has := events[1].Data[k]; has {
				t.Errorf("an empty step has %s", k)
			}
		}
	}
	// The usage as the encoding of Usage writes it: the same object.
	want, err := json.Marshal(full.Usage)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := json.Marshal(live[0].Data[nous.DataUsage]); err != nil || !jsonEqual(got, want) {
		t.Errorf("usage data %s, want %s", got, want)
	}
	if got, err := json.Marshal(live[1].Data[nous.DataUsage]); err != nil || !jsonEqual(got, []byte(`{"requests":0,"tool_calls":0,"input_tokens":0,"output_tokens":0,"total_tokens":0}`)) {
		t.Errorf("empty usage data %s", got)
	}
	for _, tc := range []struct {
		usage any
		want  nous.Usage
		ok    bool
	}{
		{map[string]any{"input_tokens": int64(3), "output_tokens": 2.0}, nous.Usage{InputTokens: 3, OutputTokens: 2}, true},
		{map[string]any{"input_tokens": 3, "unknown": "kept aside"}, nous.Usage{InputTokens: 3}, true},
		{map[string]any{}, nous.Usage{}, true},
		{"lots", nous.Usage{}, false},
		{nil, nous.Usage{}, false},
		{map[string]any{"input_tokens": "many"}, nous.Usage{}, false},
		{map[string]any{"input_tokens": 2.5}, nous.Usage{}, false},
		{map[string]any{"reasoning_tokens": math.Inf(1)}, nous.Usage{}, false},
		{map[string]any{"reasoning_tokens": math.NaN()}, nous.Usage{}, false},
		{map[string]any{"output_tokens": 1e300}, nous.Usage{}, false},
	} {
		e := nous.Event{Type: nous.EventStepEnd, Data: map[string]any{nous.DataUsage: tc.usage, nous.DataModel: 7}}
		if got, ok := nous.StepOf(e); ok != tc.ok || got.Usage != tc.want || got.Model != "" {
			t.Errorf("usage %v: %+v, %v; want %+v, %v", tc.usage, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := nous.StepOf(nous.Event{Type: nous.EventStepStart, Data: live[0].Data}); ok {
		t.Errorf("a step_start gives a step: %+v", got)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// A rule that names every key with "token" in it keeps a step's usage,
// whose keys count tokens, and drops its other secrets.
func TestStepKeepsUsageUnderABroadRule(t *testing.T) {
	rule := func(k string) bool { return nous.IsSecretKey(k) || strings.Contains(k, "token") }
	c := nous.NewContext(nous.WithRedaction(rule))
	s := nous.Step{Provider: "openai", Model: "m", Usage: nous.Usage{Requests: 1, InputTokens: 9, OutputTokens: 2, TotalTokens: 11, ReasoningTokens: 1}}
	c.EndStep(s)
	if err := c.LogEvent(nous.EventStepEnd, map[string]any{nous.DataUsage: map[string]any{"input_tokens": 1}, "auth_token": "sk-x"}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-x") {
		t.Error("a step's secret was written")
	}
	back, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := nous.StepOf(back.Log().Events()[0]); !ok || got != s {
		t.Errorf("after a round trip: %+v, want %+v", got, s)
	}
}
