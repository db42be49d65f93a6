package benchmarks

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	nousotel "github.com/nous-go/nous/otel"
)

// impls are the implementations the benchmark compares, by name.
var impls = []struct {
	name string
	new  func() (Conversation, error)
}{
	{"nous", func() (Conversation, error) { return NewNous(false), nil }},
	{"nous-messages", func() (Conversation, error) { return NewNous(true), nil }},
	{"nous-otel", func() (Conversation, error) { return newTraced(drop), nil }},
	{"adk", func() (Conversation, error) { return NewADK(true) }},
	{"adk-nocopy", func() (Conversation, error) { return NewADK(false) }},
	{"naive", func() (Conversation, error) { return NewNaive(), nil }},
}

// TestSameConversation checks that every implementation ends the same
// conversation with the same history and state.
func TestSameConversation(t *testing.T) {
	const turns = 50
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			c, err := impl.new()
			if err != nil {
				t.Fatal(err)
			}
			for i := range turns {
				n, err := c.Turn(i)
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				// The system prompt (nous and naive) or nothing (ADK),
				// then three messages per earlier turn and the user's.
				if want := 3*i + 1; n != want && n != want+1 {
					t.Fatalf("turn %d: the request has %d messages, want %d (+1 for a system message)", i, n, want)
				}
			}
			msgs, cities, last, err := c.Summary()
			if err != nil {
				t.Fatal(err)
			}
			if want := 3 * turns; msgs != want && msgs != want+1 {
				t.Errorf("%d messages, want %d (+1 for a system message)", msgs, want)
			}
			if cities != turns || last != turn(turns-1).city {
				t.Errorf("state: %d cities, last %q; want %d, %q", cities, last, turns, turn(turns-1).city)
			}
		})
	}
}

// BenchmarkConversation runs a whole conversation of the given number of
// turns per op, in each implementation, and reports the average cost of a
// turn: ns/turn, B/turn and allocs/turn (ns/op, B/op and allocs/op are per
// conversation). A turn's walk covers the whole
// history, so the average turn of a conversation of n turns walks about 1.5n
// messages.
func BenchmarkConversation(b *testing.B) {
	for _, turns := range []int{250, 1000, 4000} {
		for _, impl := range impls {
			b.Run("turns="+strconv.Itoa(turns)+"/impl="+impl.name, func(b *testing.B) {
				if turns > 1000 && testing.Short() {
					// A conversation of 4,000 turns takes about a minute
					// in ADK and in the naive context: too long for CI's
					// quick check.
					b.Skip("-short: 4,000 turns only in a full run")
				}
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					c, err := impl.new()
					if err != nil {
						b.Fatal(err)
					}
					if err := Run(c, turns); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				n := float64(b.N) * float64(turns)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/turn")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/turn")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/turn")
			})
		}
	}
}

// The tracer providers of a traced conversation: the no-op provider,
// whose tracer observes nothing, and the SDK's with a sampler that
// records nothing, which makes every span and drops it (tracing off in
// production): the cost of the hook, of the fold and of the SDK's
// sampling; and the SDK's recording every span, exported nowhere.
var (
	noopProvider = noop.NewTracerProvider()
	drop         = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	record       = sdktrace.NewTracerProvider() // every span recorded, then given to no exporter
)

// newTraced returns the nous conversation traced live by nousotel with
// a tracer of tp.
func newTraced(tp trace.TracerProvider) *Nous {
	n := NewNous(false)
	nousotel.NewTracer(tp).Observe(context.Background(), n.c)
	return n
}

// BenchmarkTracedConversation runs the nous conversation of each size
// twice per op, once plain and once traced live by nousotel (newTraced),
// in turns, so that both see the same machine, and reports the ratio of
// their times: traced/plain, the overhead of tracing that records
// nothing.
func BenchmarkTracedConversation(b *testing.B) {
	for _, turns := range []int{250, 1000} {
		for _, tp := range []struct {
			name string
			tp   trace.TracerProvider
		}{{"noop", noopProvider}, {"sdk-drop", drop}, {"sdk-record", record}} {
			b.Run("turns="+strconv.Itoa(turns)+"/tracer="+tp.name, func(b *testing.B) { benchTraced(b, turns, tp.tp) })
		}
	}
}

func benchTraced(b *testing.B, turns int, tp trace.TracerProvider) {
	var plain, traced time.Duration
	i := 0
	for b.Loop() {
		for k := range 2 {
			on := (i+k)%2 == 1 // which goes first alternates
			c := NewNous(false)
			if on {
				c = newTraced(tp)
			}
			start := time.Now()
			if err := Run(c, turns); err != nil {
				b.Fatal(err)
			}
			if on {
				traced += time.Since(start)
			} else {
				plain += time.Since(start)
			}
		}
		i++
	}
	b.ReportMetric(float64(traced)/float64(plain), "traced/plain")
}
