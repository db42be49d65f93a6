package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A custom tool call, then a message item: the items go back in the
// response's order, as a function call and a message do.
func TestCustomCallOrderKept(t *testing.T) {
	for name, output := range map[string]string{
		"call, message": `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"run_sql","input":"SELECT 1","status":"completed"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Running it.","annotations":[]}]}`,
		"reasoning, call, message": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"run_sql","input":"SELECT 1","status":"completed"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Running it.","annotations":[]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := nousopenai.ResponseMessage(responseOf(t, output))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "run_sql", "1"))))
			var came struct {
				Output []map[string]any `json:"output"`
			}
			must(t, json.Unmarshal([]byte("{\"output\":["+output+"]}"), &came))
			var want []string
			for _, o := range came.Output {
				want = append(want, fmt.Sprint(o["type"], ":", o["id"]))
			}
			got := itemIDs(t, sendResponses(t, c))
			if g, w := strings.Join(got[1:1+len(want)], " "), strings.Join(want, " "); g != w {
				t.Errorf("items went back as %s, came as %s", g, w)
			}
		})
	}
}

// The result of a custom tool call with an image goes as a list of content
// (input_text, input_image), as a function call's does.
func TestCustomCallResultImage(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"screenshot","input":"https://example.com","status":"completed"}`))
	result := msg(nous.ToolMessage("call_1", "screenshot", "the page:"))
	result.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Look at example.com.")), m, result))
	body := sendResponses(t, c)
	if !strings.Contains(string(body), "iVBORw0KGgo") {
		items := inputItems(t, body)
		out, _ := json.Marshal(items[len(items)-1])
		t.Errorf("the result's image is not in the request: %s", out)
	}
}

// A custom tool's result whose text has a line break as a part of its own
// ("a" "\n" "b") keeps it, as a function call's output does.
func TestCustomCallResultWhitespace(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"shell","input":"ls","status":"completed"}`))
	result := msg(nous.ToolMessage("call_1", "shell", "a.txt"))
	result.Parts = []nous.ContentPart{nous.TextPart("\n"), nous.TextPart("b.txt")}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("ls")), m, result))
	items := inputItems(t, sendResponses(t, c))
	if out := items[len(items)-1]["output"]; out != "a.txt\nb.txt" {
		t.Errorf("the custom call's output went as %q, the result is %q", out, "a.txt\nb.txt")
	}
}

// A custom tool call from Responses given to Chat, which has custom tool
// calls ({"type":"custom","custom":{"name","input"}}), goes as one.
func TestChatCustomCall(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"run_sql","input":"SELECT 1","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "run_sql", "1"))))
	var got struct {
		Messages []struct {
			ToolCalls []map[string]any `json:"tool_calls"`
		} `json:"messages"`
	}
	body := sendChat(t, c)
	must(t, json.Unmarshal(body, &got))
	for _, mm := range got.Messages {
		for _, tc := range mm.ToolCalls {
			if tc["type"] != "custom" {
				b, _ := json.Marshal(tc)
				t.Errorf("the custom call went to Chat as %s", b)
			}
		}
	}
}

// A custom tool call of a namespaced tool, made by a program (programmatic
// tool calling): its namespace and caller go back with it.
func TestCustomCallNamespaceAndCallerKept(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","namespace":"db","name":"run_sql","input":"SELECT 1","caller":{"type":"program","caller_id":"prog_1"},"status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "run_sql", "1"))))
	for _, it := range inputItems(t, sendResponses(t, c)) {
		if it["type"] == "custom_tool_call" && (it["namespace"] != "db" || it["caller"] == nil) {
			b, _ := json.Marshal(it)
			t.Errorf("the call went back as %s: namespace and caller lost", b)
		}
	}
}

// A function call of a namespaced tool, made by a program: its namespace
// and caller go back with it, as a custom call's do.
func TestFunctionCallNamespaceAndCallerKept(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"function_call","id":"fc_1","call_id":"call_1","namespace":"db","name":"query","arguments":"{}","caller":{"type":"program","caller_id":"prog_1"},"status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "query", "1"))))
	found := false
	for _, it := range inputItems(t, sendResponses(t, c)) {
		if it["type"] == "function_call" {
			found = true
			if it["namespace"] != "db" || it["caller"] == nil {
				b, _ := json.Marshal(it)
				t.Errorf("the call went back as %s: namespace and caller lost", b)
			}
		}
	}
	if !found {
		t.Fatal("no function call sent")
	}
}
