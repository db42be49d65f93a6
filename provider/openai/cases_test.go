package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// inputItems returns the input items of a Responses request body.
func inputItems(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var got struct {
		Input []map[string]any `json:"input"`
	}
	must(t, json.Unmarshal(body, &got))
	return got.Input
}

// A Responses tool result with a file sends it as an input_file of its
// function_call_output (only a Chat tool result is text only).
func TestResponsesToolResultFile(t *testing.T) {
	pdf := nous.ContentPart{Type: nous.PartFile, Content: "JVBERi0=", Options: map[string]any{"media_type": "application/pdf", "filename": "report.pdf"}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Fetch the report.")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_1", Name: "fetch", Arguments: json.RawMessage(`{}`)})),
		msg(nous.Message{Role: nous.RoleTool, ToolCallID: "call_1", Name: "fetch", Content: "here it is", Parts: []nous.ContentPart{pdf}})))
	var params responses.ResponseNewParams
	if err := nousopenai.FillResponses(&params, c); err != nil {
		t.Fatalf("FillResponses: %v", err)
	}
	if body := sendResponses(t, c); !bytes.Contains(body, []byte(`"input_file"`)) {
		t.Errorf("the file was not sent as input_file: %s", body)
	}
}

// A message item's refusal and its several output_text parts go back as
// they came, not as one output_text.
func TestResponsesRefusalAndPartsRoundTrip(t *testing.T) {
	const output = `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]},
	{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[
		{"type":"output_text","text":"Part one.","annotations":[]},{"type":"output_text","text":"Part two.","annotations":[]}]}`
	m, _ := nousopenai.ResponseMessage(responseOf(t, output))
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
			m, _ := nousopenai.ResponseMessage(responseOf(t, output))
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

// Parallel calls after one reasoning item, [rs_1, fc_1, fc_2], the first
// removed: fc_2 goes with its ID, so rs_1 goes with it (the API refuses an
// item with its ID without the reasoning item it came after).
func TestRemovedCallKeepsReasoning(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{\"n\":2}","status":"completed"}`))
	m.ToolCalls = m.ToolCalls[1:] // the user removed call_1
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_2", "f", "2"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte(`"id":"fc_2"`)) && !bytes.Contains(sent, []byte(`"rs_1"`)) {
		t.Errorf("fc_2 went with its item ID but without the reasoning item rs_1 it came after: %s", sent)
	}
}

// A whitespace-only SystemPrompt (say, read from an empty config line) is
// not sent.
func TestBlankSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("\n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	chat := sendChat(t, c)
	if bytes.Contains(chat, []byte(`"role":"system"`)) {
		t.Errorf("Chat: a blank system message was sent: %s", chat)
	}
	resp := sendResponses(t, c)
	if bytes.Contains(resp, []byte(`"role":"system"`)) {
		t.Errorf("Responses: a blank system message was sent: %s", resp)
	}
}

// A leading system message that holds the system prompt as a text part
// (Parts, no Content) has it: the prompt goes once.
func TestPromptInViewAsPart(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	sys := msg(nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{nous.TextPart("You are terse.")}})
	must(t, c.AddMessages(sys, msg(nous.UserMessage("q"))))
	if body := sendChat(t, c); bytes.Count(body, []byte("You are terse.")) != 1 {
		t.Errorf("the system prompt was sent twice: %s", body)
	}
}

// A Chat response without a choice is an error, with its usage, which is
// billed all the same.
func TestChatNoChoiceUsage(t *testing.T) {
	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[],
	"usage":{"prompt_tokens":50,"completion_tokens":0,"total_tokens":50}}`), &resp))
	_, u, err := nousopenai.ChatMessage(&resp)
	if !errors.Is(err, nousopenai.ErrNoChoice) || u.Requests != 1 || u.InputTokens != 50 {
		t.Errorf("usage of a response without a choice lost: %+v (%v)", u, err)
	}
}

// Reasoning before an item a message does not keep (a hosted tool's call)
// cannot go back, and the message item after the hosted call goes without
// its ID: the API refuses an item with its ID without its reasoning.
func TestReasoningBeforeHostedCallDropped(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Found it.","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte("rs_1")) || bytes.Contains(sent, []byte("msg_1")) || !bytes.Contains(sent, []byte("Found it.")) {
		t.Errorf("sent %s", sent)
	}
}

// Parallel calls after one reasoning item: when the first call is removed,
// the reasoning goes directly before the second, and the items keep the
// response's order.
func TestReasoningBeforeNextCallLeft(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{}","status":"completed"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Both.","annotations":[]}]}`))
	m.ToolCalls = m.ToolCalls[1:]
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_2", "f", "2"))))
	var ids []string
	for _, it := range inputItems(t, sendResponses(t, c)) {
		ids = append(ids, fmt.Sprint(it["id"]))
	}
	if got, want := strings.Join(ids, " "), "<nil> rs_1 fc_2 rs_2 msg_1 <nil>"; got != want {
		t.Errorf("items %s, want %s", got, want)
	}
}
