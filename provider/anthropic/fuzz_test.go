package anthropic_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// FuzzResponse: any response body the SDK decodes becomes a message without
// a panic, and a context holding it (its calls answered) either fills a
// request or gives an *Error; a message made from a response that Fill
// accepts gives the same request after a JSON round trip of the context.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}],"usage":{}}`,
		`{"content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]}`,
		`{"content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]}`,
		`{"content":[{"type":"text","text":"x","citations":[{"type":"char_location","cited_text":"c","document_index":0,"start_char_index":0,"end_char_index":1}]}]}`,
		`{"content":[{"type":"future","x":[1,2,{"y":null}]},{"type":"redacted_thinking","data":"d"}]}`,
		`{"content":[{"type":"tool_use","id":"a b","name":"f","input":"not an object"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp anthropic.Message
		if !utf8.Valid(body) || json.Unmarshal(body, &resp) != nil {
			return // the API sends UTF-8; a context keeps text as UTF-8
		}
		m, _, _ := nousanthropic.Message(&resp)
		adapttest.Refill(t, m, func(c *nous.Context) (any, error) {
			var params anthropic.MessageNewParams
			err := nousanthropic.Fill(&params, c) // before params is read
			return params, err
		})
	})
}

// FuzzKept: whatever a message's kept blocks and citations hold, Fill gives
// a request or an *Error wrapping ErrUnsupported, never a panic.
func FuzzKept(f *testing.F) {
	f.Add(`{"type":"server_tool_use","id":"s","name":"n","input":{}}`, `[{"type":"char_location"}]`, "block:0")
	f.Add(`{"type":`, `[`, "block:7")
	f.Add(`null`, `null`, "block:-1")
	f.Fuzz(func(t *testing.T, block, citations, entry string) {
		m := nous.AssistantMessage("")
		m.Parts = []nous.ContentPart{{Type: nous.PartText, Content: "cited", Options: map[string]any{"provider": "anthropic", "citations": citations}}}
		m.Metadata = map[string]any{"anthropic_block_order": []any{"text", entry}, "anthropic_blocks": []any{block}}
		c := nous.NewContext()
		if c.AddMessage(nous.UserMessage("q")) != nil || c.AddMessage(m) != nil {
			return
		}
		var params anthropic.MessageNewParams
		if err := nousanthropic.Fill(&params, c); err != nil {
			var e *nousanthropic.Error
			if !errors.As(err, &e) || !errors.Is(err, nousanthropic.ErrUnsupported) {
				t.Fatalf("Fill: %v", err)
			}
			return
		}
		if _, err := json.Marshal(params); err != nil {
			t.Fatalf("Fill accepted what does not encode: %v", err)
		}
	})
}

// FuzzMessageStream: any events, in any order (one JSON event a line,
// decoded as the SDK decodes them), read by a MessageStream give no panic;
// Partial is always a message the caller can add (zero, or the
// assistant's with text and plain thinking only, which keeps the pairing
// and fills a request the API takes), and a message Message gives fills a
// request or gives an *Error.
func FuzzMessageStream(f *testing.F) {
	for _, name := range []string{"text", "thinking_tool", "redacted_thinking", "parallel_tools", "web_search", "ping", "overloaded"} {
		sse, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
		if err != nil {
			f.Fatal(err)
		}
		var lines []string
		for _, frame := range scripted.Frames(string(sse)) {
			if _, data, ok := strings.Cut(frame, "\ndata: "); ok {
				lines = append(lines, strings.TrimSpace(data))
			}
		}
		f.Add(strings.Join(lines, "\n"))
		slices.Reverse(lines)
		f.Add(strings.Join(lines, "\n"))
	}
	f.Fuzz(fuzzStream)
}

func fuzzStream(t *testing.T, stream string) {
	if !utf8.ValidString(stream) {
		return // the API sends UTF-8
	}
	var s nousanthropic.MessageStream
	s.OnDelta = func(d nous.Delta) {
		if d.Kind == nous.DeltaToolCall && d.ToolCallID == "" && d.ToolName == "" && d.Text == "" {
			t.Fatalf("an empty delta: %+v", d)
		}
	}
	for line := range strings.SplitSeq(stream, "\n") {
		var e anthropic.MessageStreamEventUnion
		if e.UnmarshalJSON([]byte(line)) != nil {
			continue
		}
		_ = s.Add(e)
		s.Partial()
	}
	m, _ := s.Partial()
	checkPartial(t, "fuzz", m)
	if m.Role != "" {
		c := nous.NewContext()
		adapttest.Must(t, c.AddMessage(nous.UserMessage("q")))
		adapttest.Must(t, c.AddMessage(m))
		checkSendable(t, "fuzz", c)
	}
	if whole, _, err := s.Message(); err == nil {
		adapttest.Refill(t, whole, func(c *nous.Context) (any, error) {
			var params anthropic.MessageNewParams
			err := nousanthropic.Fill(&params, c)
			return params, err
		})
	}
}
