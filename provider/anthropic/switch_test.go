package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
)

// A tool loop begun on an OpenAI-compatible server (its reasoning encrypted
// for it, calls numbered per turn, arguments a model cut short, answered
// with an error result) goes on with Anthropic, thinking on: the body the
// API takes, with the calls under IDs of their own, the arguments as an
// object, the other provider's reasoning left out, and this request's
// thinking off, its effort at high.
func TestSwitchMidLoop(t *testing.T) {
	reasoning := nous.ContentPart{Type: nous.PartThinking, Content: "two cities", Options: map[string]any{"provider": "openai", "encrypted_content": "gAAAA", "id": "rs_1"}}
	first := msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}))
	first.Parts = []nous.ContentPart{reasoning}
	second := msg(nous.AssistantMessage("Now Lyon.", nous.ToolCall{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Ly`)}))
	c := nous.NewContext(nous.WithSystemPrompt("You are a weather assistant."))
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris and Lyon?")),
		first, msg(nous.ToolMessage("call_0", "get_weather", "18°C")),
		second, msg(nous.ToolErrorMessage("call_0", "get_weather", "the arguments are not JSON: send them again"))))
	body := sendWith(t, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096, Thinking: adaptive(),
		OutputConfig: anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffortXhigh}}, c)
	if p := checkRequest(body); p != "" {
		t.Error(p)
	}
	golden(t, "switch_mid_loop", body)
}
