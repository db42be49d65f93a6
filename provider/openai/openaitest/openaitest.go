// Package openaitest is a scripted model for tests of agents on OpenAI's
// APIs through openai-go: a local server that answers each request, Chat
// Completions or Responses, with the next [Reply] of a script, and keeps
// what was sent. No network, no key:
//
//	model := openaitest.NewServer(openaitest.Reply{ToolCalls: ...}, openaitest.Reply{Text: "18°C"})
//	defer model.Close()
//	client := model.Client()
//	// ... the agent's loop, then model.Requests() for what it sent
//
// A streamed request (the SDK's NewStreaming, "stream": true in its body)
// gets the same reply as a stream of Server-Sent Events: Chat Completions
// chunks, or Responses API events, as the API sends them; a Reply with
// Frames plays those instead (a recorded stream, cut or not), and one with
// Abort cuts the connection after them.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/scripted"
)

// Reply is one answer of the scripted model.
type Reply struct {
	Text string
	// Reasoning, for the Responses API, is the summary of a reasoning item
	// before the answer, with an encrypted content as Store false asks
	// for; Chat Completions sends none.
	Reasoning string
	// ToolCalls are the calls the model makes (their IDs, names and
	// arguments, sent as they are).
	ToolCalls []nous.ToolCall
	// Usage is the tokens the reply reports: InputTokens, OutputTokens,
	// CacheReadInputTokens, ReasoningTokens.
	Usage nous.Usage
	// Status, when not 0, answers with that HTTP status and an error of
	// the API carrying Error instead (429, 500, ...).
	Status int
	Error  string
	// Frames, when set, answer with these Server-Sent Events instead, each
	// whole with the blank line that ends it (see [scripted.Frames] for
	// those of a recorded stream), streamed request or not.
	Frames []string
	// Abort cuts the connection after the events, streamed without their
	// end: the client reads an unexpected end of the body. It applies to
	// a streamed request, or to Frames.
	Abort bool
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
	s.Server = scripted.NewReplies(s.answer)
	return s
}

// Client returns an openai-go client of the server: its base URL, a key,
// no retries (a scripted error comes back at once), and opts after.
func (s *Server) Client(opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL()), option.WithAPIKey("test"), option.WithMaxRetries(0)}, opts...)...)
}

func (s *Server) answer(n int, path string, request []byte) scripted.Reply {
	r := s.reply(n, request)
	switch {
	case r.Status != 0:
		return scripted.Reply{Status: r.Status, Body: errorBody(r)}
	case r.Frames != nil:
		return scripted.Reply{Frames: r.Frames, Abort: r.Abort}
	}
	var streamed struct{ Stream bool }
	_ = json.Unmarshal(request, &streamed) // a body that is not JSON is not streamed
	responses := strings.HasSuffix(path, "/responses")
	switch {
	case streamed.Stream && responses:
		return scripted.Reply{Frames: responsesFrames(responsesBody(n, &r)), Abort: r.Abort}
	case streamed.Stream:
		return scripted.Reply{Frames: chatFrames(n, &r), Abort: r.Abort}
	case responses:
		return scripted.Reply{Status: http.StatusOK, Body: responsesBody(n, &r)}
	}
	return scripted.Reply{Status: http.StatusOK, Body: chatBody(n, &r)}
}

func errorBody(r Reply) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": r.Error, "type": "scripted_error", "code": fmt.Sprint(r.Status)}})
	return string(b)
}

func chatBody(n int, r *Reply) string {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []any
		for _, tc := range r.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": string(tc.Arguments)}})
		}
		msg["tool_calls"] = calls
	}
	u := r.Usage
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprint("chatcmpl-", n+1), "object": "chat.completion", "created": n + 1, "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage": map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheReadInputTokens},
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens}},
	})
	return string(b)
}

func responsesBody(n int, r *Reply) string {
	var output []any
	if r.Reasoning != "" {
		output = append(output, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d", n+1),
			"summary": []any{map[string]any{"type": "summary_text", "text": r.Reasoning}}, "encrypted_content": fmt.Sprintf("scripted-%d", n+1)})
	}
	if r.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n+1), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}})
	}
	for i, tc := range r.ToolCalls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n+1, i+1), "call_id": tc.ID,
			"name": tc.Name, "arguments": string(tc.Arguments), "status": "completed"})
	}
	u := r.Usage
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprint("resp_", n+1), "object": "response", "created_at": n + 1, "model": "scripted", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
			"input_tokens_details":  map[string]any{"cached_tokens": u.CacheReadInputTokens},
			"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens}},
	})
	return string(b)
}
