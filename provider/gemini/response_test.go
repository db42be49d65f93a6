package gemini_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
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

// A nil response, or one without a candidate, is an error wrapping
// ErrNoCandidate, with the usage billed: none for no response, the
// response's for a blocked prompt, whose reason the error gives.
func TestNoCandidate(t *testing.T) {
	if _, u, err := nousgemini.Message(nil); !errors.Is(err, nousgemini.ErrNoCandidate) || u != (nous.Usage{}) {
		t.Errorf("a nil response: %v, usage %+v", err, u)
	}
	resp := decodeResp(t, `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":50,"totalTokenCount":50}}`)
	_, u, err := nousgemini.Message(resp)
	if !errors.Is(err, nousgemini.ErrNoCandidate) || !strings.Contains(err.Error(), "SAFETY") || u.InputTokens != 50 || u.Requests != 1 {
		t.Errorf("a blocked prompt: %v, usage %+v", err, u)
	}
}

// The Metadata and Options keys of the shape Message records are stored in
// logs: their values never change.
func TestRecordedKeys(t *testing.T) {
	for got, want := range map[string]string{
		nousgemini.MetadataCallID:         "gemini_call_id",
		nousgemini.MetadataPartOrder:      "gemini_part_order",
		nousgemini.MetadataParts:          "gemini_parts",
		nousgemini.Provider:               "gemini",
		nousgemini.SkipSignatureValidator: "skip_thought_signature_validator",
	} {
		if got != want {
			t.Errorf("%q, stored as %q", got, want)
		}
	}
	m := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"t","thought":true,"thoughtSignature":"c2ln"},
	{"executableCode":{"language":"PYTHON","code":"print(1)"}},
	{"functionCall":{"id":"fc_1","name":"f"},"thoughtSignature":"c2lnMg=="}]}}]}`)
	tc := m.ToolCalls[0]
	if m.Parts[0].Options[nous.OptionThoughtSignature] != "c2ln" || m.Parts[0].Options[nous.OptionProvider] != nousgemini.Provider ||
		tc.Metadata[nous.OptionThoughtSignature] != "c2lnMg==" || tc.Metadata[nousgemini.MetadataCallID] != "fc_1" ||
		m.Metadata[nousgemini.MetadataParts] == nil || m.Metadata[nousgemini.MetadataPartOrder] == nil {
		t.Errorf("message %+v", m)
	}
}
