package nousotel_test

import (
	"context"
	"testing"

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
