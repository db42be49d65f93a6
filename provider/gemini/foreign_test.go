package gemini_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// anthropicStep is an assistant message as the Anthropic adapter records a
// reply: signed thinking of its own, text, a tool_use call.
func anthropicStep(id, city string) nous.Message {
	thinking := nous.ThinkingPart("The user wants the weather.", "EqQBCkYIBxgCKkBsig")
	thinking.Options[nous.OptionProvider] = "anthropic"
	m := msg(nous.AssistantMessage("", nous.ToolCall{ID: id, Name: "weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}))
	m.Parts = []nous.ContentPart{thinking, nous.TextPart("I'll check.")}
	m.Metadata = map[string]any{"stop_reason": "tool_use", "model": "claude-test"}
	return m
}

// modelSteps returns the model contents of a body, and whether each lies
// after the last user content with text (the current turn).
func modelSteps(t *testing.T, body []byte) (steps []*genai.Content, current []bool) {
	t.Helper()
	w := decodeBody(t, body)
	start := 0
	for i, c := range w.Contents {
		if c.Role == genai.RoleUser && hasText(c) {
			start = i
		}
	}
	for i, c := range w.Contents {
		if c.Role == genai.RoleModel {
			steps, current = append(steps, c), append(current, i > start)
		}
	}
	return steps, current
}

// firstCall returns the first function call part of a model content.
func firstCall(c *genai.Content) *genai.Part {
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			return p
		}
	}
	return nil
}

// A conversation switched from Anthropic to Gemini in the middle of a tool
// loop: the call Claude made, in the current turn, goes with the signature
// Google documents for calls the API did not make (no ID: Gemini did not
// give it), Claude's thinking dropped. Gemini's own next call keeps its
// signature and ID. Once the user writes again, that turn is no longer the
// current one: its calls go as they are, the made-up signature gone.
func TestForeignCallsInCurrentTurn(t *testing.T) {
	c := nous.NewContext()
	claude := anthropicStep("toolu_01", "Paris")
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris, then in Rome?")), claude,
		msg(nous.ToolMessage("toolu_01", "weather", "sunny"))))
	body := send(t, c)
	golden(t, "foreign_turn", body)
	steps, _ := modelSteps(t, body)
	fc := firstCall(steps[0])
	if !bytes.Equal(fc.ThoughtSignature, skip) || fc.FunctionCall.ID != "" || bytes.Contains(body, []byte("EqQBCkYIBxgCKkBsig")) {
		t.Errorf("Claude's call went as %+v (signature %q)\n%s", fc.FunctionCall, fc.ThoughtSignature, body)
	}
	// As the API's JSON writes the documented value, byte for byte.
	if base64.URLEncoding.EncodeToString(fc.ThoughtSignature) != nousgemini.SkipSignatureValidator {
		t.Errorf("the signature is %q", base64.URLEncoding.EncodeToString(fc.ThoughtSignature))
	}

	gemini := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"functionCall":{"id":"fc_2","name":"weather","args":{"city":"Rome"}},"thoughtSignature":"c2lnLWdlbWluaQ=="}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`)
	must(t, c.AddMessages(gemini, msg(nous.ToolMessage("fc_2", "weather", "rain"))))
	body, p := sendParams(t, c)
	if problem := checkRequest(p, c.Messages()); problem != "" {
		t.Fatalf("%s\n%s", problem, body)
	}
	steps, current := modelSteps(t, body)
	if len(steps) != 2 || !current[0] || !current[1] || !bytes.Equal(firstCall(steps[0]).ThoughtSignature, skip) ||
		string(firstCall(steps[1]).ThoughtSignature) != "sig-gemini" || firstCall(steps[1]).FunctionCall.ID != "fc_2" {
		t.Errorf("the turn's steps went as\n%s", body)
	}

	must(t, c.AddMessages(receive(t, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny, then rain."}]},"finishReason":"STOP"}]}`),
		msg(nous.UserMessage("And Oslo?"))))
	body = send(t, c)
	steps, current = modelSteps(t, body)
	if current[0] || len(firstCall(steps[0]).ThoughtSignature) != 0 || string(firstCall(steps[1]).ThoughtSignature) != "sig-gemini" {
		t.Errorf("the earlier turn's calls did not go as they are:\n%s", body)
	}
}

// Parallel calls another provider made (OpenAI's, two in one step): only
// the step's first call gets the signature, as Gemini's own parallel calls
// carry one on the first alone.
func TestForeignParallelCalls(t *testing.T) {
	c := nous.NewContext()
	openai := msg(nous.AssistantMessage("",
		nous.ToolCall{ID: "call_a", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		nous.ToolCall{ID: "call_b", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}))
	openai.Metadata = map[string]any{"finish_reason": "tool_calls", "model": "gpt-test"}
	must(t, c.AddMessages(msg(nous.UserMessage("Paris and Rome?")), openai,
		msg(nous.ToolMessage("call_b", "weather", "rain")), msg(nous.ToolMessage("call_a", "weather", "sun"))))
	body, p := sendParams(t, c)
	if problem := checkRequest(p, c.Messages()); problem != "" {
		t.Fatalf("%s\n%s", problem, body)
	}
	parts := decodeBody(t, body).Contents[1].Parts
	if !bytes.Equal(parts[0].ThoughtSignature, skip) || len(parts[1].ThoughtSignature) != 0 || parts[0].FunctionCall.ID != "" {
		t.Errorf("the parallel calls went as\n%s", body)
	}
}

// A step of an older Gemini, which signed the step's first part (its text)
// and not its call: in the current turn the call gets the documented
// signature, and the text keeps Gemini's.
func TestCallAfterSignedText(t *testing.T) {
	m := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Checking.","thoughtSignature":"c2lnLXRleHQ="},
	{"functionCall":{"name":"weather","args":{"city":"Paris"}}}]},"finishReason":"STOP"}],"modelVersion":"gemini-2.5-test"}`)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Paris?")), m, msg(nous.ToolMessage(m.ToolCalls[0].ID, "weather", "sun"))))
	parts := decodeBody(t, send(t, c)).Contents[1].Parts
	if string(parts[0].ThoughtSignature) != "sig-text" || !bytes.Equal(parts[1].ThoughtSignature, skip) {
		t.Errorf("parts %+v %+v", parts[0], parts[1])
	}
}
