package main

import (
	"context"
	"io"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
)

// ADK's runner and nous's tracer in one program, on one TracerProvider:
// this module builds with both (nous/otel requires the OpenTelemetry ADK
// builds with), and each one's spans reach the provider.
func TestTracesOfBoth(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	global := otel.GetTracerProvider()
	otel.SetTracerProvider(tp) // ADK's runner traces through the global provider
	defer otel.SetTracerProvider(global)

	if err := run(context.Background(), t.TempDir(), io.Discard); err != nil {
		t.Fatal(err)
	}
	c := nous.NewContext()
	stop := nousotel.NewTracer(tp, nousotel.WithAgentName("nous-agent")).Observe(context.Background(), c)
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMessage(nous.AssistantMessage("18°C.")); err != nil {
		t.Fatal(err)
	}
	c.EndStep(nous.Step{Provider: "openai", Model: "gpt-5.4-mini"})
	stop()

	scopes := map[string]int{}
	for _, s := range rec.Ended() {
		scopes[s.InstrumentationScope().Name]++
	}
	if scopes[nousotel.ScopeName] == 0 || len(scopes) < 2 {
		t.Errorf("spans by instrumentation scope: %v; want nous's and ADK's", scopes)
	}
}
