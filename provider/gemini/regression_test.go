package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// decodeResp decodes a GenerateContent body through the SDK against a fake.
func decodeResp(t *testing.T, body string) *genai.GenerateContentResponse {
	t.Helper()
	cl, _ := client(t, body)
	resp, err := cl.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("q"), nil)
	must(t, err)
	return resp
}

// Gemini (2.5/3 with thinking) ends a text answer with an empty text part
// that carries the thought signature. The doc says "A signature is never
// dropped"; Message drops the part (case p.Text != "") and Contents would
// drop it again (textParts skips blank text).
func TestEmptyTextPartSignatureKept(t *testing.T) {
	resp := decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Paris."},{"text":"","thoughtSignature":"c2lnLWVuZA=="}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1},"modelVersion":"gemini-test"}`)
	m, _, err := nousgemini.Message(resp)
	must(t, err)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Capital of France?")), m, msg(nous.UserMessage("And Italy?"))))
	sent := send(t, c)
	if !bytes.Contains(sent, []byte("c2lnLWVuZA==")) {
		t.Errorf("the thought signature of the empty text part was dropped: message %+v, sent %s", m, sent)
	}
}

// The doc's Content rule: "no empty or whitespace-only text part is sent".
// A Gemini thought part with blank text and no signature is sent as a part
// with thought:true and no data (or blank text).
func TestBlankThoughtPartSent(t *testing.T) {
	c := nous.NewContext()
	a := msg(nous.AssistantMessage("Hi."))
	a.Parts = []nous.ContentPart{{Type: nous.PartThinking, Content: " ", Options: map[string]any{"provider": "gemini"}}}
	must(t, c.AddMessages(msg(nous.UserMessage("q")), a, msg(nous.UserMessage("more"))))
	sent := send(t, c)
	var got struct {
		Contents []struct {
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
	}
	must(t, json.Unmarshal(sent, &got))
	for _, p := range got.Contents[1].Parts {
		text, _ := p["text"].(string)
		if p["thought"] == true && strings.TrimSpace(text) == "" && p["thoughtSignature"] == nil {
			t.Errorf("a blank thought part was sent: %v (body %s)", p, sent)
		}
	}
}

// Contents(c, nil): the system prompt has nowhere to go and is silently
// dropped; no error.
func TestNilConfigDropsSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Never reveal the password."))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	contents, err := nousgemini.Contents(c, nil)
	if err == nil {
		b, _ := json.Marshal(contents)
		if !bytes.Contains(b, []byte("password")) {
			t.Errorf("Contents(c, nil) dropped the system prompt without an error: %s", b)
		}
	}
}

// Spec: "Name resolved from the call". A tool message whose Name differs
// from its call's name is sent under the tool message's name.
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
// immediately after a user turn or after a function response turn."). A
// pairing-valid view that starts (after system) with an assistant tool call
// goes out without error.
func TestFunctionCallTurnFirst(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.SystemMessage("s")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})),
		msg(nous.ToolMessage("c1", "f", "1")), msg(nous.UserMessage("q"))))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	if err == nil && len(contents) > 0 && contents[0].Role == genai.RoleModel && contents[0].Parts[0].FunctionCall != nil {
		t.Errorf("contents start with a function call turn, which the API refuses; no error")
	}
}

// Odd responses must not panic.
func TestMessageNilCandidate(t *testing.T) {
	for name, resp := range map[string]*genai.GenerateContentResponse{
		"nil response":  nil,
		"nil candidate": {Candidates: []*genai.Candidate{nil}},
		"nil part":      {Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{nil}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Message panicked: %v", r)
				}
			}()
			nousgemini.Message(resp)
		})
	}
}

// A blocked prompt is billed (usageMetadata present) but Message returns a
// zero Usage with the error: Requests and the prompt tokens are lost.
func TestBlockedPromptUsageLost(t *testing.T) {
	var resp genai.GenerateContentResponse
	must(t, json.Unmarshal([]byte(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":50,"totalTokenCount":50}}`), &resp))
	_, u, err := nousgemini.Message(&resp)
	if err != nil && u.Requests != 1 {
		t.Errorf("usage of a blocked response lost: %+v (%v)", u, err)
	}
}

// An empty part (no text, no signature, nothing else) is no part of the
// message.
func TestEmptyPartSkipped(t *testing.T) {
	m, _, err := nousgemini.Message(decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[{},{"text":"Hi."},{"text":""}]},"finishReason":"STOP"}]}`))
	must(t, err)
	if m.Content != "Hi." || len(m.Parts) != 0 || m.Metadata["gemini_part_order"] != nil {
		t.Errorf("message %+v", m)
	}
}
