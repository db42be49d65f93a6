package adapttest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nous-go/nous"
)

// The sessions reach the views an adapter must handle: a compacted view
// that begins with the assistant's turn, a summary of each role, odd
// arguments, call IDs used again, dangling calls, a pruned tool result.
func TestSessionsReachEveryKindOfView(t *testing.T) {
	n := 0
	reply := func(r *rand.Rand) nous.Message {
		m := nous.AssistantMessage("ok")
		for range r.IntN(3) {
			n++
			args := json.RawMessage(`{"city":"Paris"}`)
			if n%5 == 0 {
				args = json.RawMessage(`{"city": "Par`)
			}
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: fmt.Sprint("call_", n%3), Name: "f", Arguments: args})
		}
		return m
	}
	seen := map[string]int{}
	fill := func(c *nous.Context) (any, error) {
		first, ids := true, map[string]bool{}
		for _, m := range c.All() {
			if m.Role != nous.RoleSystem && first {
				first = false
				if m.Role == nous.RoleAssistant {
					seen["assistant first"]++
				}
			}
			if s, ok := m.Metadata[nous.MetadataSummary]; ok && s == true {
				seen["summary: "+string(m.Role)]++
			}
			if _, ok := m.Metadata[nous.MetadataPruned]; ok {
				seen["a pruned result"]++
			}
			for _, tc := range m.ToolCalls {
				if ids[tc.ID] {
					seen["an ID used again"]++
				}
				ids[tc.ID] = true
				if !json.Valid(tc.Arguments) {
					seen["arguments cut short"]++
				}
			}
		}
		if err := c.CheckToolPairing(); err != nil {
			seen["dangling calls"]++
			return nil, &nous.ViewError{Provider: "test", Err: err}
		}
		return c.Messages(), nil
	}
	Sessions(t, 1, 100, 30, []Reply{reply}, Sender{Name: "pairing", Fill: fill, Check: func([]byte) string { return "" }})
	for _, kind := range []string{"assistant first", "summary: system", "summary: user", "summary: assistant", "a pruned result", "an ID used again", "arguments cut short", "dangling calls"} {
		if seen[kind] < 10 {
			t.Errorf("%s: %d views of 3000", kind, seen[kind])
		}
	}
	t.Log(seen)
}
