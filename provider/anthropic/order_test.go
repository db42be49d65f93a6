package anthropic_test

import (
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A response with a server tool in the middle (web search) has thinking,
// text, server blocks, thinking, text: the blocks go back in their order,
// the server tool's among them.
func TestInterleavedBlocksKeepOrder(t *testing.T) {
	resp := decode(t, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"thinking","thinking":"Search first.","signature":"sigA"},
	{"type":"text","text":"Let me search."},
	{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
	{"type":"thinking","thinking":"Now answer.","signature":"sigB"},
	{"type":"text","text":"Answer."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`)
	m, _, _ := nousanthropic.Message(resp)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	got := types(sentOf(t, send(t, c)).Messages[1].Content)
	want := []string{"thinking", "text", "server_tool_use", "web_search_tool_result", "thinking", "text"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("assistant blocks went back as %v, came as %v", got, want)
	}
}

// A blank text block keeps its place in the order Message recorded: the
// answer, which cites the search, goes back after the search.
func TestBlankTextKeepsOrder(t *testing.T) {
	const response = `{"id":"msg_b","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"text","text":"\n\n"},
	{"type":"server_tool_use","id":"srvtoolu_b","name":"web_search","input":{"query":"q"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_b","content":[{"type":"web_search_result","url":"https://example.com","title":"E","encrypted_content":"EqA","page_age":null}]},
	{"type":"text","text":"The answer.","citations":[{"type":"web_search_result_location","url":"https://example.com","title":"E","encrypted_index":"Eo8","cited_text":"c"}]}],
	"usage":{"input_tokens":1,"output_tokens":1}}`
	m, _, _ := nousanthropic.Message(decode(t, response))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	got := strings.Join(types(sentOf(t, send(t, c)).Messages[1].Content), ",")
	if want := "server_tool_use,web_search_tool_result,text"; got != want {
		t.Errorf("the turn went back as %s; it came as text(blank),%s", got, want)
	}
}
