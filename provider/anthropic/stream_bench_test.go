package anthropic_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// benchStreams are the recorded streams the benchmarks read: a long text
// reply of 400 deltas, and a reply of thinking, text and a tool call.
var benchStreams = []string{"long_text", "thinking_tool"}

// BenchmarkMessageStream is the cost of reading a stream's events, decoded
// beforehand, with a MessageStream (deltas given to a callback), next to
// the SDK's own Message.Accumulate on the same events; and, in the
// "message" pair, with the final message made too (Message for
// MessageStream; Message, the importer, of the accumulated reply for the
// SDK).
func BenchmarkMessageStream(b *testing.B) {
	for _, name := range benchStreams {
		frames, _ := recorded(b, name)
		events := events(b, frames)
		n := len(events)
		perEvent := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		}
		onDelta := func(nous.Delta) {}
		b.Run(name+"/accumulate/MessageStream", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := nousanthropic.MessageStream{OnDelta: onDelta}
				for _, e := range events {
					if err := s.Add(e); err != nil {
						b.Fatal(err)
					}
				}
			}
			perEvent(b)
		})
		b.Run(name+"/accumulate/SDK", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m anthropic.Message
				for _, e := range events {
					if err := m.Accumulate(e); err != nil {
						b.Fatal(err)
					}
				}
			}
			perEvent(b)
		})
		b.Run(name+"/message/MessageStream", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := nousanthropic.MessageStream{OnDelta: onDelta}
				for _, e := range events {
					if err := s.Add(e); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := s.Message(); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
		b.Run(name+"/message/SDK", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m anthropic.Message
				for _, e := range events {
					if err := m.Accumulate(e); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := nousanthropic.Message(&m); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
	}
}
