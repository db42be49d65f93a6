package gemini_test

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
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
		c := nous.NewContext()
		if c.AddMessage(nous.UserMessage("q")) != nil || c.AddMessage(m) != nil {
			return
		}
		for _, tc := range m.ToolCalls {
			if c.AddMessage(nous.ToolMessage(tc.ID, tc.Name, "ok")) != nil {
				return
			}
		}
		first, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
		if err != nil {
			var e *nousgemini.Error
			if !errors.As(err, &e) {
				t.Fatalf("Contents: %v, not an *Error", err)
			}
			return
		}
		data, err := c.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		back, err := nous.Deserialize(data)
		if err != nil {
			t.Fatal(err)
		}
		again, err := nousgemini.Contents(back, &genai.GenerateContentConfig{})
		if err != nil {
			t.Fatalf("Contents after a round trip: %v", err)
		}
		a, _ := json.Marshal(first)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("the contents changed in a round trip:\n%s\n%s", a, b)
		}
	})
}
