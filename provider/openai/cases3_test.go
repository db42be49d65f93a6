package openai_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// Reasoning, a hosted tool's call (web search), then the image of an image
// generation call: the reasoning cannot go back, and the image item, which
// cannot go without its ID, is not sent (it stays in the message).
func TestImageAfterHostedReasoningNotSent(t *testing.T) {
	for name, output := range map[string]string{
		"image": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"cat photos"}},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`,
		"message and image": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"cat photos"}},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here is a cat.","annotations":[]}]},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := nousopenai.ResponseMessage(responseOf(t, output))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("Find a cat and draw it.")), m, msg(nous.UserMessage("Make it orange."))))
			got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
			if strings.Contains(got, ":ig_1") && !strings.Contains(got, "reasoning:rs_1") {
				t.Errorf("items %s: ig_1 goes with its item ID without the reasoning item rs_1 it came after", got)
			}
		})
	}
}

// A Responses custom_tool_call (a custom tool: freeform input, run by the
// client) is a tool call of the message, its arguments {"input": text}, and
// goes back as a custom_tool_call, its result as a custom_tool_call_output;
// a computer call, which a message cannot hold, is kept in its Metadata.
func TestResponsesCustomToolCall(t *testing.T) {
	m, u := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"run_sql","input":"SELECT count(*) FROM users","status":"completed"}`))
	if len(m.ToolCalls) == 0 {
		t.Errorf("the custom tool call call_1 was dropped: message %+v, usage ToolCalls %d", m, u.ToolCalls)
	}
	if len(m.ToolCalls) != 1 || u.ToolCalls != 1 || string(m.ToolCalls[0].Arguments) != `{"input":"SELECT count(*) FROM users"}` {
		t.Fatalf("tool calls %+v", m.ToolCalls)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("How many users?")), m, msg(nous.ToolMessage("call_1", "run_sql", "42"))))
	c = adapttest.RoundTrip(t, c)
	var got []string
	for _, it := range inputItems(t, sendResponses(t, c)) {
		got = append(got, fmt.Sprintf("%v:%v/%v", it["type"], it["input"], it["output"]))
	}
	if want := "<nil>:<nil>/<nil> reasoning:<nil>/<nil> custom_tool_call:SELECT count(*) FROM users/<nil> custom_tool_call_output:<nil>/42"; strings.Join(got, " ") != want {
		t.Errorf("items %q, want %q", strings.Join(got, " "), want)
	}
	m, _ = nousopenai.ResponseMessage(responseOf(t, `
	{"type":"computer_call","id":"cu_1","call_id":"call_2","action":{"type":"screenshot"},"pending_safety_checks":[],"status":"completed"}`))
	if kept, _ := m.Metadata["openai_client_items"].([]any); len(kept) != 1 || !strings.Contains(kept[0].(string), "cu_1") {
		t.Errorf("the computer call is not kept: %+v", m.Metadata)
	}
}
