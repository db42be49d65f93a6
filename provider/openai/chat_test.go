package openai_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A Chat response without a choice is an error, with its usage, which is
// billed all the same.
func TestChatNoChoiceUsage(t *testing.T) {
	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[],
	"usage":{"prompt_tokens":50,"completion_tokens":0,"total_tokens":50}}`), &resp))
	_, u, err := nousopenai.ChatMessage(&resp)
	if !errors.Is(err, nousopenai.ErrNoChoice) || u.Requests != 1 || u.InputTokens != 50 {
		t.Errorf("usage of a response without a choice lost: %+v (%v)", u, err)
	}
}

// A Chat custom tool call is a tool call of the message ChatMessage makes,
// or an error: never dropped without one.
func TestChatCustomToolCallKept(t *testing.T) {
	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_1","type":"custom","custom":{"name":"grammar","input":"x"}}]}}],
	"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), &resp))
	m, u, err := nousopenai.ChatMessage(&resp)
	if err == nil && len(m.ToolCalls) == 0 {
		t.Errorf("a custom tool call was dropped without an error: %+v, usage %+v", m, u)
	}
}

// A custom tool call from Responses given to Chat, which has custom tool
// calls ({"type":"custom","custom":{"name","input"}}), goes as one.
func TestChatCustomCall(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"run_sql","input":"SELECT 1","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "run_sql", "1"))))
	var got struct {
		Messages []struct {
			ToolCalls []map[string]any `json:"tool_calls"`
		} `json:"messages"`
	}
	body := sendChat(t, c)
	must(t, json.Unmarshal(body, &got))
	for _, mm := range got.Messages {
		for _, tc := range mm.ToolCalls {
			if tc["type"] != "custom" {
				b, _ := json.Marshal(tc)
				t.Errorf("the custom call went to Chat as %s", b)
			}
		}
	}
}
