package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
)

// Arguments a model malformed (it stopped halfway, or sent null, an array,
// a string), which the runtime answered with an error result, go as the
// call's input by the shared rule, in this request and every later one, also
// after a store kept the context; the log keeps them as they came.
func TestMalformedArgumentsSent(t *testing.T) {
	for _, tt := range []struct{ args, input string }{
		{`{"city": "Par`, `{"invalid_arguments":"{\"city\": \"Par"}`},
		{`null`, `{}`},
		{`[]`, `{"invalid_arguments":"[]"}`},
		{`"x"`, `{"invalid_arguments":"\"x\""}`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			call := nous.ToolCall{ID: "toolu_1", Name: "weather", Arguments: json.RawMessage(tt.args)}
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")), msg(nous.AssistantMessage("", call))))
			must(t, c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
				var args struct{ City string }
				return nous.ToolResult{Err: rc.Call.ParseArguments(&args)}
			}))
			if m, _ := c.LastMessage(); !m.IsError() {
				t.Fatalf("setup: the call was answered with %+v, not an error result", m)
			}
			check := func(c *nous.Context) {
				t.Helper()
				input := toolInputs(t, send(t, c))["toolu_1"]
				if !sameJSON(t, input, []byte(tt.input)) {
					t.Errorf("input sent %s, want %s", input, tt.input)
				}
				if got := c.Messages()[1].ToolCalls[0].Arguments; !bytes.Equal(got, []byte(tt.args)) {
					t.Errorf("the log's arguments are %s, came as %s", got, tt.args)
				}
			}
			check(c)
			retry := nous.ToolCall{ID: "toolu_2", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
			must(t, c.AddMessages(msg(nous.AssistantMessage("Let me try again.", retry)), msg(nous.ToolMessage("toolu_2", "weather", "18°C")),
				msg(nous.AssistantMessage("It is 18°C.")), msg(nous.UserMessage("Thanks."))))
			check(c)
			check(adapttest.RoundTrip(t, c))
		})
	}
}

// toolInputs returns the input of each tool_use block of a request body, by
// its ID.
func toolInputs(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &req))
	out := map[string]json.RawMessage{}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				out[b.ID] = b.Input
			}
		}
	}
	return out
}
