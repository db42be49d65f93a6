package nousotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
	"github.com/nous-go/nous/storetest"
)

// traced runs run on a context made with opts, traced live by a tracer
// made with topts, and returns its spans and the context.
func traced(t *testing.T, topts []nousotel.Option, run func(c *nous.Context), opts ...nous.Option) ([]span, *nous.Context) {
	t.Helper()
	tr, rec := recorder(topts...)
	c := nous.NewContext(opts...)
	stop := tr.Observe(context.Background(), c)
	run(c)
	stop()
	return spans(t, rec), c
}

func lastEvent(c *nous.Context) nous.Event {
	e, _ := c.Log().Event(int64(c.Log().Len()))
	return e
}

// A secret of 4 bytes is masked; one of 3 is not looked for.
func TestShortestSecret(t *testing.T) {
	got, _ := traced(t, nil, func(c *nous.Context) {
		must(t, c.AddMessage(nous.UserMessage("hi")))
		c.EndStep(nous.Step{Error: "pin abcd, code xyz"})
	}, nous.WithDeps(map[string]any{"pin_password": "abcd", "code_secret": "xyz"}))
	if d := ofOperation(got, "chat")[0].Desc; d != "pin [REDACTED], code xyz" {
		t.Errorf("status %q", d)
	}
}

// A step_start is when the model call starts, whatever is logged between
// it and the reply.
func TestStepStart(t *testing.T) {
	var at nous.Event
	got, _ := traced(t, nil, func(c *nous.Context) {
		must(t, c.AddMessage(nous.UserMessage("hi")))
		must(t, c.LogEvent(nous.EventStepStart, nil))
		at = lastEvent(c)
		must(t, c.LogEvent(nous.EventRequestHeader, map[string]any{"x": 1}))
		must(t, c.AddMessage(nous.AssistantMessage("hello")))
		c.EndStep(nous.Step{})
	})
	if s := ofOperation(got, "chat")[0]; !s.Start.Equal(at.CreatedAt) {
		t.Errorf("the call starts at %s, want its step_start's %s", s.Start, at.CreatedAt)
	}
}

// A turn bounded by turn_start and turn_end is one span however many
// answers it holds, and ends at its turn_end.
func TestExplicitTurn(t *testing.T) {
	var end nous.Event
	got, _ := traced(t, nil, func(c *nous.Context) {
		must(t, c.LogEvent(nous.EventTurnStart, nil))
		for range 2 {
			must(t, c.AddMessage(nous.UserMessage("hi")))
			must(t, c.AddMessage(nous.AssistantMessage("hello")))
			c.EndStep(nous.Step{})
		}
		must(t, c.LogEvent(nous.EventTurnEnd, nil))
		end = lastEvent(c)
		must(t, c.LogEvent(nous.EventRequestHeader, nil))
	})
	turns := ofOperation(got, "invoke_agent")
	if len(turns) != 1 || !turns[0].End.Equal(end.CreatedAt) {
		t.Errorf("%d turns, the first ending at %v; want 1, ending at its turn_end %s", len(turns), turns, end.CreatedAt)
	}
}

// counting is a tracer provider that counts the spans its tracers start.
type counting struct {
	embedded.TracerProvider
	tp trace.TracerProvider
	n  *int
}

func (p counting) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return countingTracer{Tracer: p.tp.Tracer(name, opts...), n: p.n}
}

type countingTracer struct {
	trace.Tracer
	n *int
}

func (t countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	*t.n++
	return t.Tracer.Start(ctx, name, opts...)
}

// A turn the sampler drops starts no span of its calls.
func TestDroppedTurnStartsNothingElse(t *testing.T) {
	var n int
	tp := counting{tp: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())), n: &n}
	nousotel.NewTracer(tp).ExportContext(context.Background(), recorded(t))
	if n != 3 {
		t.Errorf("%d spans started, want the 3 turns'", n)
	}
}

// Each usage count is its attribute; the provider adapters' names are
// the conventions' provider names.
func TestStepAttributes(t *testing.T) {
	u := nous.Usage{InputTokens: 100, OutputTokens: 20, CacheReadInputTokens: 60, CacheCreationInputTokens: 7, ReasoningTokens: 5}
	for provider, want := range map[string]string{"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gen_ai", "mistral_ai": "mistral_ai"} {
		got, _ := traced(t, nil, func(c *nous.Context) {
			must(t, c.AddMessage(nous.UserMessage("hi")))
			must(t, c.AddMessage(nous.AssistantMessage("hello")))
			c.EndStep(nous.Step{Provider: provider, Model: "m", Usage: u})
		})
		checkAttrs(t, ofOperation(got, "chat")[0], map[string]attribute.Value{
			"gen_ai.provider.name":                     attribute.StringValue(want),
			"gen_ai.usage.input_tokens":                attribute.IntValue(100),
			"gen_ai.usage.output_tokens":               attribute.IntValue(20),
			"gen_ai.usage.cache_read.input_tokens":     attribute.IntValue(60),
			"gen_ai.usage.cache_creation.input_tokens": attribute.IntValue(7),
			"gen_ai.usage.reasoning.output_tokens":     attribute.IntValue(5),
		})
	}
}

// Without content, a secret a tool set is masked in a later step's
// error; with content, in a tool's error.
func TestErrorsMaskSecretsSetLater(t *testing.T) {
	const key = "sk-set-later-77"
	for _, content := range []bool{false, true} {
		var topts []nousotel.Option
		if content {
			topts = append(topts, nousotel.WithContent())
		}
		got, _ := traced(t, topts, func(c *nous.Context) {
			must(t, c.AddMessage(nous.UserMessage("hi")))
			c.EndStep(nous.Step{Error: "first"}) // the masker is made here, before the key
			call := nous.ToolCall{ID: "c1", Name: "rotate"}
			must(t, c.AddMessage(nous.AssistantMessage("", call)))
			c.EndStep(nous.Step{})
			must(t, c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult {
				return nous.ToolResult{Content: "ok", Update: nous.NewContextUpdate().Set("api_key", key)}
			}))
			call2 := nous.ToolCall{ID: "c2", Name: "use"}
			must(t, c.AddMessage(nous.AssistantMessage("", call2)))
			c.EndStep(nous.Step{})
			must(t, c.RunToolCalls(context.Background(), []nous.ToolCall{call2}, func(context.Context, nous.RunContext) nous.ToolResult {
				return nous.ToolResult{Content: "refused " + key, Err: errNope}
			}))
			c.EndStep(nous.Step{Error: "said " + key})
		})
		leaks(t, got, key)
	}
}

var errNope = &nopeError{}

type nopeError struct{}

func (*nopeError) Error() string { return "nope" }

// A call ID a later reply uses again is that reply's call: its span
// starts at that reply's step.
func TestCallIDUsedAgain(t *testing.T) {
	var asked nous.Event
	got, _ := traced(t, nil, func(c *nous.Context) {
		for range 2 {
			must(t, c.AddMessage(nous.UserMessage("hi")))
			call := nous.ToolCall{ID: "c1", Name: "f"}
			must(t, c.AddMessage(nous.AssistantMessage("", call)))
			c.EndStep(nous.Step{})
			asked = lastEvent(c)
			must(t, c.AddMessage(nous.ToolMessage("c1", "f", "ok")))
			must(t, c.AddMessage(nous.AssistantMessage("done")))
			c.EndStep(nous.Step{})
		}
	})
	tools := ofOperation(got, "execute_tool")
	if len(tools) != 2 || !tools[1].Start.Equal(asked.CreatedAt) {
		t.Errorf("the second call's span starts at %s, want its reply's step_end %s", tools[1].Start, asked.CreatedAt)
	}
}

// Reasoning and an image's URL are content, masked.
func TestReasoningAndURLsMasked(t *testing.T) {
	const key = "sk-in-a-url-123"
	got, _ := traced(t, []nousotel.Option{nousotel.WithContent()}, func(c *nous.Context) {
		u := nous.UserMessage("look")
		u.Parts = []nous.ContentPart{nous.ImageURLPart("https://x.test/i.png?key=" + key)}
		must(t, c.AddMessage(u))
		a := nous.AssistantMessage("seen")
		a.ReasoningContent = "the key is " + key
		a.Parts = []nous.ContentPart{nous.ThinkingPart("again "+key, "")}
		must(t, c.AddMessage(a))
		c.EndStep(nous.Step{})
	}, nous.WithDeps(map[string]any{"api_key": key}))
	leaks(t, got, key)
	if out := ofOperation(got, "chat")[0].Attrs["gen_ai.output.messages"].AsString(); !strings.Contains(out, `"type":"reasoning"`) {
		t.Errorf("no reasoning part: %s", out)
	}
}

// A tracer of the no-op provider leaves the context unobserved.
func TestNoopObservesNothing(t *testing.T) {
	c := nous.NewContext()
	stop := nousotel.NewTracer(noop.NewTracerProvider()).Observe(context.Background(), c)
	if c.Observer != nil {
		t.Error("a no-op tracer observes the context")
	}
	stop()
}

// A reply without a finish reason gets the conventions' own: tool_call
// when it calls a tool, stop otherwise; a reply cut short, with no step,
// fails.
func TestFinishReasons(t *testing.T) {
	got, _ := traced(t, []nousotel.Option{nousotel.WithContent()}, func(c *nous.Context) {
		must(t, c.AddMessage(nous.UserMessage("hi")))
		must(t, c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})))
		c.EndStep(nous.Step{})
		must(t, c.AddMessage(nous.ToolMessage("c1", "f", "ok")))
		must(t, c.AddMessage(nous.AssistantMessage("done")))
		c.EndStep(nous.Step{})
		must(t, c.AddMessage(nous.UserMessage("more")))
		partial := nous.AssistantMessage("Hel")
		partial.Metadata = map[string]any{nous.MetadataInterrupted: true}
		must(t, c.AddMessage(partial))
	})
	chats := ofOperation(got, "chat")
	for i, want := range []string{`"finish_reason":"tool_call"`, `"finish_reason":"stop"`} {
		if out := chats[i].Attrs["gen_ai.output.messages"].AsString(); !strings.Contains(out, want) {
			t.Errorf("call %d: %s, want %s", i, out, want)
		}
	}
	if len(chats) != 3 || chats[2].Status != codes.Error || chats[2].Desc != "the reply was cut short" {
		t.Errorf("the cut reply: %v", chats[len(chats)-1])
	}
}

// A call asked for in a turn that ended before its result is answered
// in a turn that starts no earlier than the first ended.
func TestTurnsDoNotOverlap(t *testing.T) {
	got, _ := traced(t, nil, func(c *nous.Context) {
		must(t, c.LogEvent(nous.EventTurnStart, nil))
		must(t, c.AddMessage(nous.UserMessage("hi")))
		must(t, c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})))
		c.EndStep(nous.Step{})
		must(t, c.LogEvent(nous.EventTurnEnd, nil))
		must(t, c.AddMessage(nous.ToolMessage("c1", "f", "late")))
	})
	turns := ofOperation(got, "invoke_agent")
	if len(turns) != 2 || turns[1].Start.Before(turns[0].End) {
		t.Errorf("turns %v", turns)
	}
}

type keyConfig struct {
	Key string `json:"api_key"`
}

// A struct's field is a secret by its JSON name as by its Go name.
func TestFieldSecretByJSONName(t *testing.T) {
	const key = "sk-by-json-name-5"
	got, _ := traced(t, nil, func(c *nous.Context) {
		must(t, c.AddMessage(nous.UserMessage("hi")))
		c.EndStep(nous.Step{Error: "refused " + key})
	}, nous.WithDeps(map[string]any{"conf": keyConfig{Key: key}}))
	leaks(t, got, key)
}

// A tool's result of null is a response of null, which the schema
// requires to be there.
func TestNullToolResponse(t *testing.T) {
	got, _ := traced(t, []nousotel.Option{nousotel.WithContent()}, func(c *nous.Context) {
		must(t, c.AddMessage(nous.UserMessage("hi")))
		must(t, c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})))
		c.EndStep(nous.Step{})
		must(t, c.AddMessage(nous.ToolMessage("c1", "f", "null")))
		must(t, c.AddMessage(nous.AssistantMessage("done")))
		c.EndStep(nous.Step{})
	})
	jsonAttr(t, ofOperation(got, "chat")[1], "gen_ai.input.messages", `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":null}]}]`)
}

// Observing from a question or a reply on traces the turn or the model
// call it is part of, whether the log was saved since (it then ends with
// the save's batch event, after the deps' changes the save records).
func TestObserveMidTurn(t *testing.T) {
	for _, saved := range []bool{false, true} {
		for _, reply := range []bool{false, true} {
			c := nous.NewContext()
			must(t, c.AddMessage(nous.UserMessage("hi")))
			question := lastEvent(c)
			if reply {
				must(t, c.AddMessage(nous.AssistantMessage("hello")))
			}
			if saved {
				c.Deps["k"] = "v"
				must(t, c.Save(context.Background(), storetest.NewMemory()))
				if e := lastEvent(c); e.Type != nous.EventBatch {
					t.Fatalf("the saved log ends with a %s event", e.Type)
				}
			}
			tr, rec := recorder()
			stop := tr.Observe(context.Background(), c)
			if !reply {
				must(t, c.AddMessage(nous.AssistantMessage("hello")))
			}
			c.EndStep(nous.Step{Model: "m"})
			stop()
			got := spans(t, rec)
			if len(got) != 2 || got[0].Status != codes.Unset || !got[1].Start.Equal(question.CreatedAt) && !reply {
				t.Errorf("saved %v, observed from the %s: %v", saved, map[bool]string{false: "question", true: "reply"}[reply], got)
			}
		}
	}
}

// A compaction's summary made by a model is a chat span of its turn,
// with its usage and the summary as its output; the turn goes on, and the
// next call's input is the question and the summary.
func TestSummarizerCall(t *testing.T) {
	u := nous.Usage{Requests: 1, InputTokens: 40, OutputTokens: 8, TotalTokens: 48}
	summarizer := nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
		m := nous.UserMessage("Summary: Paris was asked about.")
		m.Metadata = map[string]any{"model": "summarizer-1"}
		return m, u, nil
	})
	got, c := traced(t, []nousotel.Option{nousotel.WithContent()}, func(c *nous.Context) {
		for i := range 10 {
			must(t, c.AddMessage(nous.UserMessage(fmt.Sprintf("question %d about the weather in Paris", i))))
			must(t, c.AddMessage(nous.AssistantMessage("an answer about the weather in Paris, at length")))
			c.EndStep(nous.Step{})
		}
		must(t, c.AddMessage(nous.UserMessage("And now?")))
		if _, err := c.Compact(context.Background(), 120, nous.WithSummarizer(summarizer), nous.WithSummaryReserve(40)); err != nil {
			t.Fatal(err)
		}
		must(t, c.AddMessage(nous.AssistantMessage("Sunny.")))
		c.EndStep(nous.Step{})
	})
	_ = c
	chats := ofOperation(got, "chat")
	if len(chats) != 12 {
		t.Fatalf("%d chat spans, want 12", len(chats))
	}
	sum, last := chats[10], chats[11]
	checkAttrs(t, sum, map[string]attribute.Value{
		"gen_ai.usage.input_tokens": attribute.IntValue(40),
		"gen_ai.response.model":     attribute.StringValue("summarizer-1"),
	})
	jsonAttr(t, sum, "gen_ai.output.messages", `[{"role":"user","parts":[{"type":"text","content":"Summary: Paris was asked about."}],"finish_reason":"stop"}]`)
	if sum.Status != codes.Unset || sum.Parent != last.Parent {
		t.Errorf("the summarizer's span: %v; the next call's parent %d", sum, last.Parent)
	}
	in := last.Attrs["gen_ai.input.messages"].AsString()
	if !strings.Contains(in, "And now?") || !strings.Contains(in, "Summary: Paris") {
		t.Errorf("the next call's input: %s", in)
	}
}

// A batch event, which ends every batch a save stores, is no event of the
// run: a session whose every event is followed by one (between a replace
// and the step_end of the summarizer's call, a failed step and the
// partial reply the caller adds, a reply and its step_end, a turn_end and
// the next question) has the spans of the session without them, at the
// same times.
func TestBatchEventsChangeNothing(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	runLoop(t, c)
	must(t, c.AddMessage(nous.UserMessage("And the day after?")))
	c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "nous: the reply stopped after 3 events: interrupted"})
	partial := nous.AssistantMessage("Clou")
	partial.Metadata = map[string]any{nous.MetadataInterrupted: true}
	must(t, c.AddMessage(partial))
	for i := range 6 {
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprintf("question %d about the weather in Paris", i))))
		must(t, c.AddMessage(nous.AssistantMessage("an answer about the weather in Paris, at length")))
		c.EndStep(nous.Step{})
	}
	summarizer := nous.UsageSummarizerFunc(func(context.Context, []nous.Message) (nous.Message, nous.Usage, error) {
		return nous.UserMessage("Summary: Paris was asked about."), nous.Usage{Requests: 1, InputTokens: 40}, nil
	})
	if _, err := c.Compact(context.Background(), 120, nous.WithSummarizer(summarizer), nous.WithSummaryReserve(40)); err != nil {
		t.Fatal(err)
	}
	must(t, c.AddMessage(nous.AssistantMessage("Sunny.")))
	c.EndStep(nous.Step{})

	events := c.Log().Events()
	var batched []nous.Event
	replaced := false
	for i, e := range events {
		// Each batch event between its event and the next, in time.
		at := e.CreatedAt.Add(time.Millisecond)
		if i+1 < len(events) {
			at = e.CreatedAt.Add(events[i+1].CreatedAt.Sub(e.CreatedAt) / 2)
		}
		batched = append(batched, e, nous.Event{Type: nous.EventBatch, Data: map[string]any{nous.DataKeys: []any{fmt.Sprint("b", i)}}, CreatedAt: at})
		replaced = replaced || e.Type == nous.EventReplace && i+1 < len(events) && events[i+1].Type == nous.EventStepEnd
	}
	if !replaced {
		t.Fatal("the session has no summarizer's call")
	}
	tr, rec := recorder(nousotel.WithContent(), nousotel.WithAgentName("a"))
	into := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	var got [2][]span
	for i, evs := range [][]nous.Event{events, batched} {
		rec.Reset()
		stop := tr.Observe(context.Background(), into)
		for _, e := range evs {
			into.Observer(e)
		}
		stop()
		got[i] = spans(t, rec)
	}
	sameSpans(t, got[0], got[1])
	// runLoop's two turns of two calls each, the turn of the cut call
	// (one span, its partial reply included), six of one call, and the
	// summarizer's call with the answer after it.
	if turns, chats := len(ofOperation(got[0], "invoke_agent")), len(ofOperation(got[0], "chat")); turns != 10 || chats != 13 {
		t.Errorf("%d turns and %d chat spans, want 10 and 13:\n%v", turns, chats, got[0])
	}
}
