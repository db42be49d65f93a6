package gemini_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// Gemini (2.5/3 with thinking) ends a text answer with an empty text part
// that carries the thought signature: Message keeps the part, and Contents
// sends it back with its signature, blank as its text is.
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

// No empty or whitespace-only text part is sent: a Gemini thought part with
// blank text and no signature is not sent (as a part with thought:true and
// no data).
func TestBlankThoughtPartNotSent(t *testing.T) {
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
