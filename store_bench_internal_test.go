package nous

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCompareToolCalls: what a save spends to tell whether 1,000
// stored tool calls, each with a 1 KB signature in its metadata, changed.
func BenchmarkCompareToolCalls(b *testing.B) {
	c := NewContext()
	sig := strings.Repeat("s", 1024)
	for i := range 1000 {
		c.AddToolCall(ToolCall{ID: fmt.Sprint("call_", i), Name: "f", Arguments: []byte(`{"a":1}`), Metadata: map[string]any{"thought_signature": sig}})
	}
	c.saved.toolCalls, c.saved.encoded = cloneToolCalls(c.ToolCalls), c.encodeCalls(c.ToolCalls)
	b.ReportAllocs()
	for b.Loop() {
		if c.newToolCalls() != 1000 {
			b.Fatal("a stored call seen as changed")
		}
	}
}
