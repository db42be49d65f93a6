package gemini_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

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

// Call IDs a server numbers per turn (call_0, call_1 in every turn; the
// pairing check allows an ID again in a later turn), the second turn's
// results answered in the other order: the function responses go in that
// turn's calls' order.
func TestResultsInCallOrderWithIDsAgain(t *testing.T) {
	call := func(id, city string) nous.ToolCall {
		return nous.ToolCall{ID: id, Name: "weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}
	}
	c := nous.NewContext()
	must(t, c.AddMessages(
		msg(nous.UserMessage("Weather in Rome and Oslo?")),
		msg(nous.AssistantMessage("", call("call_0", "Rome"), call("call_1", "Oslo"))),
		msg(nous.ToolMessage("call_0", "weather", "hot")),
		msg(nous.ToolMessage("call_1", "weather", "cold")),
		msg(nous.AssistantMessage("Hot in Rome, cold in Oslo.")),
		msg(nous.UserMessage("And Paris and London?")),
		msg(nous.AssistantMessage("", call("call_1", "Paris"), call("call_0", "London"))),
		msg(nous.ToolMessage("call_0", "weather", "rain")),
		msg(nous.ToolMessage("call_1", "weather", "sun")),
	))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	must(t, err)
	var order []string
	for _, p := range contents[len(contents)-1].Parts {
		if p.FunctionResponse != nil {
			order = append(order, p.FunctionResponse.ID)
		}
	}
	if !slices.Equal(order, []string{"call_1", "call_0"}) {
		t.Errorf("function responses %v, not in the calls' order [call_1 call_0]: Paris's call is answered \"rain\" by position", order)
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

// A function response is named after its call, also when the tool
// message's Name differs: the API matches the two.
func TestFunctionResponseNameFromCall(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{}`)})),
		msg(nous.ToolMessage("c1", "weather_tool", "sunny"))))
	sent := send(t, c)
	if !bytes.Contains(sent, []byte(`"functionResponse":{"id":"c1","name":"get_weather"`)) {
		t.Errorf("the function response is not named after its call: %s", sent)
	}
}

// Gemini refuses a function call turn that does not follow a user turn or a
// function response turn ("Please ensure that function call turn comes
// immediately after a user turn or after a function response turn."): a
// view that starts (after system) with an assistant tool call, which the
// pairing check allows, is refused, not sent.
func TestFunctionCallTurnFirstRefused(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.SystemMessage("s")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})),
		msg(nous.ToolMessage("c1", "f", "1")), msg(nous.UserMessage("q"))))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	if err == nil && len(contents) > 0 && contents[0].Role == genai.RoleModel && contents[0].Parts[0].FunctionCall != nil {
		t.Errorf("contents start with a function call turn, which the API refuses; no error")
	}
}
