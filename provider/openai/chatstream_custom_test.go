package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A custom tool's call, streamed by Chat Completions as deltas of type
// "custom" with its name and input under "custom", is the call the same
// response not streamed gives: its name, and its input as the arguments.
func TestChatStreamCustomToolCallMatchesImport(t *testing.T) {
	chunks := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"custom","custom":{"name":"run_sql","input":""}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":"SELECT 1"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
	}
	whole := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-5","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"custom","custom":{"name":"run_sql","input":"SELECT 1"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`

	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(whole), &resp))
	want, wantUsage, err := nousopenai.ChatMessage(&resp)
	must(t, err)

	var deltas []nous.Delta
	s := &nousopenai.ChatStream{OnDelta: func(d nous.Delta) { deltas = append(deltas, d) }}
	for _, raw := range chunks {
		var chunk openai.ChatCompletionChunk
		must(t, json.Unmarshal([]byte(raw), &chunk))
		must(t, s.Add(chunk))
	}
	got, gotUsage, err := s.Message()
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	if g, w := messageJSON(t, got), messageJSON(t, want); g != w {
		t.Errorf("streamed:\n%s\nnot streamed:\n%s", g, w)
	}
	if g, w := usageJSON(t, gotUsage), usageJSON(t, wantUsage); g != w {
		t.Errorf("usage streamed %s, not streamed %s", g, w)
	}
	if len(deltas) == 0 || deltas[0].ToolName != "run_sql" {
		t.Errorf("the call's deltas %+v do not name it", deltas)
	}
}
