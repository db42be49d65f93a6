package gemini_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/genai"

	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// A stream cut when its text holds nothing but white space has nothing
// the API takes back (it refuses a blank text part): Partial is the zero
// Message, as it is for blank thoughts.
func TestContentStreamPartialOfBlankTextIsZero(t *testing.T) {
	for _, thought := range []bool{false, true} {
		for _, blank := range []string{" ", "\n\n", " \t\n"} {
			t.Run(fmt.Sprintf("thought %v %q", thought, blank), func(t *testing.T) {
				raw := fmt.Sprintf(`{"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":%q,"thought":%v}]}}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":1,"totalTokenCount":10},"modelVersion":"gemini-2.5-flash"}`, blank, thought)
				var chunk genai.GenerateContentResponse
				if err := json.Unmarshal([]byte(raw), &chunk); err != nil {
					t.Fatal(err)
				}
				var s nousgemini.ContentStream
				if err := s.Add(&chunk); err != nil {
					t.Fatal(err)
				}
				m, u := s.Partial()
				if m.Role != "" || m.Content != "" || len(m.Parts) != 0 {
					b, _ := json.Marshal(m)
					t.Errorf("Partial is %s, not the zero Message", b)
				}
				if u.Requests != 1 || u.InputTokens != 9 {
					t.Errorf("usage %+v", u)
				}
			})
		}
	}
}
