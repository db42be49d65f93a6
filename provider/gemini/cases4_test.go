package gemini_test

import (
	"testing"

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
