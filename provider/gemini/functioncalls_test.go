package gemini_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/nous-go/nous"
)

// outputs returns the "output" of each function response of content k of
// a body the SDK sent.
func outputs(t *testing.T, body []byte, k int) []any {
	t.Helper()
	w := decodeBody(t, body)
	if len(w.Contents) <= k {
		t.Fatalf("no content %d: %s", k, body)
	}
	var out []any
	for _, p := range w.Contents[k].Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse.Response["output"])
		}
	}
	return out
}

// Two parallel calls to one function, without IDs from the API (Message
// makes them up, and they are not sent), answered in the other order: the
// function responses go in the calls' order, as the API matches them by
// position and name.
func TestResultsInCallOrder(t *testing.T) {
	m := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnLTE="},
	{"functionCall":{"name":"weather","args":{"city":"London"}}}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9},"modelVersion":"gemini-test"}`)
	paris, london := m.ToolCalls[0].ID, m.ToolCalls[1].ID
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris and London?")), m,
		msg(nous.ToolMessage(london, "weather", "rain")), msg(nous.ToolMessage(paris, "weather", "sun"))))
	if got := outputs(t, send(t, c), 2); !slices.Equal(got, []any{"sun", "rain"}) {
		t.Errorf("function responses %v, not in the calls' order [sun rain]: Paris's call is answered \"rain\" by position", got)
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
	if got := outputs(t, send(t, c), 6); !slices.Equal(got, []any{"sun", "rain"}) {
		t.Errorf("function responses %v, not in the calls' order [sun rain]: Paris's call is answered \"rain\" by position", got)
	}
	if got := outputs(t, send(t, c), 2); !slices.Equal(got, []any{"hot", "cold"}) {
		t.Errorf("the first turn's function responses %v, not [hot cold]", got)
	}
}

// A tool result with an image sends it as a part of the function response.
func TestToolResultImage(t *testing.T) {
	shot := nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Screenshot the page.")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "screenshot", Arguments: json.RawMessage(`{}`)})),
		msg(nous.Message{Role: nous.RoleTool, ToolCallID: "c1", Name: "screenshot", Parts: []nous.ContentPart{shot}})))
	body := send(t, c)
	fr := decodeBody(t, body).Contents[2].Parts[0].FunctionResponse
	if fr == nil || len(fr.Parts) != 1 || fr.Parts[0].InlineData == nil || fr.Parts[0].InlineData.MIMEType != "image/png" {
		t.Errorf("the image is not a part of the function response: %s", body)
	}
}

// A function response is named after its call, also when the tool
// message's Name differs: the API matches the two.
func TestFunctionResponseNameFromCall(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{}`)})),
		msg(nous.ToolMessage("c1", "weather_tool", "sunny"))))
	body := send(t, c)
	if fr := decodeBody(t, body).Contents[2].Parts[0].FunctionResponse; fr == nil || fr.Name != "get_weather" {
		t.Errorf("the function response is not named after its call: %s", body)
	}
}
