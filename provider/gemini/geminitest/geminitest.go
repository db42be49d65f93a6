// Package geminitest is a scripted model for tests of agents on Gemini's
// GenerateContent through google.golang.org/genai: a local server that
// answers each request with the next [Reply] of a script, and keeps what
// was sent. A streamed request (GenerateContentStream) gets the reply as
// one Server-Sent Event, or the reply's Frames, a recorded stream, cut
// where the test says. No network, no key:
//
//	model := geminitest.NewServer(geminitest.Reply{ToolCalls: ...}, geminitest.Reply{Text: "18°C"})
//	defer model.Close()
//	client, err := model.Client(ctx)
//	// ... the agent's loop, then model.Requests() for what it sent
package geminitest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/scripted"
)

// Reply is one answer of the scripted model.
type Reply struct {
	Text string
	// Thought, when set, is a thought summary part before the answer.
	Thought string
	// ToolCalls are the function calls the model makes (their IDs, names
	// and arguments as they are; no arguments is {}), the first one with
	// a thought signature of the script's, as Gemini signs a step's first
	// call.
	ToolCalls []nous.ToolCall
	// Usage is the tokens the reply reports: InputTokens (of which
	// CacheReadInputTokens), OutputTokens (of which ReasoningTokens are
	// sent apart, as thoughts, as the API does).
	Usage nous.Usage
	// Status, when not 0, answers with that HTTP status and an error of
	// the API carrying Error instead (429, 503, ...).
	Status int
	Error  string
	// Frames, when set, answer a request with a stream of Server-Sent
	// Events, each frame whole ("data: {...}\r\n\r\n"; [Frames] splits a
	// recorded stream), instead of the reply above: the frames as they
	// are, a cut stream when they stop short of the last.
	Frames []string
	// Abort, with Frames, cuts the connection after them: the client
	// reads an unexpected end of the stream.
	Abort bool
}

// Frames splits a recorded stream of Server-Sent Events (a .sse file)
// into its frames, for [Reply].Frames: Frames(sse)[:k] is the stream cut
// after k events.
func Frames(sse string) []string { return scripted.Frames(sse) }

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

// Client returns a genai client of the server, on the Gemini API backend,
// with a key.
func (s *Server) Client(ctx context.Context) (*genai.Client, error) {
	return genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: s.URL()}})
}

func (s *Server) answer(n int, path string, request []byte) scripted.Reply {
	r := s.reply(n, request)
	if r.Frames != nil {
		return scripted.Reply{Status: http.StatusOK, Frames: r.Frames, Abort: r.Abort}
	}
	status, body := response(n, r)
	if status == http.StatusOK && strings.HasSuffix(path, ":streamGenerateContent") {
		return scripted.Reply{Status: status, Frames: []string{"data: " + body + "\r\n\r\n"}}
	}
	return scripted.Reply{Status: status, Body: body}
}

// response returns the HTTP status and the JSON body of the n-th reply r,
// not streamed.
func response(n int, r Reply) (int, string) {
	if r.Status != 0 {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": r.Status, "message": r.Error, "status": "SCRIPTED"}})
		return r.Status, string(b)
	}
	var parts []any
	if r.Thought != "" {
		parts = append(parts, map[string]any{"text": r.Thought, "thought": true})
	}
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for i, tc := range r.ToolCalls {
		args := json.RawMessage(tc.Arguments)
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage(`{}`)
		}
		part := map[string]any{"functionCall": map[string]any{"id": tc.ID, "name": tc.Name, "args": args}}
		if i == 0 {
			part["thoughtSignature"] = base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "scripted-signature-%d", n+1))
		}
		parts = append(parts, part)
	}
	if parts == nil {
		parts = []any{}
	}
	u := r.Usage
	b, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens - u.ReasoningTokens,
			"thoughtsTokenCount": u.ReasoningTokens, "cachedContentTokenCount": u.CacheReadInputTokens},
	})
	return http.StatusOK, string(b)
}
