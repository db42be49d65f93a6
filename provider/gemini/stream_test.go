package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
)

// streamCases are the recorded streams of testdata/stream, each with the
// response not streamed of the same reply.
var streamCases = []string{"text", "thinking", "parallel_calls", "text_then_call", "cached_usage", "signature_after_call"}

// fixture returns the frames of a recorded stream and the body of the
// same reply not streamed.
func fixture(t testing.TB, name string) (frames []string, body string) {
	t.Helper()
	sse, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
	must(t, err)
	js, err := os.ReadFile(filepath.Join("testdata", "stream", name+".json"))
	must(t, err)
	return geminitest.Frames(string(sse)), string(js)
}

// imported returns what Message gives for the reply not streamed.
func imported(t *testing.T, body string) (nous.Message, nous.Usage) {
	t.Helper()
	m, u, err := nousgemini.Message(decodeResp(t, body))
	must(t, err)
	return m, u
}

// streamed plays frames (cut, aborted) through the SDK into Stream, on a
// context of one user message, and returns the result, the context and
// the deltas.
func streamed(t *testing.T, ctx context.Context, reply geminitest.Reply, onDelta func(nous.Delta)) (nous.Message, *nous.Context, error) {
	t.Helper()
	model := geminitest.NewServer(reply)
	t.Cleanup(model.Close)
	client, err := model.Client(context.Background())
	must(t, err)
	c := nous.NewContext()
	must(t, c.AddMessage(nous.UserMessage("q")))
	m, err := nousgemini.Stream(ctx, client, nousgemini.Params{Model: "gemini-test"}, c, onDelta)
	return m, c, err
}

// bytesOf returns the JSON of m without its time stamp.
func bytesOf(t testing.TB, v any) string {
	t.Helper()
	if m, ok := v.(nous.Message); ok {
		m.CreatedAt = at
		v = m
	}
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// A stream read whole gives the message and usage Message gives for the
// same reply not streamed, byte for byte, and adds them to the context.
func TestStreamMatchesMessage(t *testing.T) {
	for _, name := range streamCases {
		t.Run(name, func(t *testing.T) {
			frames, body := fixture(t, name)
			want, wantUsage := imported(t, body)
			for _, abort := range []bool{false, true} { // a cut after the finish reason loses nothing
				m, c, err := streamed(t, context.Background(), geminitest.Reply{Frames: frames, Abort: abort}, nil)
				must(t, err)
				if got, w := bytesOf(t, m), bytesOf(t, want); got != w {
					t.Errorf("abort %v: the streamed message\n%s\nis not the imported one\n%s", abort, got, w)
				}
				if got, w := bytesOf(t, c.Usage), bytesOf(t, wantUsage); got != w {
					t.Errorf("abort %v: usage %s, want %s", abort, got, w)
				}
				if last, _ := c.LastMessage(); c.Len() != 2 || bytesOf(t, last) != bytesOf(t, want) {
					t.Errorf("abort %v: the message was not added: %d messages", abort, c.Len())
				}
			}
		})
	}
}

// checkPartial fails t unless m, a partial message of a reply whose whole
// message is final and usage finalUsage, keeps the view valid and honest,
// and c (the context Stream left, with used the usage it added) takes it.
func checkPartial(t *testing.T, m nous.Message, used nous.Usage, final nous.Message, finalUsage nous.Usage, c *nous.Context) {
	t.Helper()
	if bad := exceeds(used, finalUsage); bad != "" {
		t.Errorf("usage %+v is more than the final %+v: %s", used, finalUsage, bad)
	}
	if !strings.HasPrefix(final.Text(), m.Text()) {
		t.Errorf("partial text %q is not a prefix of %q", m.Text(), final.Text())
	}
	if m.Role == "" && (m.Content != "" || len(m.Parts) > 0 || len(m.ToolCalls) > 0 || m.Metadata != nil) {
		t.Fatalf("a partial message without a role: %+v", m)
	}
	if m.Role == "" {
		return
	}
	checkKept(t, m)
	must(t, c.AddMessage(m))
	if err := c.CheckToolPairing(); err != nil {
		t.Errorf("the pairing after the partial: %v", err)
	}
	p := nousgemini.Params{Model: "gemini-test", Config: &genai.GenerateContentConfig{}}
	if err := nousgemini.Fill(&p, c); err != nil {
		t.Fatalf("Fill refuses the view with the partial: %v", err)
	}
	body, err := json.Marshal(map[string]any{"contents": p.Contents})
	must(t, err)
	if bad := adapttest.CheckGemini(func(string) bool { return true })(body); bad != "" {
		t.Errorf("the next request: %s\n%s", bad, body)
	}
	if again := adapttest.RoundTrip(t, c); again.Len() != c.Len() || !lastIs(again, m) {
		t.Errorf("the partial changed in a round trip of the context")
	}
}

// checkKept fails t unless m, a non-zero partial, is an interrupted
// assistant message of text and unsigned thinking alone.
func checkKept(t testing.TB, m nous.Message) {
	t.Helper()
	if m.Role != nous.RoleAssistant || !m.Interrupted() {
		t.Errorf("partial %+v: not an interrupted assistant message", m)
	}
	if len(m.ToolCalls) > 0 {
		t.Errorf("partial with tool calls: %+v", m.ToolCalls)
	}
	if m.Content == "" && len(m.Parts) == 0 {
		t.Errorf("a partial with nothing in it: %+v", m)
	}
	for _, p := range m.Parts {
		switch p.Type {
		case nous.PartThinking:
			if len(p.Options) > 0 {
				t.Errorf("partial thinking with options (a signature, a provider): %+v", p)
			}
		case nous.PartText:
			if len(p.Options) > 0 {
				t.Errorf("partial text with options: %+v", p)
			}
		default:
			t.Errorf("a partial part of type %s", p.Type)
		}
	}
	for k := range m.Metadata {
		if k != nous.MetadataInterrupted && k != "model" {
			t.Errorf("partial metadata %q", k)
		}
	}
}

// exceeds returns which field of u is more than that of final, or "".
func exceeds(u, final nous.Usage) string {
	for _, f := range []struct {
		name string
		a, b int
	}{{"requests", u.Requests, final.Requests}, {"tool calls", u.ToolCalls, final.ToolCalls},
		{"input", u.InputTokens, final.InputTokens}, {"output", u.OutputTokens, final.OutputTokens},
		{"total", u.TotalTokens, final.TotalTokens}, {"cache read", u.CacheReadInputTokens, final.CacheReadInputTokens},
		{"reasoning", u.ReasoningTokens, final.ReasoningTokens}} {
		if f.a > f.b {
			return f.name
		}
	}
	return ""
}

// A stream cut at every event, by a clean end of the body or a dropped
// connection, stops with an error wrapping ErrInterrupted (a connection
// dropped before any event may be the transport's error alone); it adds
// the usage that arrived and not the partial, which keeps the view valid.
func TestStreamCutAtEveryEvent(t *testing.T) {
	log.SetOutput(io.Discard) // the SDK logs each cut stream's error, which the test reads
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	for _, name := range streamCases {
		frames, body := fixture(t, name)
		final, finalUsage := imported(t, body)
		for k := range len(frames) {
			for _, abort := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/abort=%v", name, k, abort), func(t *testing.T) {
					m, c, err := streamed(t, context.Background(), geminitest.Reply{Frames: frames[:k], Abort: abort}, nil)
					if !errors.Is(err, nous.ErrInterrupted) && !(k == 0 && abort && err != nil) {
						t.Fatalf("cut after %d of %d events: %v", k, len(frames), err)
					}
					if c.Len() != 1 {
						t.Errorf("the partial was added: %d messages", c.Len())
					}
					if k == 0 && (c.Usage != nous.Usage{} || m.Role != "") {
						t.Errorf("no event, yet usage %+v and message %+v", c.Usage, m)
					}
					if k > 0 && c.Usage.Requests != 1 {
						t.Errorf("usage %+v: the request not counted", c.Usage)
					}
					checkPartial(t, m, c.Usage, final, finalUsage, c)
				})
			}
		}
	}
}

// A context cancelled from a delta, and an error event in the middle of
// the stream, stop it as a cut does, with their cause.
func TestStreamStoppedMidway(t *testing.T) {
	frames, body := fixture(t, "thinking")
	final, finalUsage := imported(t, body)
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		deltas := 0
		m, c, err := streamed(t, ctx, geminitest.Reply{Frames: frames}, func(nous.Delta) { deltas++; cancel() })
		if !errors.Is(err, nous.ErrInterrupted) || !errors.Is(err, context.Canceled) || deltas != 1 {
			t.Fatalf("%v, after %d deltas", err, deltas)
		}
		if len(m.Parts) != 1 || m.Parts[0].Type != nous.PartThinking {
			t.Errorf("partial %+v: want the first thought alone", m)
		}
		checkPartial(t, m, c.Usage, final, finalUsage, c)
	})
	t.Run("cancelled, the rest read", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		short := []string{strings.Join(geminitest.Frames(`data: {"candidates": [{"content": {"parts": [{"text": "Paris"}],"role": "model"},"index": 0}]}

data: {"candidates": [{"content": {"parts": [{"text": " is the capital."}],"role": "model"},"finishReason": "STOP","index": 0}]}

`), "")} // one write: the SDK holds the last chunk when the first is read
		m, c, err := streamed(t, ctx, geminitest.Reply{Frames: short}, func(nous.Delta) { cancel() })
		if !errors.Is(err, nous.ErrInterrupted) || !errors.Is(err, context.Canceled) || m.Text() != "Paris" || c.Len() != 1 {
			t.Fatalf("%v: %q, %d messages", err, m.Text(), c.Len())
		}
	})
	t.Run("error event", func(t *testing.T) {
		cut := append(frames[:3:3], "data: {\"error\": {\"code\": 503,\"message\": \"The model is overloaded. Please try again later.\",\"status\": \"UNAVAILABLE\"}}\n\n")
		m, c, err := streamed(t, context.Background(), geminitest.Reply{Frames: append(cut, frames[3:]...)}, nil)
		var apiErr genai.APIError
		if !errors.Is(err, nous.ErrInterrupted) || !errors.As(err, &apiErr) || apiErr.Code != 503 {
			t.Fatalf("%v", err)
		}
		if m.Text() != "5 miles is about " {
			t.Errorf("partial text %q", m.Text())
		}
		checkPartial(t, m, c.Usage, final, finalUsage, c)
	})
}

// A blocked prompt ends the stream as the response not streamed does: an
// error wrapping ErrNoCandidate, its usage added, no message.
func TestStreamBlockedPrompt(t *testing.T) {
	frame := "data: {\"promptFeedback\": {\"blockReason\": \"PROHIBITED_CONTENT\"},\"usageMetadata\": {\"promptTokenCount\": 7,\"totalTokenCount\": 7},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n"
	_, c, err := streamed(t, context.Background(), geminitest.Reply{Frames: []string{frame}}, nil)
	if !errors.Is(err, nousgemini.ErrNoCandidate) || errors.Is(err, nous.ErrInterrupted) || c.Len() != 1 || c.Usage.InputTokens != 7 {
		t.Fatalf("%v: %d messages, usage %+v", err, c.Len(), c.Usage)
	}
}

// The deltas of a stream, by kind and index, join into the parts of the
// final message: the texts of its text and thought parts, the arguments,
// IDs and names of its calls, one delta a call.
func TestStreamDeltas(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		texts, thoughts, calls int // deltas of each kind
	}{
		{"text", 5, 0, 0},
		{"thinking", 2, 2, 0},
		{"parallel_calls", 0, 0, 2},
		{"text_then_call", 2, 0, 1},
		{"cached_usage", 3, 0, 0},
		{"signature_after_call", 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, _ := fixture(t, tc.name)
			var deltas []nous.Delta
			final, _, err := streamed(t, context.Background(), geminitest.Reply{Frames: frames}, func(d nous.Delta) { deltas = append(deltas, d) })
			must(t, err)
			joined := map[nous.DeltaKind][]string{}
			count := map[nous.DeltaKind]int{}
			for _, d := range deltas {
				if d.Text == "" {
					t.Errorf("an empty delta: %+v", d)
				}
				count[d.Kind]++
				for len(joined[d.Kind]) <= d.Index {
					joined[d.Kind] = append(joined[d.Kind], "")
				}
				if d.Kind == nous.DeltaToolCall {
					call := final.ToolCalls[d.Index]
					if joined[d.Kind][d.Index] != "" || d.ToolCallID != call.ID || d.ToolName != call.Name {
						t.Errorf("call delta %+v for call %s %s", d, call.ID, call.Name)
					}
				}
				joined[d.Kind][d.Index] += d.Text
			}
			if count[nous.DeltaText] != tc.texts || count[nous.DeltaThinking] != tc.thoughts || count[nous.DeltaToolCall] != tc.calls {
				t.Errorf("deltas %v, want %d texts, %d thoughts, %d calls", count, tc.texts, tc.thoughts, tc.calls)
			}
			var texts, thoughts, calls []string
			if final.Content != "" {
				texts = append(texts, final.Content)
			}
			for _, p := range final.Parts {
				switch p.Type {
				case nous.PartText:
					texts = append(texts, p.Content)
				case nous.PartThinking:
					thoughts = append(thoughts, p.Content)
				}
			}
			for _, call := range final.ToolCalls {
				calls = append(calls, string(call.Arguments))
			}
			for kind, want := range map[nous.DeltaKind][]string{nous.DeltaText: texts, nous.DeltaThinking: thoughts, nous.DeltaToolCall: calls} {
				got := joined[kind]
				for len(got) < len(want) {
					got = append(got, "") // a part no delta grows: an empty one that carries a signature
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s deltas join into %q, want %q", kind, got, want)
				}
			}
		})
	}
}

// chunksOf returns the chunks of a recorded stream, decoded.
func chunksOf(t testing.TB, frames []string) []*genai.GenerateContentResponse {
	t.Helper()
	var chunks []*genai.GenerateContentResponse
	for _, f := range frames {
		var c genai.GenerateContentResponse
		must(t, json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(f), "data:")), &c))
		chunks = append(chunks, &c)
	}
	return chunks
}

// rechunk returns the parts of a whole response resp split across chunks
// at random: each text cut at random rune boundaries, its signature on any
// of its pieces or on an empty text part after them, empty text parts
// without a signature here and there, and a chunk's parts ending anywhere;
// the last chunk carries the finish reason and the usage.
func rechunk(r *rand.Rand, resp *genai.GenerateContentResponse) []*genai.GenerateContentResponse {
	var parts []*genai.Part
	for _, p := range resp.Candidates[0].Content.Parts {
		if p.FunctionCall != nil || p.Text == "" {
			parts = append(parts, p)
			continue
		}
		var pieces []*genai.Part
		for text := p.Text; text != ""; {
			n := 1 + r.IntN(len(text))
			for n < len(text) && !utf8.RuneStart(text[n]) {
				n++
			}
			pieces = append(pieces, &genai.Part{Text: text[:n], Thought: p.Thought})
			text = text[n:]
			if r.IntN(4) == 0 {
				pieces = append(pieces, &genai.Part{Thought: p.Thought})
			}
		}
		if len(p.ThoughtSignature) > 0 {
			if k := r.IntN(len(pieces) + 1); k == len(pieces) {
				pieces = append(pieces, &genai.Part{Thought: p.Thought, ThoughtSignature: p.ThoughtSignature})
			} else {
				pieces[k].ThoughtSignature = p.ThoughtSignature
			}
		}
		parts = append(parts, pieces...)
	}
	var chunks []*genai.GenerateContentResponse
	for len(parts) > 0 {
		n := 1 + r.IntN(min(3, len(parts)))
		chunks = append(chunks, &genai.GenerateContentResponse{ModelVersion: resp.ModelVersion,
			Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts[:n]}}}})
		parts = parts[n:]
	}
	last := chunks[len(chunks)-1]
	last.UsageMetadata = resp.UsageMetadata
	last.Candidates[0].FinishReason = resp.Candidates[0].FinishReason
	return chunks
}

// The same reply chunked anywhere else gives the same message.
func TestStreamRechunked(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, name := range streamCases {
		_, body := fixture(t, name)
		resp := decodeResp(t, body)
		want, wantUsage, err := nousgemini.Message(resp)
		must(t, err)
		for i := range 200 {
			var s nousgemini.ContentStream
			for _, chunk := range rechunk(r, resp) {
				must(t, s.Add(chunk))
			}
			m, u, err := s.Message()
			must(t, err)
			if bytesOf(t, m) != bytesOf(t, want) || u != wantUsage {
				t.Fatalf("%s, chunking %d: %s\nwant %s", name, i, bytesOf(t, m), bytesOf(t, want))
			}
		}
	}
}

// The zero ContentStream has nothing: Message is interrupted, Partial the
// zero message and usage; a nil chunk is nothing; a call whose arguments
// come in pieces is refused.
func TestContentStreamZero(t *testing.T) {
	var s nousgemini.ContentStream
	if _, _, err := s.Message(); !errors.Is(err, nous.ErrInterrupted) {
		t.Errorf("Message of nothing: %v", err)
	}
	if m, u := s.Partial(); m.Role != "" || u != (nous.Usage{}) {
		t.Errorf("Partial of nothing: %+v %+v", m, u)
	}
	must(t, s.Add(nil))
	piece := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{Name: "f", WillContinue: genai.Ptr(true)}}}}}}}
	if err := s.Add(piece); !errors.Is(err, nousgemini.ErrUnsupported) {
		t.Errorf("a call in pieces: %v", err)
	}
}

// lastIs reports whether the last message of c is m, as JSON.
func lastIs(c *nous.Context, m nous.Message) bool {
	last, ok := c.LastMessage()
	a, _ := json.Marshal(last)
	b, _ := json.Marshal(m)
	return ok && string(a) == string(b)
}

// The chunks of other candidates (candidateCount above 1) are not the
// reply's: Message reads candidate 0, as it does not streamed.
func TestContentStreamOtherCandidates(t *testing.T) {
	var s nousgemini.ContentStream
	text := func(index int32, text string, finish genai.FinishReason) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Index: index, FinishReason: finish,
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}}}}
	}
	for _, c := range []*genai.GenerateContentResponse{text(1, "Rome", ""), text(0, "Paris", ""), text(1, " and more", genai.FinishReasonStop), text(0, ".", genai.FinishReasonStop)} {
		must(t, s.Add(c))
	}
	m, _, err := s.Message()
	if p, _ := s.Partial(); err != nil || m.Content != "Paris." || p.Content != "Paris." {
		t.Errorf("%v: %+v, partial %+v", err, m, p)
	}
}

// A scripted reply streamed (one chunk) gives what Send gives for it.
func TestStreamScriptedReply(t *testing.T) {
	reply := geminitest.Reply{Thought: "Weather first.", Text: "Let me check.", Usage: nous.Usage{InputTokens: 20, OutputTokens: 9, ReasoningTokens: 4},
		ToolCalls: []nous.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}}
	var got [2]string
	for i, streaming := range []bool{false, true} {
		model := geminitest.NewServer(reply)
		defer model.Close()
		client, err := model.Client(context.Background())
		must(t, err)
		c := nous.NewContext()
		must(t, c.AddMessage(nous.UserMessage("Weather in Paris?")))
		var m nous.Message
		if streaming {
			m, err = nousgemini.Stream(context.Background(), client, nousgemini.Params{Model: "gemini-test"}, c, nil)
		} else {
			m, err = nousgemini.Send(context.Background(), client, nousgemini.Params{Model: "gemini-test"}, c)
		}
		must(t, err)
		got[i] = bytesOf(t, m) + bytesOf(t, c.Usage)
	}
	if got[0] != got[1] {
		t.Errorf("streamed %s\nsent %s", got[1], got[0])
	}
}
