package anthropic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// orphans returns, for each *_tool_result block of a request body whose
// tool_use_id names no server_tool_use block before it, "messages.k:type:id".
func orphans(t *testing.T, body []byte) []string {
	t.Helper()
	uses := map[string]bool{}
	var out []string
	for k, m := range sentOf(t, body).Messages {
		for _, b := range m.Content {
			typ, _ := b["type"].(string)
			switch {
			case typ == "server_tool_use":
				uses[b["id"].(string)] = true
			case typ != "tool_result" && strings.HasSuffix(typ, "_tool_result"):
				if id, _ := b["tool_use_id"].(string); !uses[id] {
					out = append(out, fmt.Sprintf("messages.%d:%s:%s", k, typ, id))
				}
			}
		}
	}
	return out
}

// A turn the API paused ends with a server_tool_use block that has no
// result yet, which the API takes only in the last message: when the
// conversation goes on without that turn's rest (a user writes next), the
// block is not sent.
func TestPausedServerToolUseOnlyLast(t *testing.T) {
	m, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_p","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"text","text":"Let me search."},
	{"type":"server_tool_use","id":"srvtoolu_p","name":"web_search","input":{"query":"q"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Look it up.")), m, msg(nous.UserMessage("Never mind, just answer."))))
	s := sentOf(t, send(t, c))
	results := map[string]bool{}
	for _, m := range s.Messages {
		for _, b := range m.Content {
			if strings.HasSuffix(b["type"].(string), "_tool_result") {
				results[b["tool_use_id"].(string)] = true
			}
		}
	}
	for k, m := range s.Messages[:len(s.Messages)-1] {
		for _, b := range m.Content {
			if b["type"] == "server_tool_use" && !results[b["id"].(string)] {
				t.Errorf("messages.%d: server_tool_use %s sent without its result, not in the last message (the API refuses it): %v",
					k, b["id"], types(m.Content))
			}
		}
	}
}

// A server tool newer than this SDK's types (the advisor tool: its result
// block is sent back as its JSON): its server_tool_use is answered by that
// result, and both go back.
func TestNewerResultTypeKeepsItsServerToolUse(t *testing.T) {
	m, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"server_tool_use","id":"srvtoolu_adv","name":"advisor","input":{}},
	{"type":"advisor_tool_result","tool_use_id":"srvtoolu_adv","content":{"type":"advisor_result","text":"Check the edge cases."}},
	{"type":"text","text":"Done, with the edge cases checked."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Review this.")), m, msg(nous.UserMessage("Thanks."))))
	body := send(t, c)
	if o := orphans(t, body); len(o) > 0 {
		t.Errorf("result blocks without their server_tool_use (the API refuses them): %v\n%s", o, body)
	}
}
