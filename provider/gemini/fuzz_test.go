package gemini_test

import (
	"encoding/json"
	"errors"
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
