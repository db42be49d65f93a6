package nousotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
	"github.com/nous-go/nous/storetest"
)

// leaks reports every attribute or status of got that holds secret.
func leaks(t *testing.T, got []span, secret string) {
	t.Helper()
	for _, s := range got {
		for k, v := range s.Attrs {
			if strings.Contains(v.String(), secret) {
				t.Errorf("%s: %s holds %q: %s", s.Name, k, secret, v.String())
			}
		}
		if strings.Contains(s.Desc, secret) {
			t.Errorf("%s: status holds %q: %s", s.Name, secret, s.Desc)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// askTool adds a question, a reply calling call, its step, and the
// call's result r.
func askTool(t *testing.T, c *nous.Context, question string, call nous.ToolCall, r nous.ToolResult) {
	t.Helper()
	must(t, c.AddMessage(nous.UserMessage(question)))
	must(t, c.AddMessage(nous.AssistantMessage("", call)))
	c.EndStep(nous.Step{Provider: "openai", Model: "m"})
	must(t, c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult { return r }))
}

// A secret of the deps used as a key of a tool's JSON result is masked
// there too.
func TestSecretAsJSONKey(t *testing.T) {
	const key = "sk-live-0123456789"
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext(nous.WithDeps(map[string]any{"api_key": key}))
	stop := tr.Observe(context.Background(), c)
	askTool(t, c, "quota?", nous.ToolCall{ID: "c1", Name: "quota", Arguments: []byte(`{}`)}, nous.ToolResult{Content: `{"` + key + `":{"left":5}}`})
	must(t, c.AddMessage(nous.AssistantMessage("5 left")))
	c.EndStep(nous.Step{Provider: "openai", Model: "m"})
	stop()
	leaks(t, spans(t, rec), key)
}

// A secret a tool's update sets, applied before its result is logged, is
// masked in that result live, as in an export of the same context.
func TestSecretSetByATool(t *testing.T) {
	const newKey = "sk-new-key-from-tool-42"
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	askTool(t, c, "rotate", nous.ToolCall{ID: "c1", Name: "rotate", Arguments: []byte(`{}`)}, nous.ToolResult{Content: "new key " + newKey, Update: nous.NewContextUpdate().Set("api_key", newKey)})
	stop()
	live := spans(t, rec)
	leaks(t, live, newKey)
	exp, expRec := recorder(nousotel.WithContent())
	exp.ExportContext(context.Background(), c)
	sameSpans(t, live, spans(t, expRec))
}

// A tool's error result that is JSON is redacted in the span's status
// as in its result attribute.
func TestToolErrorStatusRedacted(t *testing.T) {
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	askTool(t, c, "log in", nous.ToolCall{ID: "c1", Name: "login", Arguments: []byte(`{}`)}, nous.ToolResult{Content: `{"error":"denied","password":"pw-echoed-in-error"}`, Err: errors.New("denied")})
	stop()
	leaks(t, spans(t, rec), "pw-echoed-in-error")
}

type dbConfig struct {
	Host     string
	Password string
	OnDial   func() // any func, chan or NaN field: json.Marshal fails
}

// A typed dep JSON cannot hold (a func field) still has its secrets
// looked for, and a step's error quoting one is masked.
func TestTypedDepJSONCannotHold(t *testing.T) {
	const pw = "hunter2-in-a-struct"
	tr, rec := recorder()
	c := nous.NewContext()
	c.Deps["db"] = dbConfig{Host: "db", Password: pw, OnDial: func() {}}
	stop := tr.Observe(context.Background(), c)
	must(t, c.AddMessage(nous.UserMessage("hi")))
	c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "dial db: auth failed for password " + pw})
	stop()
	leaks(t, spans(t, rec), pw)
}

// A streamed call cut short logs its failed step; the partial reply the
// caller adds after it is that call's, not a call of its own.
func TestPartialReplyIsOneCall(t *testing.T) {
	tr, rec := recorder()
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	must(t, c.AddMessage(nous.UserMessage("hi")))
	c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "nous: the reply stopped after 3 events: interrupted",
		Usage: nous.Usage{Requests: 1, InputTokens: 10, OutputTokens: 2}})
	partial := nous.AssistantMessage("Hel")
	partial.Metadata = map[string]any{nous.MetadataInterrupted: true}
	must(t, c.AddMessage(partial))
	stop()
	if chats := ofOperation(spans(t, rec), "chat"); len(chats) != 1 {
		t.Errorf("one model call, %d chat spans: %v", len(chats), chats)
	}
}

// A tool's result in gen_ai.input.messages is a tool_call_response part
// with a response, as the conventions' schema requires.
func TestToolCallResponseSchema(t *testing.T) {
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	runLoop(t, c)
	stop()
	in := ofOperation(spans(t, rec), "chat")[1].Attrs["gen_ai.input.messages"].AsString()
	var msgs []struct{ Parts []map[string]any }
	must(t, json.Unmarshal([]byte(in), &msgs))
	for _, m := range msgs {
		for _, p := range m.Parts {
			if _, ok := p["response"]; p["type"] == "tool_call_response" && !ok {
				t.Errorf("tool_call_response part without response: %v", p)
			}
		}
	}
}

// Event times that go back (a wall clock stepped back) give spans that
// end no earlier than they start.
func TestClockStepsBack(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessage(nous.UserMessage("hi")))
	must(t, c.AddMessage(nous.AssistantMessage("hello")))
	c.EndStep(nous.Step{Provider: "openai", Model: "m"})
	b, err := c.Serialize()
	must(t, err)
	var doc map[string]any
	must(t, json.Unmarshal(b, &doc))
	evs := doc["log"].(map[string]any)["events"].([]any)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{t0.Add(time.Second), t0.Add(2 * time.Second), t0} { // the clock steps back 2s before step_end
		evs[i].(map[string]any)["created_at"] = at.Format(time.RFC3339Nano)
	}
	b, _ = json.Marshal(doc)
	back, err := nous.Deserialize(b)
	must(t, err)
	tr, rec := recorder()
	tr.ExportContext(context.Background(), back)
	for _, s := range spans(t, rec) {
		if s.End.Before(s.Start) {
			t.Errorf("%s ends %s before it starts", s.Name, s.Start.Sub(s.End))
		}
	}
}

// Two calls of one reply with the same ID are answered in order: each
// result's span is its own call's.
func TestDuplicateCallIDs(t *testing.T) {
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	must(t, c.AddMessage(nous.UserMessage("both")))
	must(t, c.AddMessage(nous.AssistantMessage("",
		nous.ToolCall{ID: "c", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)},
		nous.ToolCall{ID: "c", Name: "get_time", Arguments: []byte(`{"zone":"CET"}`)})))
	c.EndStep(nous.Step{Provider: "openai", Model: "m"})
	must(t, c.AddMessage(nous.ToolMessage("c", "get_weather", "18C")))
	must(t, c.AddMessage(nous.ToolMessage("c", "get_time", "noon")))
	stop()
	tools := ofOperation(spans(t, rec), "execute_tool")
	if len(tools) != 2 {
		t.Fatalf("%d tool spans", len(tools))
	}
	if n := tools[0].Attrs["gen_ai.tool.name"].AsString(); n != "get_weather" {
		t.Errorf("the get_weather result's span is named for %q, args %s", n, tools[0].Attrs["gen_ai.tool.call.arguments"].String())
	}
	if a := tools[1].Attrs["gen_ai.tool.call.arguments"].AsString(); a != `{"zone":"CET"}` || !tools[1].Start.Before(tools[1].End) {
		t.Errorf("the get_time span: args %s, %s long", a, tools[1].End.Sub(tools[1].Start))
	}
}

// Arguments cut short, not JSON, still have the value of a secret key
// redacted.
func TestTruncatedArguments(t *testing.T) {
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	must(t, c.AddMessage(nous.UserMessage("log in")))
	m := nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "login", Arguments: []byte(`{"user":"ann","password":"pw-cut-short-99`)})
	m.Metadata = map[string]any{nous.MetadataInterrupted: true}
	must(t, c.AddMessage(m))
	c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "interrupted"})
	stop()
	leaks(t, spans(t, rec), "pw-cut-short-99")
}

// A context's rule that names every "token" key keeps the steps' usage
// through a save and a load: the export counts what the live trace does.
func TestBroadRuleKeepsUsage(t *testing.T) {
	rule := func(k string) bool { return nous.IsSecretKey(k) || strings.Contains(k, "token") }
	live, liveRec := recorder()
	c := nous.NewContext(nous.WithRedaction(rule))
	stop := live.Observe(context.Background(), c)
	runLoop(t, c)
	stop()
	store := storetest.NewMemory()
	must(t, c.Save(context.Background(), store))
	back, err := nous.Load(context.Background(), store, c.Log().ID())
	must(t, err)
	exp, expRec := recorder(nousotel.WithRedaction(rule))
	exp.ExportContext(context.Background(), back)
	sameSpans(t, spans(t, liveRec), spans(t, expRec))
}
