package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// streamAPI is one of the two APIs as the stream tests use it: its Stream
// function, the import of a response not streamed (decoded with the SDK's
// types), a fresh accumulator, the events of a recorded stream decoded,
// and what ends a stream.
type streamAPI struct {
	stream func(ctx context.Context, client openai.Client, c *nous.Context, onDelta func(nous.Delta)) (nous.Message, error)
	imp    func(t testing.TB, body []byte) (nous.Message, nous.Usage)
	acc    func() streamAcc
	events func(t testing.TB, frames []string) []func(streamAcc) error
	// ends reports whether a frame is the one that ends the reply.
	ends func(frame string) bool
}

// streamAcc is what ChatStream and ResponsesStream share, less Add.
type streamAcc interface {
	Message() (nous.Message, nous.Usage, error)
	Partial() (nous.Message, nous.Usage)
}

var chatAPI = streamAPI{
	stream: func(ctx context.Context, client openai.Client, c *nous.Context, onDelta func(nous.Delta)) (nous.Message, error) {
		return nousopenai.StreamChat(ctx, client, openai.ChatCompletionNewParams{Model: "gpt-test"}, c, onDelta)
	},
	imp: func(t testing.TB, body []byte) (nous.Message, nous.Usage) {
		var resp openai.ChatCompletion
		must(t, json.Unmarshal(body, &resp))
		m, u, err := nousopenai.ChatMessage(&resp)
		must(t, err)
		return m, u
	},
	acc: func() streamAcc { return new(nousopenai.ChatStream) },
	events: func(t testing.TB, frames []string) []func(streamAcc) error {
		var out []func(streamAcc) error
		for _, data := range frameData(frames) {
			var chunk openai.ChatCompletionChunk
			must(t, json.Unmarshal([]byte(data), &chunk))
			out = append(out, func(a streamAcc) error { return a.(*nousopenai.ChatStream).Add(chunk) })
		}
		return out
	},
	ends: func(f string) bool { return strings.Contains(f, `"finish_reason":"`) },
}

var responsesAPI = streamAPI{
	stream: func(ctx context.Context, client openai.Client, c *nous.Context, onDelta func(nous.Delta)) (nous.Message, error) {
		return nousopenai.StreamResponses(ctx, client, responses.ResponseNewParams{Model: "gpt-test"}, c, onDelta)
	},
	imp: func(t testing.TB, body []byte) (nous.Message, nous.Usage) {
		var resp responses.Response
		must(t, json.Unmarshal(body, &resp))
		m, u, err := nousopenai.ResponseMessage(&resp)
		must(t, err)
		return m, u
	},
	acc: func() streamAcc { return new(nousopenai.ResponsesStream) },
	events: func(t testing.TB, frames []string) []func(streamAcc) error {
		var out []func(streamAcc) error
		for _, data := range frameData(frames) {
			var e responses.ResponseStreamEventUnion
			must(t, json.Unmarshal([]byte(data), &e))
			out = append(out, func(a streamAcc) error { return a.(*nousopenai.ResponsesStream).Add(e) })
		}
		return out
	},
	ends: func(f string) bool {
		return strings.HasPrefix(f, "event: response.completed\n") || strings.HasPrefix(f, "event: response.incomplete\n")
	},
}

// frameData returns the data of each frame, less [DONE].
func frameData(frames []string) []string {
	var out []string
	for _, f := range frames {
		for line := range strings.Lines(f) {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok && data != "[DONE]" {
				out = append(out, data)
			}
		}
	}
	return out
}

// streamCase is a recorded stream of testdata/stream and the response of
// the same reply not streamed.
type streamCase struct {
	name   string
	api    streamAPI
	frames []string
	body   []byte
}

func streamCases(t testing.TB) []streamCase {
	t.Helper()
	files, err := filepath.Glob("testdata/stream/*.sse")
	must(t, err)
	if len(files) == 0 {
		t.Fatal("no recorded streams")
	}
	var out []streamCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		sse, err := os.ReadFile(f)
		must(t, err)
		body, err := os.ReadFile(strings.TrimSuffix(f, ".sse") + ".json")
		must(t, err)
		api := responsesAPI
		if strings.HasPrefix(name, "chat_") {
			api = chatAPI
		}
		out = append(out, streamCase{name: name, api: api, frames: scripted.Frames(string(sse)), body: body})
	}
	return out
}

// userContext returns a context of one user message.
func userContext(t testing.TB) *nous.Context {
	c := nous.NewContext()
	must(t, c.AddMessage(nous.UserMessage("Go on.")))
	return c
}

// messageJSON returns the JSON of m, its CreatedAt zeroed.
func messageJSON(t testing.TB, m nous.Message) string {
	t.Helper()
	m.CreatedAt = time.Time{}
	b, err := json.Marshal(m)
	must(t, err)
	return string(b)
}

func usageJSON(t testing.TB, u nous.Usage) string {
	b, err := json.Marshal(u)
	must(t, err)
	return string(b)
}

// play streams frames (cut or not) through the real client into a
// context of one user message.
func play(t testing.TB, sc streamCase, reply openaitest.Reply, onDelta func(nous.Delta)) (*nous.Context, nous.Message, error) {
	return playCtx(t, context.Background(), sc, reply, onDelta)
}

func playCtx(t testing.TB, ctx context.Context, sc streamCase, reply openaitest.Reply, onDelta func(nous.Delta)) (*nous.Context, nous.Message, error) {
	t.Helper()
	model := openaitest.NewServer(reply)
	defer model.Close()
	c := userContext(t)
	m, err := sc.api.stream(ctx, model.Client(), c, onDelta)
	return c, m, err
}

// A stream that ends gives the message and usage the import of the same
// response not streamed gives, byte for byte, and adds them.
func TestStreamMatchesImport(t *testing.T) {
	for _, sc := range streamCases(t) {
		t.Run(sc.name, func(t *testing.T) {
			want, wantUsage := sc.api.imp(t, sc.body)
			c, m, err := play(t, sc, openaitest.Reply{Frames: sc.frames}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := messageJSON(t, m), messageJSON(t, want); got != w {
				t.Errorf("streamed:\n%s\nnot streamed:\n%s", got, w)
			}
			if got, w := usageJSON(t, c.Usage), usageJSON(t, wantUsage); got != w {
				t.Errorf("usage streamed %s, not streamed %s", got, w)
			}
			last, _ := c.LastMessage()
			if c.Len() != 2 || messageJSON(t, last) != messageJSON(t, want) {
				t.Errorf("the context holds %d messages, the last %s", c.Len(), messageJSON(t, last))
			}
			// The accumulator on its own gives the same.
			acc := sc.api.acc()
			for _, add := range sc.api.events(t, sc.frames) {
				must(t, add(acc))
			}
			alone, u, err := acc.Message()
			if err != nil || messageJSON(t, alone) != messageJSON(t, want) || usageJSON(t, u) != usageJSON(t, wantUsage) {
				t.Errorf("the accumulator alone: %v\n%s\n%s", err, messageJSON(t, alone), usageJSON(t, u))
			}
		})
	}
}

// checkPartial checks what a stream that stopped early left, having given
// what got says: the error wraps nous.ErrInterrupted; the usage added
// counts the request once an event came (no event, no usage), and is at
// most the final one; the partial message is an interrupted assistant
// message of the text so far (the zero one when there is none), without a
// tool call or signed thinking, which the context takes, whose pairing
// holds, which both Fill functions send, and which survives a round trip
// of the context. Of a Chat stream, the test knows the text so far, and
// the partial holds exactly it; its usage has no tokens, which come after
// the reply's end.
func checkPartial(t *testing.T, c *nous.Context, m nous.Message, err error, final nous.Message, finalUsage nous.Usage, got given) {
	t.Helper()
	if !errors.Is(err, nous.ErrInterrupted) {
		t.Fatalf("error %v, not ErrInterrupted", err)
	}
	u := c.Usage
	if u.Requests > 1 || u.ToolCalls > finalUsage.ToolCalls || u.InputTokens > finalUsage.InputTokens || u.OutputTokens > finalUsage.OutputTokens ||
		u.TotalTokens > finalUsage.TotalTokens || u.CacheReadInputTokens > finalUsage.CacheReadInputTokens || u.ReasoningTokens > finalUsage.ReasoningTokens {
		t.Errorf("usage %+v, more than the final %+v", u, finalUsage)
	}
	switch {
	case got.events == 0 && (u != nous.Usage{} || m.Role != ""):
		t.Errorf("no event came, and the usage is %+v, the partial %+v", u, m)
	case got.events > 0 && u.Requests != 1:
		t.Errorf("%d events came, and the usage is %+v, not one request", got.events, u)
	case got.chat && got.events > 0 && u != nous.Usage{Requests: 1}:
		t.Errorf("a Chat stream cut before its end: usage %+v, want one request without tokens", u)
	}
	if got.chat && m.Text() != got.text && !(m.Role == "" && strings.TrimSpace(got.text) == "") {
		t.Errorf("the partial's text is %q, the stream's so far %q", m.Text(), got.text)
	}
	if c.Len() != 1 {
		t.Errorf("the partial was added: %d messages", c.Len())
	}
	checkPartialMessage(t, m, final.Text())
	if m.Role == "" {
		return
	}
	must(t, c.AddMessage(m))
	checkSends(t, c)
}

// given is what a stream had given when it stopped: the events read, and,
// for a Chat stream (chat true), the text of its reply so far (its
// content, or its refusal when it has no content).
type given struct {
	events int
	chat   bool
	text   string
}

// givenBy returns what the frames of a stream give: for a Chat stream, the
// text of the first choice's deltas, read from their JSON.
func givenBy(sc streamCase, frames []string) given {
	data := frameData(frames)
	g := given{events: len(data), chat: strings.HasPrefix(sc.name, "chat_")}
	if !g.chat {
		return g
	}
	var content, refusal strings.Builder
	for _, d := range data {
		var chunk struct {
			Choices []struct {
				Index int
				Delta struct{ Content, Refusal *string }
			}
		}
		if json.Unmarshal([]byte(d), &chunk) != nil {
			continue
		}
		for _, ch := range chunk.Choices {
			if ch.Index == 0 && ch.Delta.Content != nil {
				content.WriteString(*ch.Delta.Content)
			}
			if ch.Index == 0 && ch.Delta.Refusal != nil {
				refusal.WriteString(*ch.Delta.Refusal)
			}
		}
	}
	g.text = content.String()
	if g.text == "" {
		g.text = refusal.String()
	}
	return g
}

// framesUntilDelta returns the number of frames of a stream read when its
// n-th delta came, and 0 when it gives fewer.
func framesUntilDelta(t testing.TB, sc streamCase, n int) int {
	t.Helper()
	var deltas int
	onDelta := func(nous.Delta) { deltas++ }
	acc := sc.api.acc()
	switch a := acc.(type) {
	case *nousopenai.ChatStream:
		a.OnDelta = onDelta
	case *nousopenai.ResponsesStream:
		a.OnDelta = onDelta
	}
	events := sc.api.events(t, sc.frames)
	for k := range sc.frames {
		for range frameData(sc.frames[k : k+1]) {
			must(t, events[0](acc))
			events = events[1:]
		}
		if deltas >= n {
			return k + 1
		}
	}
	return 0
}

// checkPartialMessage checks a partial message: zero, or an interrupted
// assistant message whose text is a prefix of the final text, without a
// tool call, and whose thinking is plain.
func checkPartialMessage(t testing.TB, m nous.Message, finalText string) {
	t.Helper()
	if m.Role == "" {
		if m.Content != "" || len(m.Parts) > 0 || len(m.ToolCalls) > 0 || m.Metadata != nil {
			t.Errorf("a zero partial with content: %+v", m)
		}
		return
	}
	if m.Role != nous.RoleAssistant || !m.Interrupted() {
		t.Errorf("a partial of role %q, interrupted %v", m.Role, m.Interrupted())
	}
	if !strings.HasPrefix(finalText, m.Text()) {
		t.Errorf("partial text %q, not a prefix of %q", m.Text(), finalText)
	}
	if len(m.ToolCalls) > 0 {
		t.Errorf("a partial with tool calls: %+v", m.ToolCalls)
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == nous.PartThinking && len(p.Options) > 0:
			t.Errorf("signed thinking in a partial: %+v", p.Options)
		case p.Type != nous.PartThinking && p.Type != nous.PartText:
			t.Errorf("a %s part in a partial", p.Type)
		case len(p.Options) > 0:
			t.Errorf("a text part with options in a partial: %+v", p.Options)
		}
	}
}

// checkSends checks that c's pairing holds and both Fill functions take
// it, before and after a round trip of the context.
func checkSends(t testing.TB, c *nous.Context) {
	t.Helper()
	for _, c := range []*nous.Context{c, adapttest.RoundTrip(t, c)} {
		if err := c.CheckToolPairing(); err != nil {
			t.Fatal(err)
		}
		var chat openai.ChatCompletionNewParams
		if err := nousopenai.FillChat(&chat, c); err != nil {
			t.Fatal(err)
		}
		var resp responses.ResponseNewParams
		if err := nousopenai.FillResponses(&resp, c); err != nil {
			t.Fatal(err)
		}
		for _, p := range []any{chat, resp} {
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A stream cut after any number of events, as a clean end of the body or
// as a connection cut, before its end, returns ErrInterrupted and a
// partial the caller can add; one cut after its end (a Chat stream's
// usage chunk or [DONE] missing, or the connection lost after the last
// event) is whole. A connection cut before any
// event is the transport's error, and changes nothing.
func TestStreamCutAtEveryEvent(t *testing.T) {
	for _, sc := range streamCases(t) {
		t.Run(sc.name, func(t *testing.T) {
			final, finalUsage := sc.api.imp(t, sc.body)
			end := len(sc.frames) + 1 // the number of frames that end the reply
			for k, f := range sc.frames {
				if sc.api.ends(f) {
					end = k + 1
				}
			}
			if end > len(sc.frames) {
				t.Fatal("no frame ends the reply")
			}
			for k := 0; k <= len(sc.frames); k++ {
				for _, abort := range []bool{false, true} {
					c, m, err := play(t, sc, openaitest.Reply{Frames: append([]string{}, sc.frames[:k]...), Abort: abort}, nil)
					switch {
					case abort && k == 0:
						if err == nil || c.Len() != 1 || c.Usage != (nous.Usage{}) {
							t.Errorf("k=0 cut: %v, %d messages, usage %+v", err, c.Len(), c.Usage)
						}
					case k >= end:
						// Whole: the connection is lost after the reply's end.
						if err != nil || messageJSON(t, m) != messageJSON(t, final) {
							t.Errorf("k=%d abort=%v: %v\n%s", k, abort, err, messageJSON(t, m))
						}
						if k < len(sc.frames)-1 && (c.Usage.Requests != 1 || c.Usage.InputTokens != 0) {
							t.Errorf("k=%d: usage %+v without the usage chunk", k, c.Usage)
						}
						if k >= len(sc.frames)-1 && c.Usage != finalUsage {
							t.Errorf("k=%d: usage %+v, want %+v", k, c.Usage, finalUsage)
						}
					default:
						t.Run("", func(t *testing.T) { checkPartial(t, c, m, err, final, finalUsage, givenBy(sc, sc.frames[:k])) })
					}
				}
			}
		})
	}
}

// A context cancelled from a delta callback stops the stream at the next
// event: the partial holds the text up to then.
func TestStreamCancelledFromDelta(t *testing.T) {
	for _, sc := range streamCases(t) {
		final, finalUsage := sc.api.imp(t, sc.body)
		for _, at := range []int{1, 3, 8} {
			t.Run(sc.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				n := 0
				c, m, err := playCtx(t, ctx, sc, openaitest.Reply{Frames: sc.frames}, func(nous.Delta) {
					if n++; n == at {
						cancel()
					}
				})
				if n < at {
					if err != nil {
						t.Errorf("%d deltas, not cancelled: %v", n, err)
					}
					return
				}
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, not the context's", err)
				}
				checkPartial(t, c, m, err, final, finalUsage, givenBy(sc, sc.frames[:framesUntilDelta(t, sc, at)]))
			})
		}
	}
}

// An error of the API in the middle of the stream (Chat: an error object;
// Responses: an error event, or response.failed with its usage) stops it:
// ErrInterrupted, the partial, and the usage that arrived.
func TestStreamErrorEvent(t *testing.T) {
	failed := func(sc streamCase) string {
		var resp map[string]any
		must(t, json.Unmarshal(sc.body, &resp))
		resp["status"], resp["error"] = "failed", map[string]any{"code": "server_error", "message": "The model failed."}
		b, _ := json.Marshal(map[string]any{"type": "response.failed", "sequence_number": 99, "response": resp})
		return "event: response.failed\ndata: " + string(b) + "\n\n"
	}
	for _, sc := range streamCases(t) {
		final, finalUsage := sc.api.imp(t, sc.body)
		mid := len(sc.frames) / 2
		var errs map[string]string
		if strings.HasPrefix(sc.name, "chat_") {
			errs = map[string]string{"error object": `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` + "\n\n"}
		} else {
			errs = map[string]string{
				"error event":     `event: error` + "\n" + `data: {"type":"error","code":"server_error","message":"The server had an error.","param":null,"sequence_number":99}` + "\n\n",
				"response.failed": failed(sc),
			}
		}
		for what, frame := range errs {
			t.Run(sc.name+"/"+what, func(t *testing.T) {
				frames := append(append(append([]string{}, sc.frames[:mid]...), frame), sc.frames[mid:]...)
				c, m, err := play(t, sc, openaitest.Reply{Frames: frames}, nil)
				checkPartial(t, c, m, err, final, finalUsage, givenBy(sc, sc.frames[:mid]))
				if what == "response.failed" {
					if !errors.Is(err, nousopenai.ErrFailed) || c.Usage.InputTokens != finalUsage.InputTokens || c.Usage.ToolCalls != 0 {
						t.Errorf("a failed response: %v, usage %+v", err, c.Usage)
					}
				}
			})
		}
	}
}

// StreamChat asks for the usage chunk on its copy of params, and fills
// that copy only; both streamed requests say "stream".
func TestStreamRequests(t *testing.T) {
	model := openaitest.NewServer(openaitest.Reply{Text: "hi"}, openaitest.Reply{Text: "hi"})
	defer model.Close()
	ctx, client := context.Background(), model.Client()
	chat := openai.ChatCompletionNewParams{Model: "gpt-test"}
	_, err := nousopenai.StreamChat(ctx, client, chat, userContext(t), nil)
	must(t, err)
	resp := responses.ResponseNewParams{Model: "gpt-test"}
	_, err = nousopenai.StreamResponses(ctx, client, resp, userContext(t), nil)
	must(t, err)
	if chat.StreamOptions.IncludeUsage.Valid() || len(chat.Messages) != 0 || resp.Input.OfInputItemList != nil {
		t.Error("the caller's params were changed")
	}
	type request struct {
		Stream        bool
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	var sent []request
	for _, body := range model.Requests() {
		var r request
		must(t, json.Unmarshal(body, &r))
		sent = append(sent, r)
	}
	if len(sent) != 2 || !sent[0].Stream || !sent[1].Stream || sent[0].StreamOptions == nil || !sent[0].StreamOptions.IncludeUsage {
		t.Errorf("sent %+v", sent)
	}
}
