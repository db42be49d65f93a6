package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// A message item's refusal and its several output_text parts go back as
// they came, not as one output_text.
func TestResponsesRefusalAndPartsRoundTrip(t *testing.T) {
	const output = `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]},
	{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[
		{"type":"output_text","text":"Part one.","annotations":[]},{"type":"output_text","text":"Part two.","annotations":[]}]}`
	m, _ := read(t, responseOf(t, output))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	items := inputItems(t, sendResponses(t, c))
	var came struct {
		Output []map[string]any `json:"output"`
	}
	must(t, json.Unmarshal([]byte("{\"output\":["+output+"]}"), &came))
	for k, o := range came.Output {
		sent := items[1+k]
		a, _ := json.Marshal(o["content"])
		b, _ := json.Marshal(sent["content"])
		// compare the content parts' types and texts, annotations aside
		if partsOf(t, a) != partsOf(t, b) {
			t.Errorf("item %s came with content %s, went back with %s", o["id"], partsOf(t, a), partsOf(t, b))
		}
	}
}

func partsOf(t *testing.T, raw []byte) string {
	t.Helper()
	var parts []map[string]any
	must(t, json.Unmarshal(raw, &parts))
	var out []string
	for _, p := range parts {
		text, _ := p["text"].(string)
		if r, ok := p["refusal"].(string); ok {
			text = r
		}
		out = append(out, p["type"].(string)+":"+text)
	}
	return strings.Join(out, " | ")
}

// A Responses refusal is kept, as Chat's is: as the message's text, or in
// Metadata["refusal"].
func TestResponsesRefusalKept(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]}`))
	if m.Text() == "" && m.Metadata["refusal"] != true {
		t.Errorf("the refusal was dropped: %+v", m)
	}
}

// A message item whose text is blank is not sent, with reasoning before it
// or without.
func TestResponsesBlankMessageItemNotSent(t *testing.T) {
	for name, output := range map[string]string{
		"without reasoning": `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"\n\n","annotations":[]}]},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`,
		"with reasoning": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"\n\n","annotations":[]}]},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := read(t, responseOf(t, output))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
			for _, it := range inputItems(t, sendResponses(t, c)) {
				parts, _ := it["content"].([]any)
				for _, p := range parts {
					if text, _ := p.(map[string]any)["text"].(string); strings.TrimSpace(text) == "" {
						t.Errorf("a blank text was sent: %v", it)
					}
				}
			}
		})
	}
}

// Two message items in one response go back as two, msg_1 among them, not
// as one item with the second's ID and the texts glued together.
func TestTwoMessageItemsKeepTheirIDs(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"First.","annotations":[]}]},
	{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Second.","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if !bytes.Contains(sent, []byte("msg_1")) {
		t.Errorf("message item msg_1 lost / merged: %s", sent)
	}
}

// A message item's output_text keeps its annotations (the url_citation of
// a web search) while its text is unchanged.
func TestAnnotationsRoundTrip(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Shannon was born in 1916.",
	"annotations":[{"type":"url_citation","start_index":0,"end_index":25,"url":"https://en.wikipedia.org/wiki/Claude_Shannon","title":"Claude Shannon"}]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	items := inputItems(t, sendResponses(t, c))
	parts, _ := items[1]["content"].([]any)
	if len(parts) != 1 {
		t.Fatalf("sent %v", items[1])
	}
	if a, _ := parts[0].(map[string]any)["annotations"].([]any); len(a) != 1 {
		t.Errorf("the url_citation was lost: sent %v", parts[0])
	}
}

// A message item whose text a runtime changed goes back as its new text,
// without the annotations of the old one.
func TestAnnotationsDroppedWithEditedText(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Shannon was born in 1916.","annotations":[{"type":"url_citation","url":"https://example.com","title":"t","start_index":0,"end_index":7}]}]}`))
	m.Content = "Shannon was born in Michigan."
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte("url_citation")) || !bytes.Contains(sent, []byte("Michigan")) {
		t.Errorf("sent %s", sent)
	}
}
