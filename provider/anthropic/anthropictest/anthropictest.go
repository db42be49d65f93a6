// Package anthropictest is a scripted model for tests of agents on
// Anthropic's Messages API through anthropic-sdk-go: a local server that
// answers each request with the next [Reply] of a script, and keeps what
// was sent. No network, no key:
//
//	model := anthropictest.NewServer(anthropictest.Reply{ToolCalls: ...}, anthropictest.Reply{Text: "18°C"})
//	defer model.Close()
//	client := model.Client()
//	// ... the agent's loop, then model.Requests() for what it sent
package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/scripted"
)

// Reply is one answer of the scripted model.
type Reply struct {
	Text string
	// Thinking, when set, is a thinking block before the answer, signed
	// with a signature of the script's.
	Thinking string
	// ToolCalls are the tool_use blocks the model sends (their IDs, names
	// and inputs as they are; no arguments is {}).
	ToolCalls []nous.ToolCall
	// Usage is the tokens the reply reports: InputTokens (of which
	// CacheReadInputTokens and CacheCreationInputTokens are sent apart, as
	// the API does), OutputTokens.
	Usage nous.Usage
	// StopReason is the reply's; "" is tool_use with calls, end_turn
	// without.
	StopReason string
	// Status, when not 0, answers with that HTTP status and an error of
	// the API carrying Error instead (429, 529, ...).
	Status int
	Error  string
}

// Server is the scripted model: URL is its base URL, Requests the JSON
// bodies of the requests so far, in order, and Close stops it.
type Server struct {
	*scripted.Server
	reply func(n int, request []byte) Reply
}

// NewServer starts a scripted model that answers the n-th request with
// replies[n], and a request past the last with an HTTP 500. Close stops
// it.
func NewServer(replies ...Reply) *Server {
	return NewServerFunc(scripted.Script(replies, func(n int) Reply {
		return Reply{Status: http.StatusInternalServerError, Error: scripted.Exhausted(n)}
	}))
}

// NewServerFunc starts a model that answers each request with reply(n,
// request): n counts the requests from 0, and request is the JSON body
// the SDK sent. It is the model of a loop whose requests a script cannot
// foresee: a session resumed from disk, a compaction that depends on the
// view's size. reply runs on the server's goroutines, one request at a
// time for a client that waits for each answer. Close stops it.
func NewServerFunc(reply func(n int, request []byte) Reply) *Server {
	s := &Server{reply: reply}
	s.Server = scripted.New(s.answer)
	return s
}

// Client returns an anthropic-sdk-go client of the server: its base URL,
// a key, no retries (a scripted error comes back at once), and opts after.
func (s *Server) Client(opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL()), option.WithAPIKey("test"), option.WithMaxRetries(0)}, opts...)...)
}

func (s *Server) answer(n int, _ string, request []byte) (int, string) {
	r := s.reply(n, request)
	if r.Status != 0 {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "scripted_error", "message": r.Error}})
		return r.Status, string(b)
	}
	var content []any
	if r.Thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": fmt.Sprintf("scripted-signature-%d", n+1)})
	}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	for _, tc := range r.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	}
	if content == nil {
		content = []any{}
	}
	stop := r.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	u := r.Usage
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprint("msg_", n+1), "type": "message", "role": "assistant", "model": "scripted", "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.InputTokens - u.CacheReadInputTokens - u.CacheCreationInputTokens, "output_tokens": u.OutputTokens,
			"cache_read_input_tokens": u.CacheReadInputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens},
	})
	return http.StatusOK, string(b)
}
