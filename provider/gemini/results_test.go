package gemini_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
)

// The user writes after the tool ran (or a runtime's system note comes
// there): the function responses are a user content of their own, and the
// text is the next user content, which begins a new turn. In the same
// content after the responses, Gemini 3 models read the text as more of
// the results.
func TestTextAfterResults(t *testing.T) {
	for name, next := range map[string]nous.Message{
		"user":   nous.UserMessage("And tomorrow?"),
		"system": nous.SystemMessage("The user is in a hurry."),
	} {
		t.Run(name, func(t *testing.T) {
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")),
				msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)})),
				msg(nous.ToolMessage("c1", "weather", "sunny")), msg(next)))
			body, p := sendParams(t, c)
			if problem := checkRequest(p, c.Messages()); problem != "" {
				t.Fatalf("%s\n%s", problem, body)
			}
			w := decodeBody(t, body)
			if len(w.Contents) != 4 || len(w.Contents[2].Parts) != 1 || w.Contents[2].Parts[0].FunctionResponse == nil ||
				w.Contents[3].Role != genai.RoleUser || w.Contents[3].Parts[0].Text != next.Content {
				t.Errorf("the text does not follow the responses as a content of its own:\n%s", body)
			}
		})
	}
}

// A tool result of several text parts: their texts are one output, each
// on a line of its own, not run together.
func TestResultTextsJoined(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Read both files.")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "read"})),
		msg(nous.Message{Role: nous.RoleTool, ToolCallID: "c1", Name: "read", Content: "a.txt:",
			Parts: []nous.ContentPart{nous.TextPart("first file"), nous.TextPart(""), nous.TextPart("second file")}})))
	if got := outputs(t, send(t, c), 2); len(got) != 1 || got[0] != "a.txt:\nfirst file\nsecond file" {
		t.Errorf("output %q", got)
	}
}
