package nousotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
)

// A turn traced live: the spans end as the run goes, each with the
// conventions' attributes (here, a few of them).
func ExampleTracer_Observe() {
	rec := tracetest.NewSpanRecorder() // any exporter: stdouttrace, OTLP, ...
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracer := nousotel.NewTracer(tp, nousotel.WithAgentName("weather"))

	ctx := context.Background()
	c := nous.NewContext()
	stop := tracer.Observe(ctx, c)
	call := nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	_ = c.AddMessage(nous.UserMessage("Weather in Paris?"))
	_ = c.AddMessage(nous.AssistantMessage("", call)) // what a provider's Send adds, then:
	c.EndStep(nous.Step{Provider: "openai", Model: "gpt-5.4-mini", Usage: nous.Usage{InputTokens: 52, OutputTokens: 9}})
	_ = c.RunToolCalls(ctx, []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult {
		return nous.ToolResult{Content: "18°C"}
	})
	_ = c.AddMessage(nous.AssistantMessage("18°C in Paris."))
	c.EndStep(nous.Step{Provider: "openai", Model: "gpt-5.4-mini", Usage: nous.Usage{InputTokens: 70, OutputTokens: 6}})
	stop()

	for _, s := range rec.Ended() {
		fmt.Print(s.Name())
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "gen_ai.usage.input_tokens", "gen_ai.tool.call.id":
				fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
			}
		}
		fmt.Println()
	}
	// Output:
	// chat gpt-5.4-mini gen_ai.usage.input_tokens=52
	// execute_tool get_weather gen_ai.tool.call.id=call_1
	// chat gpt-5.4-mini gen_ai.usage.input_tokens=70
	// invoke_agent weather gen_ai.usage.input_tokens=122
}
