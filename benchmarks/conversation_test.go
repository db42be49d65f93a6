package benchmarks

import (
	"runtime"
	"strconv"
	"testing"
)

// impls are the implementations the benchmark compares, by name.
var impls = []struct {
	name string
	new  func() (Conversation, error)
}{
	{"nous", func() (Conversation, error) { return NewNous(false), nil }},
	{"nous-messages", func() (Conversation, error) { return NewNous(true), nil }},
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
