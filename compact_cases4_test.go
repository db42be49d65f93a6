package nous_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
)

func TestCompactCaseRollingAfterRoundTrip(t *testing.T) {
	c := turns(t, 12)
	s := nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) { return nous.SystemMessage("summary"), nil })
	for range 3 {
		_, err := c.Compact(context.Background(), count(c)*3/4, nous.WithSummarizer(s), nous.WithSummaryReserve(10))
		mustDo(t, err)
		e, err := nous.DeserializeWithLogger(serialized(t, c), quietLog)
		mustDo(t, err)
		c = e
	}
	v := view(c)
	if v[2].Role == nous.RoleSystem {
		t.Fatalf("summaries piled up after round trips: %v", roles(v))
	}
}
