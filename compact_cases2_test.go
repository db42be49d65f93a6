package nous_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
)

func TestCompactCaseDuplicateIDSpreadGroupCompact(t *testing.T) {
	x := nous.ToolCall{ID: "call_0", Name: "f"}
	c := rv(t, nous.SystemMessage("s"), nous.UserMessage("u1"),
		nous.AssistantMessage(words(100), x), nous.AssistantMessage("", x),
		nous.ToolMessage("call_0", "f", "r1"), nous.ToolMessage("call_0", "f", "r2"),
		nous.AssistantMessage("done"), nous.UserMessage("u2"), nous.AssistantMessage("a2"))
	p, err := c.Compact(context.Background(), count(c)-90, nous.WithSummaryReserve(10))
	t.Logf("plan %d..%d err %v; view %v; pairing %v", p.First, p.Last, err, roles(view(c)), c.CheckToolPairing())
	if err == nil && p.Last == 2 {
		t.Fatalf("Compact cut inside the group A(x) A(x) T(x) T(x): %v", roles(view(c)))
	}
}
