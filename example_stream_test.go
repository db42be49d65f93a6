package nous_test

import (
	"fmt"

	"github.com/nous-go/nous"
)

// A runtime routes a streamed reply's deltas to the context's callbacks,
// by the reference library's event names, with c.EmitDelta; Notify sees
// every event.
func ExampleContext_EmitDelta() {
	c := nous.NewContext(
		nous.WithCallbacks(map[string]nous.Callback{
			nous.CallbackLLMNewDelta:         func(_ string, text any) { fmt.Printf("text %q\n", text) },
			nous.CallbackLLMNewThinkingDelta: func(_ string, text any) { fmt.Printf("thinking %q\n", text) },
		}),
		nous.WithNotify(func(event string, payload any) {
			if d, ok := payload.(nous.Delta); ok {
				fmt.Printf("notify %s: call %d %s %s %s\n", event, d.Index, d.ToolCallID, d.ToolName, d.Text)
			}
		}),
	)
	for _, d := range []nous.Delta{
		{Kind: nous.DeltaThinking, Text: "The user wants"},
		{Kind: nous.DeltaText, Text: "Let me look"},
		{Kind: nous.DeltaToolCall, ToolCallID: "call_1", ToolName: "weather", Text: `{"city":`},
		{Kind: nous.DeltaToolCall, ToolCallID: "call_1", ToolName: "weather", Text: `"Paris"}`},
	} {
		c.EmitDelta(d) // what a provider adapter's Stream function calls, given c.EmitDelta
	}
	// Output:
	// thinking "The user wants"
	// text "Let me look"
	// notify on_tool_call_delta: call 0 call_1 weather {"city":
	// notify on_tool_call_delta: call 0 call_1 weather "Paris"}
}
