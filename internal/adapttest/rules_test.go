package adapttest

import (
	"strings"
	"testing"
)

// Each check passes a body that keeps its API's rules and names the rule a
// body breaks.
func TestChecks(t *testing.T) {
	none := func(string) string { return "" }
	follows := func(id string) string {
		if id == "fc_1" {
			return "rs_1"
		}
		return ""
	}
	all := func(string) bool { return true }
	given := func(id string) bool { return id == "g1" }
	for _, tc := range []struct {
		name  string
		check func([]byte) string
		body  string
		want  string // in the problem; "" for none
	}{
		{"anthropic ok", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}],"thinking":{"type":"enabled"}}`, ""},
		{"anthropic assistant first", CheckAnthropic, `{"messages":[{"role":"assistant","content":[{"type":"text","text":"a"}]}]}`, "begin with a user"},
		{"anthropic no messages", CheckAnthropic, `{"system":[{"type":"text","text":"s"}],"messages":[]}`, "begin with a user"},
		{"anthropic two user", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"user","content":[{"type":"text","text":"q"}]}]}`, "both user"},
		{"anthropic reused ID", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_0","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_0"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_0","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_0"}]}]}`, "used twice"},
		{"anthropic input not an object", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":[1]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]}`, "not an object"},
		{"anthropic thinking on, foreign turn", CheckAnthropic, `{"thinking":{"type":"enabled"},"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]}`, "opens with tool_use"},
		{"anthropic thinking left out, foreign turn", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]}`, "opens with tool_use"},
		{"anthropic thinking off, foreign turn", CheckAnthropic, `{"thinking":{"type":"disabled"},"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]}`, ""},
		{"anthropic unanswered", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]}]}`, "unanswered"},
		{"anthropic ends with an answer", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"text","text":"sunny"}]}]}`, "end with an assistant"},
		{"anthropic paused turn", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1"}]}]}`, ""},
		{"anthropic call without a name", CheckAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]}`, "without a name"},
		{"chat call without a name", CheckChat, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","function":{"arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":""}]}`, "without a name"},
		{"gemini ends with a model content", CheckGemini(all), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"a"}]}]}`, "end with a model"},
		{"gemini call without a name", CheckGemini(all), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{},"thoughtSignature":"s"}]},
			{"role":"user","parts":[{"functionResponse":{}}]}]}`, "without a name"},
		{"chat ok", CheckChat, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":""}]}`, ""},
		{"chat arguments not an object", CheckChat, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"city\": \"Par"}}]},{"role":"tool","tool_call_id":"a","content":""}]}`, "not an object"},
		{"chat ID over 40", CheckChat, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"toolu_0123456789012345678901234567890123456789","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"toolu_0123456789012345678901234567890123456789","content":""}]}`, "over 40"},
		{"responses arguments not an object", CheckResponses(none), `{"input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","arguments":"[]"},{"type":"function_call_output","call_id":"c1"}]}`, "not an object"},
		{"chat interrupted", CheckChat, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"x"},{"role":"tool","tool_call_id":"a","content":""}]}`, "left unanswered"},
		{"chat blank", CheckChat, `{"messages":[{"role":"user","content":" "}]}`, "without text"},
		{"responses ok", CheckResponses(follows), `{"store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","encrypted_content":"e"},
			{"type":"function_call","id":"fc_1","call_id":"c1","arguments":"{}"},{"type":"function_call_output","call_id":"c1"}]}`, ""},
		{"responses call without its reasoning", CheckResponses(follows), `{"input":[{"role":"user","content":"q"},{"type":"function_call","id":"fc_1","call_id":"c1","arguments":"{}"},{"type":"function_call_output","call_id":"c1"}]}`, "without its reasoning"},
		{"responses reference with store off", CheckResponses(none), `{"store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1"},{"type":"function_call","call_id":"c1","arguments":"{}"},{"type":"function_call_output","call_id":"c1"}]}`, "store off"},
		{"responses reasoning alone", CheckResponses(none), `{"input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","encrypted_content":"e"}]}`, "without an item after"},
		{"responses call_id twice", CheckResponses(none), `{"input":[{"type":"function_call","call_id":"c","arguments":"{}"},{"type":"function_call_output","call_id":"c"},{"type":"function_call","call_id":"c","arguments":"{}"},{"type":"function_call_output","call_id":"c"}]}`, "used twice"},
		{"gemini ok", CheckGemini(given), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"g1","name":"f"},"thoughtSignature":"s"}]},
			{"role":"user","parts":[{"functionResponse":{"id":"g1","name":"f"}}]}]}`, ""},
		{"gemini empty", CheckGemini(all), `{"contents":[]}`, "begin with a user"},
		{"gemini model first", CheckGemini(all), `{"contents":[{"role":"model","parts":[{"text":"a"}]}]}`, "begin with a user"},
		{"gemini made-up ID", CheckGemini(given), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"x9","name":"f"},"thoughtSignature":"s"}]},
			{"role":"user","parts":[{"functionResponse":{"id":"x9","name":"f"}}]}]}`, "did not give"},
		{"gemini no signature in the current turn", CheckGemini(all), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"f"}}]}]}`, "no thought signature"},
		{"gemini misnamed response", CheckGemini(all), `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"name":"f"},"thoughtSignature":"s"}]},
			{"role":"user","parts":[{"functionResponse":{"name":"g"}}]}]}`, "answers call"},
	} {
		got := tc.check([]byte(tc.body))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
