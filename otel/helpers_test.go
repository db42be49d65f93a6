package nousotel_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	nousotel "github.com/nous-go/nous/otel"
)

// recorder returns a tracer whose spans are recorded, and the recorder.
func recorder(opts ...nousotel.Option) (*nousotel.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return nousotel.NewTracer(tp, opts...), rec
}

// span is a recorded span as the tests compare them: its parent by its
// index among the spans recorded (-1 for none of them), in the order
// they ended.
type span struct {
	Name       string
	Kind       trace.SpanKind
	Parent     int
	Attrs      map[string]attribute.Value
	Start, End time.Time
	Status     codes.Code
	Desc       string
}

func (s span) String() string {
	keys := make([]string, 0, len(s.Attrs))
	for k := range s.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) parent %d, %s", s.Name, s.Kind, s.Parent, s.End.Sub(s.Start))
	if s.Status != codes.Unset {
		fmt.Fprintf(&b, ", %s %q", s.Status, s.Desc)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "\n\t%s = %s", k, s.Attrs[k].String())
	}
	return b.String()
}

// spans returns what rec recorded, flattened.
func spans(t *testing.T, rec *tracetest.SpanRecorder) []span {
	t.Helper()
	ended := rec.Ended()
	index := make(map[trace.SpanID]int, len(ended))
	for i, s := range ended {
		index[s.SpanContext().SpanID()] = i
	}
	out := make([]span, len(ended))
	for i, s := range ended {
		parent := -1
		if p := s.Parent(); p.IsValid() {
			if j, ok := index[p.SpanID()]; ok {
				parent = j
			}
		}
		attrs := make(map[string]attribute.Value, len(s.Attributes()))
		for _, kv := range s.Attributes() {
			if _, dup := attrs[string(kv.Key)]; dup {
				t.Errorf("span %d (%s) sets %s twice", i, s.Name(), kv.Key)
			}
			attrs[string(kv.Key)] = kv.Value
		}
		out[i] = span{Name: s.Name(), Kind: s.SpanKind(), Parent: parent, Attrs: attrs,
			Start: s.StartTime(), End: s.EndTime(), Status: s.Status().Code, Desc: s.Status().Description}
	}
	return out
}

// ofOperation returns the spans of operation op.
func ofOperation(all []span, op string) []span {
	var out []span
	for _, s := range all {
		if s.Attrs["gen_ai.operation.name"].AsString() == op {
			out = append(out, s)
		}
	}
	return out
}
