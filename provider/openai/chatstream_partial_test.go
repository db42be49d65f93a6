package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A Chat stream's partial is the first choice's text so far (its refusal
// when it has no text, marked so), or the zero Message when that is blank;
// its usage is one request once a chunk came, with the tokens of the usage
// chunk once that came, which a stream cut after it (its [DONE] lost, a
// runtime that stops reading) has.
func TestChatStreamPartial(t *testing.T) {
	chunk := func(delta string) string {
		return `{"id":"c1","model":"gpt-test","choices":[{"index":0,"delta":` + delta + `}]}`
	}
	usage := `{"id":"c1","model":"gpt-test","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,` +
		`"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}}`
	one := nous.Usage{Requests: 1}
	for _, tc := range []struct {
		name    string
		chunks  []string
		text    string // "": the zero Message
		refusal bool
		usage   nous.Usage
	}{
		{"no chunk", nil, "", false, nous.Usage{}},
		{"the role alone", []string{chunk(`{"role":"assistant","content":""}`)}, "", false, one},
		{"text", []string{chunk(`{"role":"assistant","content":"It is "}`), chunk(`{"content":"sunny."}`)}, "It is sunny.", false, one},
		{"blank text", []string{chunk(`{"content":" \n"}`), chunk(`{"content":"\t"}`)}, "", false, one},
		{"a refusal", []string{chunk(`{"refusal":"I can't "}`), chunk(`{"refusal":"help."}`)}, "I can't help.", true, one},
		{"text, then a refusal", []string{chunk(`{"content":"Well,"}`), chunk(`{"refusal":"no."}`)}, "Well,", false, one},
		{"another choice's text", []string{chunk(`{"content":"mine"}`), `{"id":"c1","choices":[{"index":1,"delta":{"content":"theirs"}}]}`}, "mine", false, one},
		{"a tool call", []string{chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`)}, "", false, one},
		{"the usage chunk", []string{chunk(`{"content":"Done."}`), `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, usage}, "Done.", false,
			nous.Usage{Requests: 1, InputTokens: 11, OutputTokens: 7, TotalTokens: 18, CacheReadInputTokens: 3, ReasoningTokens: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s nousopenai.ChatStream
			for _, c := range tc.chunks {
				var ch openai.ChatCompletionChunk
				must(t, json.Unmarshal([]byte(c), &ch))
				must(t, s.Add(ch))
			}
			m, u := s.Partial()
			if u != tc.usage {
				t.Errorf("usage %+v, want %+v", u, tc.usage)
			}
			if tc.text == "" {
				if m.Role != "" || m.Content != "" || m.Metadata != nil {
					t.Errorf("partial %s, want the zero Message", messageJSON(t, m))
				}
				return
			}
			if m.Role != nous.RoleAssistant || m.Content != tc.text || !m.Interrupted() || m.Metadata["model"] != "gpt-test" || len(m.ToolCalls) > 0 {
				t.Errorf("partial %s, want the interrupted text %q", messageJSON(t, m), tc.text)
			}
			if refusal, _ := m.Metadata["refusal"].(bool); refusal != tc.refusal {
				t.Errorf("partial %s: refusal %v, want %v", messageJSON(t, m), refusal, tc.refusal)
			}
		})
	}
}
