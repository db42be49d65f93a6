package anthropic_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// sentIDs returns the IDs of the tool_use blocks of a request body, and the
// tool_use_id of its tool_result blocks, in order.
func sentIDs(t *testing.T, body []byte) (calls, results []string) {
	t.Helper()
	for _, m := range sentOf(t, body).Messages {
		for _, b := range m.Content {
			switch b["type"] {
			case "tool_use":
				calls = append(calls, b["id"].(string))
			case "tool_result":
				results = append(results, b["tool_use_id"].(string))
			}
		}
	}
	return calls, results
}

// A conversation from an OpenAI-compatible server that numbers calls per
// turn (call_0 every turn), and one with an ID of characters the API
// refuses, then a switch to Anthropic: the request goes, each call with an
// ID of the API's form, unique in the request, and each result with its
// call's. The same view sends the same IDs, a view that grows keeps them,
// and the log keeps its own.
func TestCallIDsRemapped(t *testing.T) {
	call := func(id, name string) nous.ToolCall {
		return nous.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Plan my day.")),
		msg(nous.AssistantMessage("", call("call_0", "weather"))), msg(nous.ToolMessage("call_0", "weather", "sunny")),
		msg(nous.AssistantMessage("", call("call_0", "calendar"), call("call_1", "mail"))),
		msg(nous.ToolMessage("call_1", "mail", "2 new")), msg(nous.ToolMessage("call_0", "calendar", "free")),
		msg(nous.AssistantMessage("", call("functions.lookup:0", "lookup"))), msg(nous.ToolMessage("functions.lookup:0", "lookup", "found")),
	))
	first := send(t, c)
	calls, results := sentIDs(t, first)
	if want := []string{"call_0", "call_0_2", "call_1", "functions_lookup_0_2"}; !slices.Equal(calls, want) {
		t.Errorf("tool_use IDs %v, want %v", calls, want)
	}
	if want := []string{"call_0", "call_1", "call_0_2", "functions_lookup_0_2"}; !slices.Equal(results, want) {
		t.Errorf("tool_result IDs %v, want %v (each its call's)", results, want)
	}
	if again := send(t, adapttest.RoundTrip(t, c)); !sameJSON(t, first, again) {
		t.Errorf("the same view sent other IDs:\n%s\n%s", first, again)
	}
	must(t, c.AddMessages(msg(nous.AssistantMessage("", call("call_0", "weather"))), msg(nous.ToolMessage("call_0", "weather", "rain later"))))
	grown, _ := sentIDs(t, send(t, c))
	if !slices.Equal(grown[:len(calls)], calls) || len(grown) != 5 || grown[4] != "call_0_3" {
		t.Errorf("the grown view sends %v; it sent %v before", grown, calls)
	}
	if p := checkRequest(send(t, c)); p != "" {
		t.Error(p)
	}
	for _, m := range c.All() {
		for _, tc := range m.ToolCalls {
			if tc.ID == "call_0_2" || tc.ID == "functions_lookup_0_2" {
				t.Errorf("the log's call ID changed to %s", tc.ID)
			}
		}
	}
}

// A call made by code (programmatic tool calling) whose ID a call before it
// has keeps its caller and its place among its turn's blocks, and its
// result still opens a message of results only; the code's server_tool_use,
// which the caller names, goes with it. A direct call after it with its ID
// again is answered as any other, user text following its result.
func TestCallIDsRemappedKeepProgrammaticCalls(t *testing.T) {
	byCode, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"server_tool_use","id":"srvtoolu_abc","name":"code_execution","input":{"code":"await query_database(sql='select 1')"}},
	{"type":"tool_use","id":"call_0","name":"query_database","input":{"sql":"select 1"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_abc"}},
	{"type":"text","text":"Querying."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	direct := msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "f"}))
	head := []nous.Message{msg(nous.UserMessage("q")), direct, msg(nous.ToolMessage("call_0", "f", "1")), byCode, msg(nous.ToolMessage("call_0", "query_database", "[[1]]"))}
	c := nous.NewContext()
	must(t, c.AddMessages(append(head, msg(nous.UserMessage("And the users?")))...))
	if err := nousanthropic.Fill(new(anthropic.MessageNewParams), c); !errors.Is(err, nousanthropic.ErrUnsupported) {
		t.Errorf("user text joining the results of the code's call: %v, want ErrUnsupported", err)
	}
	c = nous.NewContext()
	must(t, c.AddMessages(head...))
	s := sentOf(t, send(t, c))
	code := s.Messages[3].Content
	if got := types(code); len(got) != 3 || got[0] != "server_tool_use" || got[1] != "tool_use" || got[2] != "text" ||
		code[1]["id"] != "call_0_2" || code[1]["caller"].(map[string]any)["tool_id"] != "srvtoolu_abc" {
		t.Errorf("the code's turn went as %v", code)
	}
	if last := s.Messages[4].Content; len(last) != 1 || last[0]["tool_use_id"] != "call_0_2" {
		t.Errorf("the code's call was answered by %v", last)
	}
	must(t, c.AddMessages(msg(nous.AssistantMessage("One row.")), msg(nous.UserMessage("Again, directly.")),
		direct, msg(nous.ToolMessage("call_0", "f", "1")), msg(nous.UserMessage("Thanks."))))
	if p := checkRequest(send(t, c)); p != "" {
		t.Error(p)
	}
}
