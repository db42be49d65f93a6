package nousotel_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
)

// BenchmarkExport folds the recorded session's events into spans, with
// a tracer that records nothing and with the SDK recording every span:
// the fold's cost per event, the tracer's beside it.
func BenchmarkExport(b *testing.B) {
	b.Run("tracer=noop", func(b *testing.B) {
		benchExport(b, nousotel.NewTracer(noop.NewTracerProvider()))
	})
	b.Run("tracer=sdk", func(b *testing.B) {
		tr, _ := recorder()
		benchExport(b, tr)
	})
	b.Run("tracer=sdk/content", func(b *testing.B) {
		tr, _ := recorder(nousotel.WithContent())
		benchExport(b, tr)
	})
}

func benchExport(b *testing.B, tr *nousotel.Tracer) {
	c := nous.NewContext()
	for range 100 {
		for _, e := range recordedEvents(b) {
			if e.Message != nil {
				_ = c.AddMessage(*e.Message)
			} else if s, ok := nous.StepOf(e); ok {
				c.EndStep(s)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.ExportContext(context.Background(), c)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Log().Len()), "ns/event")
}

// quiet is the no-op provider under another type, which the tracer does
// not know for one: the fold runs on every event, and the tracer's
// spans cost nothing.
type quiet struct{ noop.TracerProvider }

// BenchmarkObserve feeds a turn's three events (a question, a reply
// calling a tool, its result) to an observed context's Observer: the
// fold's cost per turn alone, with a tracer that costs nothing (quiet)
// and with the SDK's dropping every span.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"tracer=quiet", quiet{}},
		{"tracer=sdk-drop", sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := nous.NewContext()
			nousotel.NewTracer(tc.tp).Observe(context.Background(), c)
			call := nous.ToolCall{ID: "c1", Name: "f", Arguments: []byte(`{}`)}
			u, a, r := nous.UserMessage("q"), nous.AssistantMessage("", call), nous.ToolMessage("c1", "f", "r")
			at := time.Now()
			turn := []nous.Event{
				{Seq: 1, Type: nous.EventUserMessage, Message: &u, CreatedAt: at},
				{Seq: 2, Type: nous.EventAssistantMessage, Message: &a, CreatedAt: at},
				{Seq: 3, Type: nous.EventToolResult, Message: &r, CreatedAt: at},
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range turn {
					c.Observer(e)
				}
			}
		})
	}
}
