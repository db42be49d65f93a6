package nous_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
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
