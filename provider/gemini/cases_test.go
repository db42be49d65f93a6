package gemini_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// An image the model made and the code execution tool's parts survive a
// round trip: the image with its signature, the code and its result.
func TestNonTextPartsKept(t *testing.T) {
	resp := decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2lnLWltYWdl"},
	{"executableCode":{"language":"PYTHON","code":"print(6*7)"}},
	{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}},
	{"text":"Here it is: 42."}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9},"modelVersion":"gemini-test"}`)
	m, _, err := nousgemini.Message(resp)
	must(t, err)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat, then compute 6*7.")), m, msg(nous.UserMessage("Make it blue."))))
	c = adapttest.RoundTrip(t, c)
	sent := send(t, c)
	for _, want := range []string{"c2lnLWltYWdl", "iVBORw0KGgo=", "print(6*7)", "42\\n"} {
		if !bytes.Contains(sent, []byte(want)) {
			t.Errorf("%s was lost on the round trip (message %+v): %s", want, m, sent)
		}
	}
}

// An image in an assistant message goes in the model turn (the history of
// an image model's conversation).
func TestModelImageSent(t *testing.T) {
	a := msg(nous.AssistantMessage("Here is the cat."))
	a.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), a, msg(nous.UserMessage("Make it blue."))))
	if _, err := nousgemini.Contents(c, &genai.GenerateContentConfig{}); err != nil {
		t.Errorf("Contents refused a model turn with an image, which the API takes: %v", err)
	}
}

// A tool result with an image sends it as a part of the function response.
func TestToolResultImage(t *testing.T) {
	shot := nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Screenshot the page.")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "screenshot", Arguments: json.RawMessage(`{}`)})),
		msg(nous.Message{Role: nous.RoleTool, ToolCallID: "c1", Name: "screenshot", Parts: []nous.ContentPart{shot}})))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	must(t, err)
	fr := contents[2].Parts[0].FunctionResponse
	if fr == nil || len(fr.Parts) != 1 || fr.Parts[0].InlineData == nil || fr.Parts[0].InlineData.MIMEType != "image/png" {
		b, _ := json.Marshal(contents[2])
		t.Errorf("the image is not a part of the function response: %s", b)
	}
}

// Two parallel calls to one function, without IDs from the API (Message
// makes them up), answered in the other order: the function responses go
// in the calls' order, as the API may match them by position.
func TestResultsInCallOrder(t *testing.T) {
	resp := decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnLTE="},
	{"functionCall":{"name":"weather","args":{"city":"London"}}}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9},"modelVersion":"gemini-test"}`)
	m, _, err := nousgemini.Message(resp)
	must(t, err)
	paris, london := m.ToolCalls[0].ID, m.ToolCalls[1].ID
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris and London?")), m,
		msg(nous.ToolMessage(london, "weather", "rain")), msg(nous.ToolMessage(paris, "weather", "sun"))))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	must(t, err)
	var order []string
	for _, p := range contents[2].Parts {
		if p.FunctionResponse != nil {
			order = append(order, p.FunctionResponse.ID)
		}
	}
	if !slices.Equal(order, []string{paris, london}) {
		t.Errorf("function responses in the results' order %v, not the calls' [%s %s]: Paris's call is answered \"rain\" by position", order, paris, london)
	}
}

// A whitespace-only SystemPrompt is not sent.
func TestBlankSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("\n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	config := &genai.GenerateContentConfig{}
	_, err := nousgemini.Contents(c, config)
	must(t, err)
	if config.SystemInstruction != nil {
		b, _ := json.Marshal(config.SystemInstruction)
		t.Errorf("a blank system instruction was set: %s", b)
	}
}
