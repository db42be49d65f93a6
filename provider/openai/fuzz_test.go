package openai_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// FuzzResponses: any Responses API response the SDK decodes becomes a
// message whose request survives a round trip of its context.
func FuzzResponses(f *testing.F) {
	for _, s := range []string{
		`{"output":[{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"hi"}]}]}`,
		`{"output":[{"type":"reasoning","id":"rs_1","summary":[{"text":"s"}],"encrypted_content":"e"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","id":"fc_2","call_id":"c2","name":"f","arguments":"{\"a\":1}"}]}`,
		`{"output":[{"type":"reasoning","id":"rs_1"},{"type":"web_search_call","id":"ws"},{"type":"image_generation_call","id":"ig","result":"AA==","output_format":"webp"},{"type":"message","id":"m","content":[{"type":"refusal","refusal":"no"},{"type":"output_text","text":" "}]}]}`,
		`{"output":[{"type":"function_call","call_id":"c1","name":"f","arguments":"[1]"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp responses.Response
		if !utf8.Valid(body) || json.Unmarshal(body, &resp) != nil {
			return // the API sends UTF-8; a context keeps text as UTF-8
		}
		m, _, err := nousopenai.ResponseMessage(&resp)
		if err != nil {
			return
		}
		adapttest.Refill(t, m, func(c *nous.Context) (any, error) {
			var p responses.ResponseNewParams
			err := nousopenai.FillResponses(&p, c) // before p is read
			return p, err
		})
	})
}

// FuzzChat: any Chat Completions response the SDK decodes becomes a
// message, or an error, whose request survives a round trip of its context.
func FuzzChat(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"choices":[{"message":{"role":"assistant","refusal":"no"}}],"usage":{"prompt_tokens":3}}`,
		`{"choices":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp openai.ChatCompletion
		if !utf8.Valid(body) || json.Unmarshal(body, &resp) != nil {
			return
		}
		m, _, err := nousopenai.ChatMessage(&resp)
		if err != nil {
			return
		}
		adapttest.Refill(t, m, func(c *nous.Context) (any, error) {
			var p openai.ChatCompletionNewParams
			err := nousopenai.FillChat(&p, c) // before p is read
			return p, err
		})
	})
}
