package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// Servers that speak the Chat Completions API (Ollama, vLLM and SGLang
// builds, proxies of Gemini) stream parallel calls each with index 0, a
// new call starting with a chunk of its own ID and name. A chunk that
// brings another ID at an index starts another call: the reply is the
// calls the same response not streamed gives, not one call of the names
// and arguments run together.
func TestChatStreamCallsOfOneIndexWithTheirOwnIDs(t *testing.T) {
	chunks := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"add","arguments":"{\"a\":2,"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"b\":2}"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	whole := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"qwen3","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_a","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":2}"}},` +
		`{"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}]},"finish_reason":"tool_calls"}]}`

	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(whole), &resp))
	want, _, err := nousopenai.ChatMessage(&resp)
	must(t, err)

	var deltas []nous.Delta
	s := &nousopenai.ChatStream{OnDelta: func(d nous.Delta) { deltas = append(deltas, d) }}
	for _, raw := range chunks {
		var chunk openai.ChatCompletionChunk
		must(t, json.Unmarshal([]byte(raw), &chunk))
		must(t, s.Add(chunk))
	}
	got, _, err := s.Message()
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	if g, w := messageJSON(t, got), messageJSON(t, want); g != w {
		t.Errorf("streamed:\n%s\nnot streamed:\n%s", g, w)
	}
	if last := deltas[len(deltas)-1]; last.Index != 1 || last.ToolCallID != "call_b" || last.ToolName != "get_weather" {
		t.Errorf("the second call's delta is %+v", last)
	}
}
