package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// callIDView is a view whose call IDs the APIs would refuse as they are:
// a server that numbers its calls per turn (call_0 each time), parallel
// calls among them, an ID of Anthropic's, and IDs longer than Chat's limit
// (40) and than the Responses API's (64). Each result's text names the
// call it answers, by its place in the view.
func callIDView(t *testing.T) *nous.Context {
	t.Helper()
	call := func(id string) nous.ToolCall {
		return nous.ToolCall{ID: id, Name: "f", Arguments: json.RawMessage(`{}`)}
	}
	long := "fn_" + strings.Repeat("a", 47)   // 50: over Chat's limit
	longer := "fn_" + strings.Repeat("b", 67) // 70: over both
	c := nous.NewContext()
	must(t, c.AddMessages(
		msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", call("call_0"))),
		msg(nous.ToolMessage("call_0", "f", "first")),
		msg(nous.AssistantMessage("", call("call_0"), call("call_1"))),
		msg(nous.ToolMessage("call_1", "f", "third")),
		msg(nous.ToolMessage("call_0", "f", "second")),
		msg(nous.AssistantMessage("", call("toolu_01A09q90qw90lq917835lq9"), call(long), call(longer))),
		msg(nous.ToolMessage("toolu_01A09q90qw90lq917835lq9", "f", "fourth")),
		msg(nous.ToolMessage(long, "f", "fifth")),
		msg(nous.ToolMessage(longer, "f", "sixth")),
		msg(nous.UserMessage("next")),
	))
	return c
}

// callsAndResults returns the call IDs a body sends, in order, and the ID
// each result goes under, by its text; calls and results come as (kind, call
// ID, text) from pick.
func callsAndResults(t *testing.T, items [][3]string) (calls []string, results map[string]string) {
	t.Helper()
	results = map[string]string{}
	for _, it := range items {
		switch it[0] {
		case "call":
			calls = append(calls, it[1])
		case "result":
			results[it[2]] = it[1]
		}
	}
	return calls, results
}

// Calls whose IDs repeat in a view, or are longer than the API takes, go
// under IDs made of theirs, unique in the request and of a length the API
// takes; their results with them; the same view sends the same IDs; an ID
// the API takes as it is (the first call_0, Anthropic's) goes as it is.
func TestReusedCallIDs(t *testing.T) {
	c := callIDView(t)
	for _, api := range []struct {
		name  string
		max   int
		send  func(*testing.T, *nous.Context) []byte
		items func(*testing.T, []byte) [][3]string
	}{
		{"chat", 40, sendChat, chatItems},
		{"responses", 64, sendResponses, responsesItems},
	} {
		t.Run(api.name, func(t *testing.T) {
			body := api.send(t, c)
			if again := api.send(t, c); !bytes.Equal(body, again) {
				t.Errorf("the same view sent other IDs:\n%s\n%s", body, again)
			}
			calls, results := callsAndResults(t, api.items(t, body))
			if len(calls) != 6 {
				t.Fatalf("%d calls sent, want 6: %s", len(calls), body)
			}
			seen := map[string]bool{}
			for _, id := range calls {
				if seen[id] || id == "" || len(id) > api.max {
					t.Errorf("call ID %q sent twice, empty, or longer than %d", id, api.max)
				}
				seen[id] = true
			}
			for k, text := range []string{"first", "second", "third", "fourth", "fifth", "sixth"} {
				if results[text] != calls[k] {
					t.Errorf("the result %q goes under %q, its call under %q", text, results[text], calls[k])
				}
			}
			if calls[0] != "call_0" || calls[3] != "toolu_01A09q90qw90lq917835lq9" {
				t.Errorf("IDs the API takes were changed: %q", calls)
			}
			if (api.max == 64) != (calls[4] == c.Messages()[6].ToolCalls[1].ID) {
				t.Errorf("the 50-character ID went as %q", calls[4])
			}
		})
	}
	for _, m := range c.All() { // the log keeps its IDs
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || strings.HasSuffix(tc.ID, "_2") {
				t.Errorf("the log's call ID changed: %q", tc.ID)
			}
		}
	}
}

// chatItems returns the calls and results of a Chat body: ("call", ID, "")
// and ("result", ID, text).
func chatItems(t *testing.T, body []byte) [][3]string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &req))
	var out [][3]string
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			out = append(out, [3]string{"call", tc.ID})
		}
		if m.Role == "tool" {
			text, _ := m.Content.(string)
			out = append(out, [3]string{"result", m.ToolCallID, text})
		}
	}
	return out
}

// responsesItems returns the calls and outputs of a Responses body.
func responsesItems(t *testing.T, body []byte) [][3]string {
	t.Helper()
	var out [][3]string
	for _, it := range inputItems(t, body) {
		id, _ := it["call_id"].(string)
		switch it["type"] {
		case "function_call", "custom_tool_call":
			out = append(out, [3]string{"call", id})
		case "function_call_output", "custom_tool_call_output":
			text, _ := it["output"].(string)
			out = append(out, [3]string{"result", id, text})
		}
	}
	return out
}

// A server that numbers its output items per turn (fc_0 and call_0 each
// time): the second function_call goes without its item ID (the API
// refuses an item ID twice) and under a call ID of its own, its output
// with it; a repeated reasoning item's ID drops the repeated item, and the
// call after it goes without its item ID. (A user message, an easy input
// message, has none of type, id, call_id and output.)
func TestReusedItemIDs(t *testing.T) {
	for _, tt := range []struct{ name, turn, want string }{
		{"calls", `
	{"type":"function_call","id":"fc_0","call_id":"call_0","name":"f","arguments":"{}","status":"completed"}`,
			"::: function_call:fc_0:call_0: function_call_output::call_0:1 function_call::call_0_2: function_call_output::call_0_2:2 :::"},
		{"reasoning and calls", `
	{"type":"reasoning","id":"rs_0","summary":[],"encrypted_content":"gAAAA0"},
	{"type":"function_call","id":"fc_0","call_id":"call_0","name":"f","arguments":"{}","status":"completed"}`,
			"::: reasoning:rs_0:: function_call:fc_0:call_0: function_call_output::call_0:1 function_call::call_0_2: function_call_output::call_0_2:2 :::"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first, _ := read(t, responseOf(t, tt.turn))
			second, _ := read(t, responseOf(t, tt.turn))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("q")), first, msg(nous.ToolMessage("call_0", "f", "1")),
				second, msg(nous.ToolMessage("call_0", "f", "2")), msg(nous.UserMessage("next"))))
			c = adapttest.RoundTrip(t, c)
			var got []string
			for _, it := range inputItems(t, sendResponses(t, c)) {
				got = append(got, strings.Join([]string{str(it["type"]), str(it["id"]), str(it["call_id"]), str(it["output"])}, ":"))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("items\n%s\nwant\n%s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// str returns v when it is a string, "" otherwise.
func str(v any) string { s, _ := v.(string); return s }

// A server that gives parallel calls one ID, or none: ChatMessage gives
// each call an ID of its own, so the context takes the reply, the tools
// run, and the next request pairs every result with its call.
func TestChatMessageDistinctIDs(t *testing.T) {
	for _, ids := range [][2]string{{"call_0", "call_0"}, {"", ""}} {
		answer := `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"` + ids[0] + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"` + ids[1] + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]}}]}`
		var resp openai.ChatCompletion
		must(t, json.Unmarshal([]byte(answer), &resp))
		m, _, err := nousopenai.ChatMessage(&resp)
		must(t, err)
		if a, b := m.ToolCalls[0].ID, m.ToolCalls[1].ID; a == "" || b == "" || a == b {
			t.Fatalf("IDs %q: the calls got %q and %q", ids, a, b)
		}
		c := nous.NewContext()
		must(t, c.AddMessage(nous.UserMessage("Paris and Rome?")))
		must(t, c.AddMessage(m))
		must(t, c.RunToolCalls(context.Background(), m.ToolCalls, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
			return nous.ToolResult{Content: "sunny"}
		}))
		if problem := adapttest.CheckChat(sendChat(t, c)); problem != "" {
			t.Fatalf("IDs %q: %s", ids, problem)
		}
	}
}
