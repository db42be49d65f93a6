package gemini_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// Text parts of one answer, the middle one whitespace ("\n\n" between two
// paragraphs, as a streamed answer's parts gathered into one response
// come): the message's text keeps the line breaks.
func TestWhitespaceTextPartKept(t *testing.T) {
	m, _, err := nousgemini.Message(decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"First paragraph."},{"text":"\n\n"},{"text":"Second paragraph."}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`))
	must(t, err)
	if got, want := m.Text(), "First paragraph.\n\nSecond paragraph."; got != want {
		t.Errorf("text %q, the response's %q", got, want)
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

// Odd responses (nil, a nil candidate, a nil part) give a message or an
// error, not a panic.
func TestMessageOfOddResponses(t *testing.T) {
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

// A blocked prompt is billed (usageMetadata present): Message returns its
// usage, one request and the prompt tokens, with the error.
func TestBlockedPromptUsageKept(t *testing.T) {
	var resp genai.GenerateContentResponse
	must(t, json.Unmarshal([]byte(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":50,"totalTokenCount":50}}`), &resp))
	_, u, err := nousgemini.Message(&resp)
	if err != nil && u.Requests != 1 {
		t.Errorf("usage of a blocked response lost: %+v (%v)", u, err)
	}
}
