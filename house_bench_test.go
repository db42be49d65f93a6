package nous_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// BenchmarkCompactTurn is a run that compacts before each model call: a
// turn (a question and its answer) is added, then Compact at a fixed
// budget replaces the oldest turns with a summary once they no longer fit,
// so that most calls find the view within budget and some apply a
// summary. ns/op is one turn with its Compact.
func BenchmarkCompactTurn(b *testing.B) {
	c := nous.NewContext()
	summarize := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		return nous.SummaryMessage("earlier turns"), nil
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.AddMessages(nous.UserMessage("what is the weather in Paris today?"), nous.AssistantMessage("Sunny, 21 degrees, a light wind from the west.")); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Compact(ctx, 2000, nous.WithSummarizer(summarize), nous.WithKeepTurns(2)); err != nil {
			b.Fatal(err)
		}
	}
}

// bytesStore is a store that keeps nothing and counts the bytes of the
// batches it is given: the events and the state a save writes.
type bytesStore struct {
	nous.Store
	bytes, events, saves int
}

func (s *bytesStore) Append(ctx context.Context, b nous.Batch) error {
	s.saves++
	s.bytes += len(b.State)
	for _, e := range b.Events {
		s.bytes += len(e)
		s.events += len(e)
	}
	return s.Store.Append(ctx, b)
}

// BenchmarkSaveDeps is a turn whose tools change the deps, saved: a
// question and an answer, an update that appends a note and sets a
// counter, a dep set directly, and a Save to a store in memory. bytes/save
// is what each save writes, events and state, event-bytes/save the events
// alone; they grow with the record of the deps' changes and the batch
// event in the log.
func BenchmarkSaveDeps(b *testing.B) {
	s := &bytesStore{Store: storetest.NewMemory()}
	c := nous.NewContext(nous.WithDeps(map[string]any{"user": "ada", "prefs": map[string]any{"units": "metric"}}))
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		if err := c.AddMessage(nous.UserMessage("what is the weather in Paris today?")); err != nil {
			b.Fatal(err)
		}
		if err := nous.NewContextUpdate().Append("notes", "asked about Paris").Set("turns", i).Apply(c); err != nil {
			b.Fatal(err)
		}
		c.Deps["last_city"] = "Paris"
		if err := c.AddMessage(nous.AssistantMessage("Sunny, 21 degrees.")); err != nil {
			b.Fatal(err)
		}
		if err := c.Save(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.bytes)/float64(s.saves), "bytes/save")
	b.ReportMetric(float64(s.events)/float64(s.saves), "event-bytes/save")
}
