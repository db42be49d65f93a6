package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// A recorded order that names a key twice (edited by a runtime, or made of
// a response that gave two items one ID) puts the item where the order
// first names it.
func TestOrderFirstPlaceOfAKeyCounts(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Calling f.","annotations":[]}]}`))
	m.Metadata["openai_item_order"] = []any{"call_1", "msg_1", "call_1"}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
	got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
	if want := "<nil>:<nil> function_call:fc_1 message:msg_1 function_call_output:<nil>"; got != want {
		t.Errorf("items %s, want %s (call_1 where the order first names it)", got, want)
	}
}

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
			m, _ := read(t, responseOf(t, output))
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
