package anthropic_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// Programmatic tool calling (code execution calling a client tool): the
// code's server_tool_use, whose result comes in the next assistant turn,
// after the tool_result, is sent with the turn that answers the client
// tool, and with every later request.
func TestProgrammaticToolCallKeepsServerToolUse(t *testing.T) {
	calling, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"text","text":"I'll query the database from code."},
	{"type":"server_tool_use","id":"srvtoolu_abc","name":"code_execution","input":{"code":"r = await query_database(sql='select 1')\nprint(r)"}},
	{"type":"tool_use","id":"toolu_def","name":"query_database","input":{"sql":"select 1"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_abc"}}],
	"container":{"id":"container_xyz","expires_at":"2026-11-30T13:00:00Z"},
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	done, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
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
	m, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
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

// callerOrphans returns, for each block of a request body whose caller
// names a code execution (caller.tool_id) that no server_tool_use block of
// the request has, "messages.k:type:id->tool_id".
func callerOrphans(t *testing.T, body []byte) []string {
	t.Helper()
	uses := map[string]bool{}
	s := sentOf(t, body)
	for _, m := range s.Messages {
		for _, b := range m.Content {
			if b["type"] == "server_tool_use" {
				uses[b["id"].(string)] = true
			}
		}
	}
	var out []string
	for k, m := range s.Messages {
		for _, b := range m.Content {
			caller, _ := b["caller"].(map[string]any)
			if id, _ := caller["tool_id"].(string); id != "" && !uses[id] {
				out = append(out, fmt.Sprintf("messages.%d:%v:%v->%s", k, b["type"], b["id"], id))
			}
		}
	}
	return out
}

// Code execution calling a server tool (web search) from its code: the
// web search's blocks name the code execution as their caller, which keeps
// the code's server_tool_use in the request, also when the turn paused in
// the code and the user wrote next.
func TestServerToolCallerKeepsCodeExecution(t *testing.T) {
	m, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"server_tool_use","id":"srvtoolu_code","name":"code_execution","input":{"code":"r = await web_search(query='go 1.25')"}},
	{"type":"server_tool_use","id":"srvtoolu_ws","name":"web_search","input":{"query":"go 1.25"},"caller":{"type":"code_execution_20260120","tool_id":"srvtoolu_code"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_ws","content":[],"caller":{"type":"code_execution_20260120","tool_id":"srvtoolu_code"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("What is new in Go 1.25?")), m, msg(nous.UserMessage("Just a summary, please."))))
	body := send(t, c)
	if o := callerOrphans(t, body); len(o) > 0 {
		t.Errorf("blocks whose caller names a server_tool_use not in the request (the API refuses them): %v\n%s", o, body)
	}
}

// A tool call code execution made (programmatic tool calling) is answered
// while the code waits, by a user message of tool_result blocks only: user
// text that would join it is refused before anything is sent.
func TestProgrammaticResultMessageOnlyResults(t *testing.T) {
	m, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"server_tool_use","id":"srvtoolu_abc","name":"code_execution","input":{"code":"r = await query_database(sql='select 1')"}},
	{"type":"tool_use","id":"toolu_def","name":"query_database","input":{"sql":"select 1"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_abc"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("How many rows?")), m,
		msg(nous.ToolMessage("toolu_def", "query_database", "[[1]]")), msg(nous.UserMessage("Also count the users."))))
	var params anthropic.MessageNewParams
	err := nousanthropic.Fill(&params, c)
	var e *nousanthropic.Error
	if !errors.As(err, &e) || !errors.Is(err, nousanthropic.ErrUnsupported) || e.Index != 3 {
		t.Errorf("Fill: %v, want an *Error naming message 3 and wrapping ErrUnsupported", err)
	}
	c = nous.NewContext() // without the user's text, the results go alone
	must(t, c.AddMessages(msg(nous.UserMessage("How many rows?")), m, msg(nous.ToolMessage("toolu_def", "query_database", "[[1]]"))))
	s := sentOf(t, send(t, c))
	if got := strings.Join(types(s.Messages[len(s.Messages)-1].Content), ","); got != "tool_result" {
		t.Errorf("the message answering the code's pending tool call holds %s", got)
	}
}

// A caller kept in Metadata that is not an object with a type is refused.
func TestCallerNotAnObject(t *testing.T) {
	for _, caller := range []string{`"code_execution_20250825"`, `null`, `[]`, `42`} {
		c := nous.NewContext()
		call := nous.ToolCall{ID: "toolu_1", Name: "f", Arguments: json.RawMessage(`{}`), Metadata: map[string]any{"anthropic_caller": caller}}
		must(t, c.AddMessages(msg(nous.UserMessage("q")), msg(nous.AssistantMessage("", call)), msg(nous.ToolMessage("toolu_1", "f", "1"))))
		var params anthropic.MessageNewParams
		err := nousanthropic.Fill(&params, c)
		var e *nousanthropic.Error
		if errors.As(err, &e) && errors.Is(err, nousanthropic.ErrUnsupported) {
			continue
		}
		must(t, err)
		body := send(t, c)
		t.Errorf("caller %s: sent, not refused: %s", caller, body)
	}
}
