package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

func responseOf(t *testing.T, output string) *responses.Response {
	t.Helper()
	var resp responses.Response
	must(t, json.Unmarshal([]byte(`{"id":"resp_x","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[`+output+`],
	"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`), &resp))
	return &resp
}

// Two reasoning items in a row before a call: the first has no
// "followed_by" (its next item is a reasoning item) and is dropped on the
// way back, encrypted content and all; its follower is still there.
func TestConsecutiveReasoningDropped(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
	sent := sendResponses(t, c)
	if !bytes.Contains(sent, []byte("rs_1")) || !bytes.Contains(sent, []byte("gAAAA1")) {
		t.Errorf("reasoning item rs_1 was lost on the round trip: %s", sent)
	}
}

// A reasoning item's summary of two parts comes back as one part joined
// with "\n\n": not "the same items".
func TestReasoningSummaryMerged(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"A"},{"type":"summary_text","text":"B"}],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	var got struct {
		Input []map[string]any `json:"input"`
	}
	must(t, json.Unmarshal(sendResponses(t, c), &got))
	if s := got.Input[1]["summary"].([]any); len(s) != 2 {
		t.Errorf("summary went back as %v, came as 2 parts", s)
	}
}

// Two message items in one response come back as one item with the
// second's ID and the texts glued together ("a"+"b" = "ab"); msg_1 is lost.
func TestTwoMessageItemsMerged(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"First.","annotations":[]}]},
	{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Second.","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if !bytes.Contains(sent, []byte("msg_1")) {
		t.Errorf("message item msg_1 lost / merged: %s", sent)
	}
}

// A Responses refusal is silently lost (Chat keeps it as Content with
// Metadata["refusal"]): the message is empty and is not sent back.
func TestResponsesRefusalLost(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]}`))
	if m.Text() == "" && m.Metadata["refusal"] != true {
		t.Errorf("the refusal was dropped: %+v", m)
	}
}

// A Chat custom tool call is dropped silently by ChatMessage: the model's
// call disappears and the usage counts no tool call.
func TestChatCustomToolCallDropped(t *testing.T) {
	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_1","type":"custom","custom":{"name":"grammar","input":"x"}}]}}],
	"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), &resp))
	m, u, err := nousopenai.ChatMessage(&resp)
	if err == nil && len(m.ToolCalls) == 0 {
		t.Errorf("a custom tool call was dropped without an error: %+v, usage %+v", m, u)
	}
}

// Spec: images map to provider parts or a typed error. A system message's
// image is silently dropped by both FillChat and FillResponses.
func TestSystemImageDropped(t *testing.T) {
	c := nous.NewContext()
	sys := msg(nous.SystemMessage("Use this logo."))
	sys.Parts = []nous.ContentPart{nous.ImageURLPart("https://example.com/logo.png")}
	must(t, c.AddMessages(sys, msg(nous.UserMessage("q"))))
	for name, fill := range map[string]func() error{
		"chat":      func() error { p := openai.ChatCompletionNewParams{}; return nousopenai.FillChat(&p, c) },
		"responses": func() error { p := responses.ResponseNewParams{}; return nousopenai.FillResponses(&p, c) },
	} {
		if fill() == nil {
			var body []byte
			if name == "chat" {
				body = sendChat(t, c)
			} else {
				body = sendResponses(t, c)
			}
			if !strings.Contains(string(body), "logo.png") {
				t.Errorf("%s: the system message's image was dropped without an error: %s", name, body)
			}
		}
	}
}

func TestNilResponses(t *testing.T) {
	for name, f := range map[string]func(){
		"ChatMessage(nil)":     func() { nousopenai.ChatMessage(nil) },
		"ResponseMessage(nil)": func() { nousopenai.ResponseMessage(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panicked: %v", r)
				}
			}()
			f()
		})
	}
}
