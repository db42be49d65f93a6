package nousotel_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	nousotel "github.com/nous-go/nous/otel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// recorded loads a session the quickstart agent ran: three turns on
// OpenAI's Chat Completions (a fake), with parallel tool calls and two
// compactions.
func recorded(t testing.TB) *nous.Context {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "quickstart.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordedEvents returns the events of the recorded session.
func recordedEvents(t testing.TB) []nous.Event { return recorded(t).Log().Events() }

// The span tree of a recorded tool loop, attribute by attribute: a turn
// per question, a chat span per model call and an execute_tool span per
// call under it, with the times of the events that bound them.
func TestToolLoopSpans(t *testing.T) {
	c := recorded(t)
	tr, rec := recorder(nousotel.WithAgentName("weather"))
	tr.ExportContext(context.Background(), c)
	got := spans(t, rec)

	want := []struct {
		name   string
		parent int
	}{
		{"chat gpt-5.4-mini", 4}, {"execute_tool get_weather", 4}, {"execute_tool get_weather", 4}, {"chat gpt-5.4-mini", 4},
		{"invoke_agent weather", -1},
		{"chat gpt-5.4-mini", 8}, {"execute_tool get_weather", 8}, {"chat gpt-5.4-mini", 8},
		{"invoke_agent weather", -1},
		{"chat gpt-5.4-mini", 12}, {"execute_tool get_weather", 12}, {"chat gpt-5.4-mini", 12},
		{"invoke_agent weather", -1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d spans, want %d:\n%v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Parent != w.parent {
			t.Errorf("span %d: %s under %d, want %s under %d", i, got[i].Name, got[i].Parent, w.name, w.parent)
		}
	}

	ev := c.Log().Events()
	at := func(seq int) string { return ev[seq-1].CreatedAt.String() }
	conv := c.Log().ID().String()
	checkAttrs(t, got[0], map[string]attribute.Value{
		"gen_ai.operation.name":                attribute.StringValue("chat"),
		"gen_ai.conversation.id":               attribute.StringValue(conv),
		"gen_ai.provider.name":                 attribute.StringValue("openai"),
		"gen_ai.request.model":                 attribute.StringValue("gpt-5.4-mini"),
		"gen_ai.response.model":                attribute.StringValue("scripted"),
		"gen_ai.response.finish_reasons":       attribute.StringSliceValue([]string{"tool_calls"}),
		"gen_ai.usage.input_tokens":            attribute.IntValue(112),
		"gen_ai.usage.output_tokens":           attribute.IntValue(20),
		"gen_ai.usage.cache_read.input_tokens": attribute.Value{}, // absent: none were read
	})
	if got[0].Kind != trace.SpanKindClient || got[0].Start.String() != at(1) || got[0].End.String() != at(3) {
		t.Errorf("the first model call: %s, from %s to %s; want client, from the question (%s) to its step_end (%s)",
			got[0].Kind, got[0].Start, got[0].End, at(1), at(3))
	}
	call := c.Log().Events()[1].Message.ToolCalls[1]
	checkAttrs(t, got[2], map[string]attribute.Value{
		"gen_ai.operation.name":      attribute.StringValue("execute_tool"),
		"gen_ai.conversation.id":     attribute.StringValue(conv),
		"gen_ai.tool.name":           attribute.StringValue("get_weather"),
		"gen_ai.tool.call.id":        attribute.StringValue(call.ID),
		"gen_ai.tool.type":           attribute.StringValue("function"),
		"gen_ai.tool.call.arguments": attribute.Value{}, // content: not asked for
	})
	if got[2].Start.String() != at(3) || got[2].End.String() != at(7) {
		t.Errorf("the second tool call runs from %s to %s; want from the step that asked for it (%s) to its result (%s)", got[2].Start, got[2].End, at(3), at(7))
	}
	checkAttrs(t, got[4], map[string]attribute.Value{
		"gen_ai.operation.name":      attribute.StringValue("invoke_agent"),
		"gen_ai.conversation.id":     attribute.StringValue(conv),
		"gen_ai.agent.name":          attribute.StringValue("weather"),
		"gen_ai.usage.input_tokens":  attribute.IntValue(112 + 210),
		"gen_ai.usage.output_tokens": attribute.IntValue(40),
	})
	if got[4].Start.String() != at(1) || got[4].End.String() != at(9) || got[4].Kind != trace.SpanKindInternal {
		t.Errorf("the first turn runs from %s to %s; want from its question (%s) to its answer's step_end (%s)", got[4].Start, got[4].End, at(1), at(9))
	}
	if got[7].Start.String() != at(15) {
		t.Errorf("the model call after a compaction starts at %s, want at the compaction (%s)", got[7].Start, at(15))
	}
	for i, s := range got {
		if s.Status != codes.Unset || s.End.Before(s.Start) {
			t.Errorf("span %d: %v", i, s)
		}
	}
	golden(t, "quickstart.spans", got)
}

// checkAttrs checks s's attributes named in want; a zero Value is an
// attribute that must be absent.
func checkAttrs(t *testing.T, s span, want map[string]attribute.Value) {
	t.Helper()
	for k, w := range want {
		g, has := s.Attrs[k]
		switch {
		case w.Type() == attribute.EMPTY && has:
			t.Errorf("%s: %s = %s, want none", s.Name, k, g.String())
		case w.Type() != attribute.EMPTY && (!has || g != w && g.String() != w.String() || g.Type() != w.Type()):
			t.Errorf("%s: %s = %s (%s), want %s (%s)", s.Name, k, g.String(), g.Type(), w.String(), w.Type())
		}
	}
}

// golden compares the spans, printed, with testdata/name, which -update
// rewrites.
func golden(t *testing.T, name string, got []span) {
	t.Helper()
	var b strings.Builder
	for i, s := range got {
		b.WriteString(strings.TrimSpace(s.String()))
		if i < len(got)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("the spans differ from %s (go test -update rewrites it):\n%s", path, b.String())
	}
}

// The same session, traced live as it runs and exported from a store
// after a restart, gives the same spans, and a turn bounded by
// turn_start and turn_end is one span, whatever it holds.
func TestLiveAndExportAgree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	live, liveRec := recorder()
	c := nous.NewContext(nous.WithLogName("agree"), nous.WithSystemPrompt("Be brief."))
	stop := live.Observe(ctx, c)
	runLoop(t, c)
	stop()
	if err := c.Save(ctx, store); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	exp, expRec := recorder()
	if err := exp.Export(ctx, reopened, "agree"); err != nil {
		t.Fatal(err)
	}
	a, b := spans(t, liveRec), spans(t, expRec)
	sameSpans(t, a, b)
	if len(a) == 0 {
		t.Fatal("no spans")
	}
	turns := ofOperation(a, "invoke_agent")
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2: %v", len(turns), a)
	}
	if err := exp.Export(ctx, reopened, "nobody"); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("an unknown session: %v, want ErrNotFound", err)
	}
}

// runLoop runs two turns on c: one bounded by turn_start and turn_end,
// with a model call that asks for two tools (one fails) and one that
// answers; one with no bounds whose model call is cut short and then
// retried.
func runLoop(t *testing.T, c *nous.Context) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	calls := []nous.ToolCall{
		{ID: "c1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)},
		{ID: "c2", Name: "get_time", Arguments: []byte(`{"zone":"CET"}`)},
	}
	step := func(in, out int) {
		c.EndStep(nous.Step{Provider: "anthropic", Model: "claude-test", Usage: nous.Usage{Requests: 1, InputTokens: in, OutputTokens: out, TotalTokens: in + out, CacheReadInputTokens: in / 2}})
	}
	must(c.LogEvent(nous.EventTurnStart, nil))
	must(c.AddMessage(nous.UserMessage("Weather and time in Paris?")))
	reply := nous.AssistantMessage("", calls...)
	reply.Metadata = map[string]any{"model": "claude-test-1", "stop_reason": "tool_use"}
	must(c.AddMessage(reply))
	step(100, 10)
	must(c.RunToolCalls(ctx, calls, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		if rc.Call.Name == "get_time" {
			return nous.ToolResult{Err: errors.New("no clock")}
		}
		return nous.ToolResult{Content: "18°C"}
	}))
	answer := nous.AssistantMessage("18°C; the time is unknown.")
	answer.Metadata = map[string]any{"model": "claude-test-1", "stop_reason": "end_turn"}
	must(c.AddMessage(answer))
	step(150, 12)
	must(c.LogEvent(nous.EventTurnEnd, nil))

	must(c.AddMessage(nous.UserMessage("And tomorrow?")))
	c.EndStep(nous.Step{Provider: "anthropic", Model: "claude-test", Error: "nous: the reply stopped after 3 events: interrupted: connection reset",
		Usage: nous.Usage{Requests: 1, InputTokens: 170, TotalTokens: 170}})
	must(c.AddMessage(nous.AssistantMessage("Rain.")))
	step(170, 3)
}

// sameSpans checks that two traces of the same events agree.
func sameSpans(t *testing.T, a, b []span) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d spans and %d:\n%v\n%v", len(a), len(b), a, b)
	}
	for i := range a {
		if a[i].String() != b[i].String() || !a[i].Start.Equal(b[i].Start) || !a[i].End.Equal(b[i].End) {
			t.Errorf("span %d:\n%v\n%v", i, a[i], b[i])
		}
	}
}

// A failure is the span's status: a model call cut short, a tool's error
// result, and the turn whose last call failed; one that a retry answers
// is not.
func TestErrorsAreStatus(t *testing.T) {
	tr, rec := recorder()
	c := nous.NewContext()
	stop := tr.Observe(context.Background(), c)
	runLoop(t, c)
	stop()
	got := spans(t, rec)
	var failed []string
	for _, s := range got {
		if s.Status == codes.Error {
			if s.Attrs["error.type"].AsString() != "_OTHER" {
				t.Errorf("%s fails with error.type %q", s.Name, s.Attrs["error.type"].String())
			}
			failed = append(failed, s.Name+": "+s.Desc)
		} else if _, has := s.Attrs["error.type"]; has {
			t.Errorf("%s has error.type but no error status", s.Name)
		}
	}
	want := []string{
		"execute_tool get_time: the tool returned an error",
		"chat claude-test: nous: the reply stopped after 3 events: interrupted: connection reset",
	}
	if strings.Join(failed, "\n") != strings.Join(want, "\n") {
		t.Errorf("failed spans:\n%s\nwant:\n%s", strings.Join(failed, "\n"), strings.Join(want, "\n"))
	}

	// A turn that ends on a failed call fails.
	tr, rec = recorder()
	c = nous.NewContext()
	stop = tr.Observe(context.Background(), c)
	if err := c.AddMessage(nous.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	c.EndStep(nous.Step{Provider: "openai", Error: "unreadable"})
	stop()
	stop() // a second stop does nothing
	got = spans(t, rec)
	if len(got) != 2 || got[1].Status != codes.Error || got[1].Desc != "unreadable" || got[0].Desc != "unreadable" {
		t.Errorf("a turn ending on a failed call: %v", got)
	}
}

// Observing keeps the observer already set, which still sees every
// event, and stop puts it back.
func TestObserveChains(t *testing.T) {
	var seen int
	c := nous.NewContext(nous.WithObserver(func(nous.Event) { seen++ }))
	tr, rec := recorder()
	stop := tr.Observe(context.Background(), c)
	runLoop(t, c)
	if seen != c.Log().Len() {
		t.Errorf("the first observer saw %d events of %d", seen, c.Log().Len())
	}
	stop()
	if c.Observer == nil {
		t.Fatal("stop removed the first observer")
	}
	n := len(rec.Ended())
	if err := c.AddMessage(nous.UserMessage("after")); err != nil {
		t.Fatal(err)
	}
	if seen != c.Log().Len() || len(rec.Ended()) != n || len(rec.Started()) != n {
		t.Errorf("after stop: the first observer saw %d of %d events; spans %d, then %d started", seen, c.Log().Len(), n, len(rec.Started()))
	}
}

// Turns are children of the caller's span when it has one, in its
// trace; otherwise each turn is a trace of its own.
func TestParentSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := nousotel.NewTracer(tp)
	ctx, parent := tp.Tracer("app").Start(context.Background(), "request")
	tr.ExportContext(ctx, recorded(t))
	parent.End()
	traces := map[trace.TraceID]bool{}
	for _, s := range rec.Ended() {
		traces[s.SpanContext().TraceID()] = true
		if strings.HasPrefix(s.Name(), "invoke_agent") && s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("a turn's parent is %v, not the caller's span", s.Parent().SpanID())
		}
	}
	if len(traces) != 1 {
		t.Errorf("%d traces under one parent", len(traces))
	}

	rec = tracetest.NewSpanRecorder()
	nousotel.NewTracer(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))).ExportContext(context.Background(), recorded(t))
	traces = map[trace.TraceID]bool{}
	for _, s := range rec.Ended() {
		traces[s.SpanContext().TraceID()] = true
	}
	if len(traces) != 3 {
		t.Errorf("three turns with no parent make %d traces, want 3", len(traces))
	}
}

// dropTurns is a sampler that records every span but the turns it is
// told to drop, by their order, and their calls, as a parent-based
// sampler would.
type dropTurns struct {
	drop  map[int]bool
	turns *int
}

func (d dropTurns) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if strings.HasPrefix(p.Name, "invoke_agent") {
		*d.turns++
		if d.drop[*d.turns] {
			return sdktrace.SamplingResult{Decision: sdktrace.Drop}
		}
		return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
	}
	if !trace.SpanContextFromContext(p.ParentContext).IsSampled() {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (dropTurns) Description() string { return "dropTurns" }

// A turn the tracer does not record has no spans of its calls, and
// the turns it records have all of theirs, as when every turn is.
func TestUnrecordedTurns(t *testing.T) {
	all := func() []span {
		tr, rec := recorder()
		tr.ExportContext(context.Background(), recorded(t))
		return spans(t, rec)
	}()
	var turns int
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithSampler(dropTurns{drop: map[int]bool{2: true}, turns: &turns}))
	nousotel.NewTracer(tp).ExportContext(context.Background(), recorded(t))
	got := spans(t, rec)
	// The second turn is spans 5 to 8 of all of them.
	want := append(append([]span(nil), all[:5]...), all[9:]...)
	for i := range want {
		if want[i].Parent > 8 {
			want[i].Parent -= 4
		}
	}
	if turns != 3 || len(rec.Started()) != len(want) {
		t.Errorf("%d turns sampled, %d spans started; want 3 and %d", turns, len(rec.Started()), len(want))
	}
	sameSpans(t, got, want)
}
