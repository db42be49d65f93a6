package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A call whose arguments are not an object (a model that stopped halfway,
// null, an array, a string), answered with an error result, is sent on
// every turn after, a store's round trip included: as an object that holds
// the text the model sent ({} for none), by both APIs; a custom tool's
// call whose arguments are not {"input": text} sends their text as its
// input. The log keeps the arguments as they came.
func TestMalformedArgumentsSend(t *testing.T) {
	for _, tt := range []struct {
		args, function, input string // the arguments, and what the two kinds of call send
	}{
		{`{"city": "Par`, `{"invalid_arguments":"{\"city\": \"Par"}`, `{"city": "Par`},
		{`null`, `{}`, `null`},
		{`[]`, `{"invalid_arguments":"[]"}`, `[]`},
		{`"x"`, `{"invalid_arguments":"\"x\""}`, `"x"`},
		{``, `{}`, ``},
		{` {"city": "Paris"} `, ` {"city": "Paris"} `, ` {"city": "Paris"} `},
		{`{"input": "SELECT 1"}`, `{"input": "SELECT 1"}`, `SELECT 1`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			fn := nous.ToolCall{ID: "call_1", Name: "weather", Arguments: json.RawMessage(tt.args)}
			custom := nous.ToolCall{ID: "call_2", Name: "sql", Arguments: json.RawMessage(tt.args), Metadata: map[string]any{nousopenai.MetadataCustom: true}}
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")), msg(nous.AssistantMessage("", fn, custom)),
				msg(nous.ToolErrorMessage("call_1", "weather", "invalid arguments")), msg(nous.ToolErrorMessage("call_2", "sql", "invalid input")),
				msg(nous.UserMessage("Try again."))))
			c = adapttest.RoundTrip(t, c) // a resume
			chat := chatCalls(t, sendChat(t, c))
			if got := chat["call_1"]; got != tt.function {
				t.Errorf("Chat sent the arguments %q as %q, want %q", tt.args, got, tt.function)
			}
			if got := chat["call_2"]; got != tt.input {
				t.Errorf("Chat sent the custom call's input as %q, want %q", got, tt.input)
			}
			for _, it := range inputItems(t, sendResponses(t, c)) {
				switch it["type"] {
				case "function_call":
					if it["arguments"] != tt.function {
						t.Errorf("Responses sent the arguments %q as %q, want %q", tt.args, it["arguments"], tt.function)
					}
				case "custom_tool_call":
					if it["input"] != tt.input {
						t.Errorf("Responses sent the custom call's input as %q, want %q", it["input"], tt.input)
					}
				}
			}
			for _, m := range c.All() {
				for _, tc := range m.ToolCalls {
					if !bytes.Equal(tc.Arguments, []byte(tt.args)) && !(tt.args == "" && tc.Arguments == nil) {
						t.Errorf("the log's arguments changed: %q", tc.Arguments)
					}
				}
			}
		})
	}
}

// chatCalls returns what a Chat body sends of each call, by its ID: a
// function call's arguments, a custom call's input.
func chatCalls(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
				Custom struct {
					Input string `json:"input"`
				} `json:"custom"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &req))
	out := map[string]string{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			switch tc.Type {
			case "function":
				out[tc.ID] = tc.Function.Arguments
			case "custom":
				out[tc.ID] = tc.Custom.Input
			default:
				out[tc.ID] = fmt.Sprintf("a call of type %q", tc.Type)
			}
		}
	}
	return out
}
