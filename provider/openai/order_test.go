package openai_test

import (
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A recorded order that names a key twice (edited by a runtime, or made of
// a response that gave two items one ID) puts the item where the order
// first names it.
func TestOrderFirstPlaceOfAKeyCounts(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
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
