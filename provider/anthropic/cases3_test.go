package anthropic_test

import (
	"fmt"
	"slices"
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

// Programmatic tool calling (code execution calling a client tool): the
// code's server_tool_use, whose result comes in the next assistant turn,
// after the tool_result, is sent with the turn that answers the client
// tool, and with every later request.
func TestProgrammaticToolCallKeepsServerToolUse(t *testing.T) {
	calling, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"text","text":"I'll query the database from code."},
	{"type":"server_tool_use","id":"srvtoolu_abc","name":"code_execution","input":{"code":"r = await query_database(sql='select 1')\nprint(r)"}},
	{"type":"tool_use","id":"toolu_def","name":"query_database","input":{"sql":"select 1"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_abc"}}],
	"container":{"id":"container_xyz","expires_at":"2026-11-30T13:00:00Z"},
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	done, _ := nousanthropic.Message(decode(t, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_abc","content":{"type":"code_execution_result","stdout":"1\n","stderr":"","return_code":0,"content":[]}},
	{"type":"text","text":"The query returned 1."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("How many rows?")), calling, msg(nous.ToolMessage("toolu_def", "query_database", "[[1]]"))))
	if body := send(t, c); !slices.ContainsFunc(sentOf(t, body).Messages[1].Content, func(b map[string]any) bool {
		return b["type"] == "server_tool_use" && b["id"] == "srvtoolu_abc"
	}) {
		t.Errorf("answering the code's tool call: the code's server_tool_use srvtoolu_abc was not sent: %s", body)
	}
	must(t, c.AddMessages(done, msg(nous.UserMessage("Thanks."))))
	if o := orphans(t, send(t, c)); len(o) > 0 {
		t.Errorf("result blocks without their server_tool_use (the API refuses them): %v", o)
	}
}

// A tool_use's caller (the code execution that made the call) goes back
// with it.
func TestToolUseCallerKept(t *testing.T) {
	m, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"server_tool_use","id":"srvtoolu_abc","name":"code_execution","input":{"code":"await query_database(sql='select 1')"}},
	{"type":"tool_use","id":"toolu_def","name":"query_database","input":{"sql":"select 1"},"toolset_name":"db","caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_abc"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("toolu_def", "query_database", "[[1]]"))))
	for _, mm := range sentOf(t, send(t, c)).Messages {
		for _, b := range mm.Content {
			if b["type"] == "tool_use" && (b["caller"] == nil || b["toolset_name"] != "db") {
				t.Errorf("tool_use %s went back without its caller or toolset: %v", b["id"], b)
			}
		}
	}
}

// A server tool newer than this SDK's types (the advisor tool: its result
// block is sent back as its JSON): its server_tool_use is answered by that
// result, and both go back.
func TestNewerResultTypeKeepsItsServerToolUse(t *testing.T) {
	m, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
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
