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
	"strings"

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
	// Frames, when set, are the reply as Server-Sent Events, played as
	// they are (each flushed in turn), whether the request streams or not:
	// a recorded stream (scripted.Frames of an .sse file), or its first k
	// events for a stream cut short. The other fields are then unused but
	// Abort.
	Frames []string
	// Abort cuts the connection after the Frames, without ending the
	// response: the client reads an unexpected end of its body.
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

// Client returns an anthropic-sdk-go client of the server: its base URL,
// a key, no retries (a scripted error comes back at once), and opts after.
func (s *Server) Client(opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL()), option.WithAPIKey("test"), option.WithMaxRetries(0)}, opts...)...)
}

// answer answers the n-th request: with the reply's frames, or its
// error, or its message, which a streamed request (client.Messages.NewStreaming)
// gets as the events the API would send of it.
func (s *Server) answer(n int, _ string, request []byte) scripted.Reply {
	r := s.reply(n, request)
	if r.Frames != nil {
		return scripted.Reply{Frames: r.Frames, Abort: r.Abort}
	}
	if r.Status != 0 {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "scripted_error", "message": r.Error}})
		return scripted.Reply{Status: r.Status, Body: string(b)}
	}
	body := message(n, r)
	var streamed struct{ Stream bool }
	if json.Unmarshal(request, &streamed) == nil && streamed.Stream {
		return scripted.Reply{Frames: events(body), Abort: r.Abort}
	}
	return scripted.Reply{Status: http.StatusOK, Body: body}
}

// message returns the JSON of the n-th reply's message.
func message(n int, r Reply) string {
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
	return string(b)
}

// events returns the Server-Sent Events the API streams of a message, the
// JSON of its response not streamed: message_start, each block's start,
// deltas and stop (text and thinking in pieces of a word or so, a tool's
// input in pieces of a few bytes, after an empty one as the API sends
// first), message_delta with the stop reason and the output tokens, and
// message_stop; and a ping after the first block starts, as the API sends.
func events(body string) []string {
	var m struct {
		StopReason string `json:"stop_reason"`
		Content    []map[string]json.RawMessage
	}
	_ = json.Unmarshal([]byte(body), &m) // a message this package wrote
	var frames []string
	add := func(event string, data any) {
		b, _ := json.Marshal(data)
		frames = append(frames, fmt.Sprintf("event: %s\ndata: %s\n\n", event, b))
	}
	var head struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage struct {
			InputTokens              int `json:"input_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
			OutputTokens             int `json:"output_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal([]byte(body), &head)
	out := head.Usage.OutputTokens
	head.Usage.OutputTokens = min(out, 1)
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": head.ID, "type": "message", "role": "assistant", "model": head.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": head.Usage}})
	for i, b := range m.Content {
		var typ, text, thinking, signature string
		_ = json.Unmarshal(b["type"], &typ)
		delta := func(d map[string]any) {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		switch typ {
		case "text":
			_ = json.Unmarshal(b["text"], &text)
			add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range pieces(text) {
				delta(map[string]any{"type": "text_delta", "text": p})
			}
		case "thinking":
			_ = json.Unmarshal(b["thinking"], &thinking)
			_ = json.Unmarshal(b["signature"], &signature)
			add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, p := range pieces(thinking) {
				delta(map[string]any{"type": "thinking_delta", "thinking": p})
			}
			delta(map[string]any{"type": "signature_delta", "signature": signature})
		case "tool_use":
			add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			delta(map[string]any{"type": "input_json_delta", "partial_json": ""})
			if input := string(b["input"]); input != "{}" {
				for k := 0; k < len(input); k += 8 {
					delta(map[string]any{"type": "input_json_delta", "partial_json": input[k:min(k+8, len(input))]})
				}
			}
		}
		if i == 0 {
			frames = append(frames, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	add("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.StopReason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	add("message_stop", map[string]any{"type": "message_stop"})
	return frames
}

// pieces returns text in pieces of a word each, the space before a word
// with it.
func pieces(text string) []string {
	var out []string
	for len(text) > 0 {
		k := strings.IndexByte(text[1:], ' ')
		if k < 0 {
			return append(out, text)
		}
		out, text = append(out, text[:k+1]), text[k+1:]
	}
	return out
}
