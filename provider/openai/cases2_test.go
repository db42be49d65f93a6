package openai_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// itemIDs returns "type:id" of each input item of a Responses body.
func itemIDs(t *testing.T, body []byte) []string {
	var out []string
	for _, it := range inputItems(t, body) {
		out = append(out, fmt.Sprint(it["type"], ":", it["id"]))
	}
	return out
}

// Reasoning, a hosted tool's call (web search), then a function call: the
// reasoning cannot go back without the hosted call, so the function call
// goes without its item ID (the API refuses an item with its ID without its
// reasoning item).
func TestCallAfterHostedCallWithoutID(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
	got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
	if strings.Contains(got, "function_call:fc_1") && !strings.Contains(got, "reasoning:rs_1") {
		t.Errorf("items %s: fc_1 goes with its item ID without the reasoning item rs_1 it came after", got)
	}
}

// Reasoning, then a message, then an image generation call: the items go
// back in the response's order, the reasoning directly before the message.
func TestReasoningBeforeItsFirstFollower(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here it is.","annotations":[]}]},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), m, msg(nous.UserMessage("Orange."))))
	got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
	if want := "<nil>:<nil> reasoning:rs_1 message:msg_1 image_generation_call:ig_1 <nil>:<nil>"; got != want {
		t.Errorf("items %s, want %s (the response's order)", got, want)
	}
}

// A message item's output_text keeps its annotations (the url_citation of
// a web search) while its text is unchanged.
func TestAnnotationsRoundTrip(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
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
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Shannon was born in 1916.","annotations":[{"type":"url_citation","url":"https://example.com","title":"t","start_index":0,"end_index":7}]}]}`))
	m.Content = "Shannon was born in Michigan."
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte("url_citation")) || !bytes.Contains(sent, []byte("Michigan")) {
		t.Errorf("sent %s", sent)
	}
}
