package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
)

// A Responses custom_tool_call (a custom tool: freeform input, run by the
// client) is a tool call of the message, its arguments {"input": text}, and
// goes back as a custom_tool_call, its result as a custom_tool_call_output;
// a computer call, which a message cannot hold, is kept in its Metadata.
func TestResponsesCustomToolCall(t *testing.T) {
	m, u := read(t, responseOf(t, `
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
	m, _ = read(t, responseOf(t, `
	{"type":"computer_call","id":"cu_1","call_id":"call_2","action":{"type":"screenshot"},"pending_safety_checks":[],"status":"completed"}`))
	if kept, _ := m.Metadata["openai_client_items"].([]any); len(kept) != 1 || !strings.Contains(kept[0].(string), "cu_1") {
		t.Errorf("the computer call is not kept: %+v", m.Metadata)
	}
}

// A custom tool call of a namespaced tool, made by a program (programmatic
// tool calling): its namespace and caller go back with it.
func TestCustomCallNamespaceAndCallerKept(t *testing.T) {
	m, _ := read(t, responseOf(t, `
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
	m, _ := read(t, responseOf(t, `
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
