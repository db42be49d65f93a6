package switchtest

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// decode returns the SDK's value of an API's JSON answer.
func decode[T any](t *testing.T, answer string) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(answer), v); err != nil {
		t.Fatalf("%v\n%s", err, answer)
	}
	return v
}

// replies returns a Reply of each provider's API, read by its adapter: the
// messages a runtime adds.
func replies(t *testing.T, n *counter) []adapttest.Reply {
	read := func(m nous.Message, _ nous.Usage, err error) nous.Message {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return []adapttest.Reply{
		func(r *rand.Rand) nous.Message {
			return read(nousanthropic.Message(decode[anthropic.Message](t, anthropicAnswer(r, n))))
		},
		func(r *rand.Rand) nous.Message {
			return read(nousopenai.ChatMessage(decode[openai.ChatCompletion](t, chatAnswer(r, n, r.IntN(4)))))
		},
		func(r *rand.Rand) nous.Message {
			return read(nousopenai.ResponseMessage(decode[responses.Response](t, responsesAnswer(r, n))))
		},
		func(r *rand.Rand) nous.Message {
			return read(nousgemini.Message(decode[genai.GenerateContentResponse](t, geminiAnswer(r, n))))
		},
	}
}

// senders returns every adapter, with the request options that change what
// it may send: Anthropic with thinking on and off, Responses with Store on
// and off.
func senders(n *counter) []adapttest.Sender {
	follows := func(id string) string { return n.follows[id] }
	given := func(id string) bool { return n.gemini[id] }
	return []adapttest.Sender{
		{Name: "anthropic", Fill: func(c *nous.Context) (any, error) {
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}
			err := nousanthropic.Fill(&params, c)
			return params, err
		}, Check: adapttest.CheckAnthropic},
		{Name: "anthropic, thinking on", Fill: func(c *nous.Context) (any, error) {
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096, Thinking: anthropic.ThinkingConfigParamOfEnabled(2048)}
			err := nousanthropic.Fill(&params, c)
			return params, err
		}, Check: adapttest.CheckAnthropic},
		{Name: "openai chat", Fill: func(c *nous.Context) (any, error) {
			params := openai.ChatCompletionNewParams{Model: "gpt-test"}
			err := nousopenai.FillChat(&params, c)
			return params, err
		}, Check: adapttest.CheckChat},
		{Name: "openai responses", Fill: func(c *nous.Context) (any, error) {
			params := responses.ResponseNewParams{Model: "gpt-test"}
			err := nousopenai.FillResponses(&params, c)
			return params, err
		}, Check: adapttest.CheckResponses(follows)},
		{Name: "openai responses, store off", Fill: func(c *nous.Context) (any, error) {
			params := responses.ResponseNewParams{Model: "gpt-test", Store: param.NewOpt(false)}
			err := nousopenai.FillResponses(&params, c)
			return params, err
		}, Check: adapttest.CheckResponses(follows)},
		{Name: "gemini", Fill: func(c *nous.Context) (any, error) {
			params := nousgemini.Params{Model: "gemini-test"}
			if err := nousgemini.Fill(&params, c); err != nil {
				return nil, err
			}
			req := map[string]any{"contents": params.Contents}
			if params.Config != nil && params.Config.SystemInstruction != nil {
				req["systemInstruction"] = params.Config.SystemInstruction
			}
			return req, nil
		}, Check: adapttest.CheckGemini(given)},
	}
}

// Random sessions that move between the providers at any point, through
// the library's own operations: every adapter sends each view, or refuses
// it only for dangling calls, which PatchDanglingToolCalls repairs.
func TestSwitchingProviders(t *testing.T) {
	n := newCounter()
	adapttest.Sessions(t, 1, 300, 30, replies(t, n), senders(n)...)
}
