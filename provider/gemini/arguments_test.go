package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
)

// A call whose arguments are not a JSON object (a model that stopped
// halfway, null, an array, a string), which the runtime answered with an
// error result: every request after it sends the call, its arguments as an
// object that shows what came ({} for null), after a JSON round trip of the
// context too; the log keeps the arguments as they came.
func TestArgumentsNotAnObject(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{`{"city": "Par`, `{"invalid_arguments":"{\"city\": \"Par"}`},
		{`null`, `{}`},
		{`[]`, `{"invalid_arguments":"[]"}`},
		{`"x"`, `{"invalid_arguments":"\"x\""}`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			c := nous.NewContext()
			call := nous.ToolCall{ID: "call_1", Name: "weather", Arguments: json.RawMessage(tt.args)}
			must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")), msg(nous.AssistantMessage("", call)),
				msg(nous.ToolErrorMessage(call.ID, call.Name, "invalid arguments: unexpected end of JSON input"))))
			for _, d := range []*nous.Context{c, adapttest.RoundTrip(t, c)} {
				body := send(t, d)
				fc := decodeBody(t, body).Contents[1].Parts[0].FunctionCall
				got, _ := json.Marshal(fc.Args)
				if fc.Args == nil {
					got = []byte("{}") // the SDK leaves out an empty object
				}
				if fc.Name != "weather" || !adapttest.SameJSON(t, got, []byte(tt.want)) {
					t.Errorf("the call went as %s %s, want the arguments %s\n%s", fc.Name, got, tt.want, body)
				}
				if got := d.Messages()[1].ToolCalls[0].Arguments; string(got) != tt.args {
					t.Errorf("the log's arguments are %s, not %s as they came", got, tt.args)
				}
			}
		})
	}
}
