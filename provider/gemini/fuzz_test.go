package gemini_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// FuzzResponse: any response the SDK decodes becomes a message, or an
// error wrapping ErrNoCandidate, without a panic; a context holding it
// (its calls answered) gives contents or an *Error, and the same contents
// after a JSON round trip of the context.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"t","thought":true,"thoughtSignature":"c2ln"},{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2ln"},{"fileData":{"fileUri":"gs://b/v.mp4","mimeType":"video/mp4"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="},"thought":true},{"functionCall":{"id":"x","name":"f"},"text":"both"}]}}]}`,
		`{"candidates":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp genai.GenerateContentResponse
		if !utf8.Valid(body) || json.Unmarshal(body, &resp) != nil {
			return // the API sends UTF-8; a context keeps text as UTF-8
		}
		m, _, err := nousgemini.Message(&resp)
		if err != nil {
			if !errors.Is(err, nousgemini.ErrNoCandidate) {
				t.Logf("Message: %v", err) // arguments JSON cannot hold (NaN): refused, not a panic
			}
			return
		}
		adapttest.Refill(t, m, func(c *nous.Context) (any, error) {
			p := nousgemini.Params{Config: &genai.GenerateContentConfig{}}
			err := nousgemini.Fill(&p, c)
			return p, err
		})
	})
}

// FuzzContentStream: any chunks the SDK decodes (one JSON a line), in any
// order, are read without a panic; Message and Partial never panic; the
// partial is nothing, or an interrupted assistant message of text and
// unsigned thinking whose text begins the final message's, which a context
// takes, pairs, fills and keeps through a JSON round trip.
func FuzzContentStream(f *testing.F) {
	for _, name := range streamCases {
		frames, _ := fixture(f, name)
		var lines []string
		for _, fr := range frames {
			lines = append(lines, strings.TrimPrefix(strings.TrimSpace(fr), "data: "))
		}
		f.Add([]byte(strings.Join(lines, "\n")))
		slices.Reverse(lines)
		f.Add([]byte(strings.Join(lines, "\n")))
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.a","stringValue":"x"}],"willContinue":true}}]}}]}`))
	f.Add([]byte(`{"candidates":[{"index":1,"content":{"parts":[{"text":"other"}]}},{"content":{"parts":[{"text":"","thought":true,"thoughtSignature":"c2ln"},{"inlineData":{"mimeType":"image/png","data":"AA=="}}]},"finishReason":"STOP"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return // the API sends UTF-8; a context keeps text as UTF-8
		}
		var s nousgemini.ContentStream
		s.OnDelta = func(d nous.Delta) {
			if d.Text == "" || d.Index < 0 {
				t.Errorf("delta %+v", d)
			}
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			var chunk genai.GenerateContentResponse
			if json.Unmarshal([]byte(line), &chunk) != nil {
				continue
			}
			if s.Add(&chunk) != nil {
				break
			}
		}
		final, finalUsage, err := s.Message()
		m, u := s.Partial()
		if err == nil && !strings.HasPrefix(final.Text(), m.Text()) {
			t.Errorf("partial text %q does not begin %q", m.Text(), final.Text())
		}
		if err == nil {
			if bad := exceeds(u, finalUsage); bad != "" {
				t.Errorf("partial usage %+v over the final %+v: %s", u, finalUsage, bad)
			}
		}
		if m.Role == "" {
			if m.Content != "" || m.Parts != nil || m.Metadata != nil {
				t.Errorf("a partial without a role: %+v", m)
			}
			return
		}
		checkKept(t, m)
		c := nous.NewContext()
		must(t, c.AddMessages(nous.UserMessage("q"), m))
		if err := c.CheckToolPairing(); err != nil {
			t.Fatal(err)
		}
		p := nousgemini.Params{Config: &genai.GenerateContentConfig{}}
		if err := nousgemini.Fill(&p, c); err != nil {
			t.Fatalf("Fill refuses the partial %+v: %v", m, err)
		}
		if !lastIs(adapttest.RoundTrip(t, c), m) {
			t.Errorf("the partial changed in a round trip")
		}
	})
}
