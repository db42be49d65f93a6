package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
)

var streamSeed = flag.Uint64("stream.seed", 1, "the seed of the streams' random event orders (0: a random one)")

// streamCases are the recorded streams of testdata/stream that end, each
// with the response of the same reply not streamed beside it.
var streamCases = []string{"text", "thinking_tool", "redacted_thinking", "parallel_tools", "web_search", "cache_usage", "ping", "long_text"}

// cutCases are the streams cut at every event: all but the long one of
// the benchmarks, whose cuts are those of "text".
var cutCases = streamCases[:len(streamCases)-1]

// recorded returns the frames of testdata/stream/<name>.sse and the body
// of <name>.json.
func recorded(t testing.TB, name string) ([]string, string) {
	t.Helper()
	sse, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
	adapttest.Must(t, err)
	body, err := os.ReadFile(filepath.Join("testdata", "stream", name+".json"))
	adapttest.Must(t, err)
	return scripted.Frames(string(sse)), string(body)
}

// imported returns the message and usage of a response not streamed, as
// the SDK decodes it and Message reads it.
func imported(t testing.TB, body string) (nous.Message, nous.Usage) {
	t.Helper()
	var resp anthropic.Message
	adapttest.Must(t, json.Unmarshal([]byte(body), &resp))
	m, u, err := nousanthropic.Message(&resp)
	adapttest.Must(t, err)
	return m, u
}

// encoded returns the JSON of a message, its timestamp zeroed.
func encoded(t testing.TB, m nous.Message) string {
	t.Helper()
	m.CreatedAt = time.Time{}
	b, err := json.Marshal(m)
	adapttest.Must(t, err)
	return string(b)
}

// run is one streamed model call against frames played by the scripted
// model: the context it ran on (a user message, then what Stream added),
// what Stream returned, and the deltas it gave.
type run struct {
	c      *nous.Context
	m      nous.Message
	err    error
	deltas []nous.Delta
}

func streamed(t testing.TB, frames []string, abort bool, onDelta func(context.CancelFunc, nous.Delta)) run {
	t.Helper()
	model := anthropictest.NewServer(anthropictest.Reply{Frames: frames, Abort: abort})
	defer model.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := run{c: nous.NewContext()}
	adapttest.Must(t, r.c.AddMessage(nous.UserMessage("Go on.")))
	r.m, r.err = nousanthropic.Stream(ctx, model.Client(), anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}, r.c, func(d nous.Delta) {
		r.deltas = append(r.deltas, d)
		if onDelta != nil {
			onDelta(cancel, d)
		}
	})
	return r
}

// A stream that ends gives the message and usage the response not
// streamed gives, byte for byte (signatures, redacted data, citations,
// server tool blocks, parallel calls, cache counts), adds them to the
// context, and gives deltas that add up to the message.
func TestStreamEndsAsTheResponse(t *testing.T) {
	for _, name := range streamCases {
		t.Run(name, func(t *testing.T) {
			frames, body := recorded(t, name)
			want, wantUsage := imported(t, body)
			r := streamed(t, frames, false, nil)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got, want := encoded(t, r.m), encoded(t, want); got != want {
				t.Errorf("streamed:\n%s\nnot streamed:\n%s", got, want)
			}
			if r.c.Usage != wantUsage || r.c.Len() != 2 {
				t.Errorf("usage %+v, %d messages; want %+v, 2", r.c.Usage, r.c.Len(), wantUsage)
			}
			if last, _ := r.c.LastMessage(); encoded(t, last) != encoded(t, r.m) {
				t.Error("the context holds another message than the one returned")
			}
			checkDeltas(t, r.deltas, want)
		})
	}
}

// checkDeltas checks that deltas add up to m: each text and thinking
// block's deltas, by Index, to its text; each tool call's, by Index, to
// its arguments (compacted, as the message has them), with its ID and name
// on every delta, the first one without text.
func checkDeltas(t *testing.T, deltas []nous.Delta, m nous.Message) {
	t.Helper()
	var text, thinking []string
	for _, p := range m.Parts {
		switch {
		case p.Type == nous.PartText:
			text = append(text, p.Content)
		case p.Type == nous.PartThinking:
			thinking = append(thinking, p.Content) // redacted thinking: "", and no delta
		}
	}
	if m.Content != "" {
		text = []string{m.Content}
	}
	got := map[nous.DeltaKind][]string{}
	calls := make([]strings.Builder, len(m.ToolCalls))
	for k, d := range deltas {
		s := got[d.Kind]
		for len(s) <= d.Index {
			s = append(s, "")
		}
		s[d.Index] += d.Text
		got[d.Kind] = s
		switch d.Kind {
		case nous.DeltaToolCall:
			if d.Index >= len(m.ToolCalls) || d.ToolCallID != m.ToolCalls[d.Index].ID || d.ToolName != m.ToolCalls[d.Index].Name {
				t.Fatalf("delta %d names call %d %q %q; the calls are %+v", k, d.Index, d.ToolCallID, d.ToolName, m.ToolCalls)
			}
			first := !slices.ContainsFunc(deltas[:k], func(e nous.Delta) bool { return e.Kind == d.Kind && e.Index == d.Index })
			if first != (d.Text == "") {
				t.Errorf("delta %d of call %d: text %q (the first names the call, and only it has no text)", k, d.Index, d.Text)
			}
			calls[d.Index].WriteString(d.Text)
		case nous.DeltaText, nous.DeltaThinking:
			if d.Text == "" || d.ToolCallID != "" || d.ToolName != "" {
				t.Errorf("delta %d: %+v", k, d)
			}
		default:
			t.Errorf("delta %d of kind %q", k, d.Kind)
		}
	}
	if !slices.Equal(got[nous.DeltaText], text) {
		t.Errorf("text deltas %q, the message's text %q", got[nous.DeltaText], text)
	}
	if !slices.Equal(got[nous.DeltaThinking], thinking) {
		t.Errorf("thinking deltas %q, the message's thinking %q", got[nous.DeltaThinking], thinking)
	}
	if len(got[nous.DeltaToolCall]) != len(m.ToolCalls) {
		t.Errorf("deltas of %d calls, %d in the message", len(got[nous.DeltaToolCall]), len(m.ToolCalls))
	}
	for k, tc := range m.ToolCalls {
		args := calls[k].String()
		if args == "" {
			args = "{}" // a call without input streams none
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(args)); err != nil || compact.String() != string(tc.Arguments) {
			t.Errorf("call %d: deltas %q, arguments %s", k, args, tc.Arguments)
		}
	}
}

// The deltas of the parallel calls, one by one: Index is a block's place
// among those of its kind; a call's ID and name are on each of its deltas.
func TestStreamDeltas(t *testing.T) {
	frames, _ := recorded(t, "parallel_tools")
	r := streamed(t, frames, false, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	paris := nous.Delta{Kind: nous.DeltaToolCall, Index: 0, ToolCallID: "toolu_01AbCdEfGhIjKlMnOpQrStUv", ToolName: "get_weather"}
	tokyo := nous.Delta{Kind: nous.DeltaToolCall, Index: 1, ToolCallID: "toolu_01WxYz0123456789AbCdEfGh", ToolName: "get_weather"}
	clock := nous.Delta{Kind: nous.DeltaToolCall, Index: 2, ToolCallID: "toolu_01QqRrSsTtUuVvWwXxYyZz00", ToolName: "get_time"}
	with := func(d nous.Delta, text string) nous.Delta { d.Text = text; return d }
	want := []nous.Delta{
		{Kind: nous.DeltaText, Text: "Let me look up"}, {Kind: nous.DeltaText, Text: " both cities"}, {Kind: nous.DeltaText, Text: " and the time."},
		paris, with(paris, `{"ci`), with(paris, `ty": "Par`), with(paris, `is"}`),
		tokyo, with(tokyo, `{"city": `), with(tokyo, `"Tokyo", `), with(tokyo, `"unit": "fahrenheit"`), with(tokyo, `}`),
		clock,
	}
	if !slices.Equal(r.deltas, want) {
		t.Errorf("deltas\n%+v\nwant\n%+v", r.deltas, want)
	}
	for _, tt := range []struct {
		name string
		want []nous.Delta
	}{
		{"thinking_tool", []nous.Delta{
			{Kind: nous.DeltaThinking, Text: "The user wants the weather"}, {Kind: nous.DeltaThinking, Text: " in Paris. I should call get_weather"}, {Kind: nous.DeltaThinking, Text: " with the city."},
			{Kind: nous.DeltaText, Text: "I'll check"}, {Kind: nous.DeltaText, Text: " the weather in Paris."},
		}},
		{"redacted_thinking", []nous.Delta{ // redacted thinking is thinking block 0
			{Kind: nous.DeltaThinking, Index: 1, Text: "Answer"}, {Kind: nous.DeltaThinking, Index: 1, Text: " plainly."},
			{Kind: nous.DeltaText, Text: "The answer"}, {Kind: nous.DeltaText, Text: " is 42."},
		}},
		{"web_search", []nous.Delta{ // the server tool gives none
			{Kind: nous.DeltaText, Text: "I'll search"}, {Kind: nous.DeltaText, Text: " for when Claude Shannon was born."},
			{Kind: nous.DeltaText, Index: 1, Text: "Based on the search results, "},
			{Kind: nous.DeltaText, Index: 2, Text: "Claude Shannon was born"}, {Kind: nous.DeltaText, Index: 2, Text: " on April 30, 1916, in Petoskey, Michigan"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			frames, _ := recorded(t, tt.name)
			r := streamed(t, frames, false, nil)
			got := slices.DeleteFunc(r.deltas, func(d nous.Delta) bool { return d.Kind == nous.DeltaToolCall })
			if r.err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%v: deltas\n%+v\nwant\n%+v", r.err, got, tt.want)
			}
		})
	}
}

// errorFrame is the error event the API sends when it is overloaded
// mid-stream.
const errorFrame = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"

// A stream cut at every event boundary, by a clean end of the body, by a
// cut connection, or by an error event, returns an error wrapping
// ErrInterrupted and a partial message the caller can add: see
// checkInterrupted. A connection cut, or an error event, before any event
// changes nothing.
func TestStreamCutAtEveryEvent(t *testing.T) {
	for _, name := range cutCases {
		t.Run(name, func(t *testing.T) {
			frames, body := recorded(t, name)
			final, finalUsage := imported(t, body)
			for k := range len(frames) + 1 {
				for _, how := range []string{"end", "abort", "error event"} {
					cut := slices.Clip(frames[:k])
					if how == "error event" {
						cut = append(cut, errorFrame)
					}
					r := streamed(t, cut, how == "abort", nil)
					where := fmt.Sprintf("%d of %d events, %s", k, len(frames), how)
					if k == len(frames) { // message_stop came: the reply is whole, and what follows is not read
						if r.err != nil || encoded(t, r.m) != encoded(t, final) {
							t.Fatalf("%s: %v", where, r.err)
						}
						continue
					}
					if k == 0 && how != "end" && !errors.Is(r.err, nous.ErrInterrupted) { // an error before any event
						if r.err == nil || r.c.Len() != 1 || r.c.Usage != (nous.Usage{}) {
							t.Fatalf("%s: %v; %d messages, usage %+v", where, r.err, r.c.Len(), r.c.Usage)
						}
						continue
					}
					checkInterrupted(t, where, r, final, finalUsage)
				}
			}
		})
	}
}

// A context cancelled from the delta callback, at any delta, stops the
// stream: an error wrapping ErrInterrupted and context.Canceled, and a
// partial message the caller can add.
func TestStreamCancelledFromADelta(t *testing.T) {
	for _, name := range cutCases {
		t.Run(name, func(t *testing.T) {
			frames, body := recorded(t, name)
			final, finalUsage := imported(t, body)
			n := len(streamed(t, frames, false, nil).deltas)
			for at := range n {
				seen := 0
				r := streamed(t, frames, false, func(cancel context.CancelFunc, _ nous.Delta) {
					if seen++; seen == at+1 {
						cancel()
					}
				})
				where := fmt.Sprintf("cancelled at delta %d of %d", at, n)
				if !errors.Is(r.err, context.Canceled) {
					if r.err == nil && at == n-1 { // the last delta came with the last events, already read
						continue
					}
					t.Fatalf("%s: %v", where, r.err)
				}
				checkInterrupted(t, where, r, final, finalUsage)
			}
		})
	}
}

// An error event of the API mid-stream: the SDK's *anthropic.Error of it,
// the text so far, and the usage of message_start.
func TestStreamErrorEvent(t *testing.T) {
	frames, body := recorded(t, "overloaded")
	r := streamed(t, frames, false, nil)
	var apiErr *anthropic.Error
	if !errors.Is(r.err, nous.ErrInterrupted) || !errors.As(r.err, &apiErr) || !strings.Contains(body, "overloaded_error") || !strings.Contains(apiErr.Error(), "overloaded_error") {
		t.Fatalf("%v (%T)", r.err, r.err)
	}
	if r.m.Content != "The first part of the ans" || !r.m.Interrupted() || r.c.Len() != 1 {
		t.Errorf("partial %+v, %d messages", r.m, r.c.Len())
	}
	if want := (nous.Usage{Requests: 1, InputTokens: 40, OutputTokens: 1, TotalTokens: 41}); r.c.Usage != want {
		t.Errorf("usage %+v, want %+v", r.c.Usage, want)
	}
}

// checkInterrupted checks a stream that stopped early, r, against the
// reply it would have been, final: an error wrapping ErrInterrupted;
// nothing added to the context but usage no more than the reply's; a
// partial message that is the zero Message, or the assistant's marked
// interrupted, its text what the text deltas gave (a prefix of the
// reply's), its thinking what the thinking deltas gave as plain parts with
// no signature or provider, no tool call and no kept block; and a context
// that holds it keeps its pairing, fills a request the API takes, and
// fills the same one after a JSON round trip.
func checkInterrupted(t *testing.T, where string, r run, final nous.Message, finalUsage nous.Usage) {
	t.Helper()
	if !errors.Is(r.err, nous.ErrInterrupted) {
		t.Fatalf("%s: %v, not interrupted", where, r.err)
	}
	if r.c.Len() != 1 {
		t.Fatalf("%s: %d messages: the partial message was added", where, r.c.Len())
	}
	if !usageWithin(r.c.Usage, finalUsage) {
		t.Fatalf("%s: usage %+v, more than the reply's %+v", where, r.c.Usage, finalUsage)
	}
	var text, thinking []string
	for _, d := range r.deltas {
		s := &text
		if d.Kind == nous.DeltaThinking {
			s = &thinking
		} else if d.Kind != nous.DeltaText {
			continue
		}
		for len(*s) <= d.Index {
			*s = append(*s, "")
		}
		(*s)[d.Index] += d.Text
	}
	text, thinking = slices.DeleteFunc(text, isEmpty), slices.DeleteFunc(thinking, isEmpty)
	checkPartial(t, where, r.m)
	if got := partialText(r.m); !slices.Equal(got, text) || !strings.HasPrefix(final.Text(), r.m.Text()) {
		t.Fatalf("%s: partial text %q; the deltas gave %q, the reply %q", where, got, text, final.Text())
	}
	var gotThinking []string
	for _, p := range r.m.Parts {
		if p.Type == nous.PartThinking {
			gotThinking = append(gotThinking, p.Content)
		}
	}
	if !slices.Equal(gotThinking, thinking) {
		t.Fatalf("%s: partial thinking %q; the deltas gave %q", where, gotThinking, thinking)
	}
	if r.m.Role == "" {
		return
	}
	adapttest.Must(t, r.c.AddMessage(r.m))
	checkSendable(t, where, r.c)
}

// checkPartial checks what every partial message is: zero, or the
// assistant's marked interrupted with text and plain thinking only.
func checkPartial(t *testing.T, where string, m nous.Message) {
	t.Helper()
	if m.Role == "" {
		if encoded(t, m) != encoded(t, nous.Message{}) {
			t.Fatalf("%s: a partial message without a role: %+v", where, m)
		}
		return
	}
	if m.Role != nous.RoleAssistant || !m.Interrupted() || len(m.ToolCalls) != 0 || m.Text() == "" && len(m.Parts) == 0 {
		t.Fatalf("%s: partial %+v", where, m)
	}
	for k := range m.Metadata {
		if k != nous.MetadataInterrupted && k != "model" {
			t.Fatalf("%s: partial metadata %q", where, k)
		}
	}
	for _, p := range m.Parts {
		if p.Type != nous.PartText && p.Type != nous.PartThinking || len(p.Options) != 0 || p.Content == "" {
			t.Fatalf("%s: partial part %+v", where, p)
		}
	}
}

// checkSendable checks that c, which ends in a partial message, keeps its
// pairing, fills a request the API takes, and the same one after a JSON
// round trip.
func checkSendable(t *testing.T, where string, c *nous.Context) {
	t.Helper()
	if err := c.CheckToolPairing(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	fill := func(c *nous.Context) string {
		params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}
		if err := nousanthropic.Fill(&params, c); err != nil {
			t.Fatalf("%s: Fill: %v", where, err)
		}
		b, err := json.Marshal(params)
		adapttest.Must(t, err)
		if p := adapttest.CheckAnthropic(b); p != "" {
			t.Fatalf("%s: %s in %s", where, p, b)
		}
		return string(b)
	}
	if a, b := fill(c), fill(adapttest.RoundTrip(t, c)); a != b {
		t.Fatalf("%s: the request changed in a round trip:\n%s\n%s", where, a, b)
	}
}

func partialText(m nous.Message) []string {
	if m.Content != "" {
		return []string{m.Content}
	}
	var out []string
	for _, p := range m.Parts {
		if p.Type == nous.PartText {
			out = append(out, p.Content)
		}
	}
	return out
}

func isEmpty(s string) bool { return s == "" }

// usageWithin reports whether every count of u is at most that of max.
func usageWithin(u, max nous.Usage) bool {
	return u.Requests <= max.Requests && u.ToolCalls <= max.ToolCalls && u.InputTokens <= max.InputTokens &&
		u.OutputTokens <= max.OutputTokens && u.TotalTokens <= max.TotalTokens &&
		u.CacheCreationInputTokens <= max.CacheCreationInputTokens && u.CacheReadInputTokens <= max.CacheReadInputTokens &&
		u.ReasoningTokens <= max.ReasoningTokens
}

// events returns the events of frames, decoded as the SDK decodes them;
// pings too, which the SDK's stream skips.
func events(t testing.TB, frames []string) []anthropic.MessageStreamEventUnion {
	t.Helper()
	var out []anthropic.MessageStreamEventUnion
	for _, f := range frames {
		_, data, ok := strings.Cut(f, "\ndata: ")
		if !ok {
			t.Fatalf("a frame without data: %q", f)
		}
		var e anthropic.MessageStreamEventUnion
		adapttest.Must(t, e.UnmarshalJSON([]byte(strings.TrimSpace(data))))
		out = append(out, e)
	}
	return out
}

// The API sends a reply's blocks one after another; what may change is
// where pings fall and how text, thinking and input are cut into deltas.
// Any such stream gives the same message, and deltas that add up to it.
func TestStreamEventOrder(t *testing.T) {
	seed := *streamSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("-stream.seed=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, name := range streamCases {
		t.Run(name, func(t *testing.T) {
			frames, body := recorded(t, name)
			want, wantUsage := imported(t, body)
			base := events(t, frames)
			for range 50 {
				var deltas []nous.Delta
				s := nousanthropic.MessageStream{OnDelta: func(d nous.Delta) { deltas = append(deltas, d) }}
				for _, e := range shuffled(t, rng, base) {
					adapttest.Must(t, s.Add(e))
				}
				m, u, err := s.Message()
				if err != nil || encoded(t, m) != encoded(t, want) || u != wantUsage {
					t.Fatalf("%v:\n%s\nwant\n%s", err, encoded(t, m), encoded(t, want))
				}
				checkDeltas(t, deltas, want)
			}
		})
	}
}

// shuffled returns events with pings put anywhere and every text,
// thinking and input delta cut again at random points (into empty pieces
// too).
func shuffled(t testing.TB, rng *rand.Rand, events []anthropic.MessageStreamEventUnion) []anthropic.MessageStreamEventUnion {
	ping := func() anthropic.MessageStreamEventUnion {
		var e anthropic.MessageStreamEventUnion
		adapttest.Must(t, e.UnmarshalJSON([]byte(`{"type":"ping"}`)))
		return e
	}
	var out []anthropic.MessageStreamEventUnion
	for _, e := range events {
		if e.Type == "ping" {
			continue
		}
		if rng.IntN(4) == 0 {
			out = append(out, ping())
		}
		field := map[string]string{"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}[e.Delta.Type]
		if e.Type != "content_block_delta" || field == "" {
			out = append(out, e)
			continue
		}
		text := e.Delta.Text + e.Delta.Thinking + e.Delta.PartialJSON
		for len(text) > 0 || rng.IntN(3) == 0 {
			k := rng.IntN(len(text) + 1)
			for k < len(text) && !utf8Start(text[k]) {
				k++
			}
			piece, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": e.Index, "delta": map[string]any{"type": e.Delta.Type, field: text[:k]}})
			var d anthropic.MessageStreamEventUnion
			adapttest.Must(t, d.UnmarshalJSON(piece))
			out = append(out, d)
			text = text[k:]
			if len(text) == 0 && rng.IntN(2) == 0 {
				break
			}
		}
	}
	return append(out, ping())
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// The zero MessageStream is ready: no message yet, and nothing to add.
func TestMessageStreamZero(t *testing.T) {
	var s nousanthropic.MessageStream
	if m, u := s.Partial(); m.Role != "" || u != (nous.Usage{}) {
		t.Errorf("Partial: %+v %+v", m, u)
	}
	if _, _, err := s.Message(); !errors.Is(err, nous.ErrInterrupted) {
		t.Errorf("Message: %v", err)
	}
}

// An event the API does not send where it came is refused with
// ErrEventOutOfPlace and changes nothing; an error event ends the stream.
func TestMessageStreamEventOutOfPlace(t *testing.T) {
	frames, _ := recorded(t, "parallel_tools")
	all := events(t, frames)
	decode := func(s string) anthropic.MessageStreamEventUnion {
		var e anthropic.MessageStreamEventUnion
		adapttest.Must(t, e.UnmarshalJSON([]byte(s)))
		return e
	}
	for _, tt := range []struct {
		name  string
		after int // the events read before it
		event string
	}{
		{"a delta before message_start", 0, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`},
		{"message_stop before message_start", 0, `{"type":"message_stop"}`},
		{"a second message_start", 3, `{"type":"message_start","message":{"id":"msg_2","content":[]}}`},
		{"a block started out of turn", 3, `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`},
		{"a delta for a block not started", 3, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}`},
		{"a delta for a stopped block", 6, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`},
		{"a second stop", 6, `{"type":"content_block_stop","index":0}`},
		{"text in a tool_use block", 9, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}`},
		{"input in a text block", 4, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`},
		{"a signature in a text block", 4, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`},
		{"an event after message_stop", len(all), `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s nousanthropic.MessageStream
			for _, e := range all[:tt.after] {
				adapttest.Must(t, s.Add(e))
			}
			before, beforeUsage := s.Partial()
			_, _, beforeErr := s.Message()
			if err := s.Add(decode(tt.event)); !errors.Is(err, nousanthropic.ErrEventOutOfPlace) {
				t.Fatalf("Add: %v", err)
			}
			after, afterUsage := s.Partial()
			_, _, afterErr := s.Message()
			if encoded(t, before) != encoded(t, after) || beforeUsage != afterUsage || (beforeErr == nil) != (afterErr == nil) {
				t.Errorf("the event changed the stream: %+v %+v, then %+v %+v", before, beforeUsage, after, afterUsage)
			}
			for _, e := range all[tt.after:] { // the stream goes on as it was
				if err := s.Add(e); err != nil && tt.after < len(all) {
					t.Fatal(err)
				}
			}
		})
	}
	t.Run("an error event", func(t *testing.T) {
		var s nousanthropic.MessageStream
		for _, e := range all[:4] {
			adapttest.Must(t, s.Add(e))
		}
		if err := s.Add(decode(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)); !errors.Is(err, nous.ErrInterrupted) || !strings.Contains(err.Error(), "overloaded_error: Overloaded") {
			t.Fatalf("Add: %v", err)
		}
		if err := s.Add(all[4]); !errors.Is(err, nousanthropic.ErrEventOutOfPlace) {
			t.Errorf("an event after the error: %v", err)
		}
		if m, _ := s.Partial(); m.Content != "Let me look up both cities" || !m.Interrupted() {
			t.Errorf("Partial: %+v", m)
		}
		if _, _, err := s.Message(); !errors.Is(err, nous.ErrInterrupted) {
			t.Errorf("Message: %v", err)
		}
	})
}
