package gemini_test

import (
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// Call IDs a server numbers per turn (call_0, call_1 in every turn; the
// pairing check allows an ID again in a later turn), the second turn's
// results answered in the other order: the function responses go in that
// turn's calls' order.
func TestCallOrderWithIDsAgain(t *testing.T) {
	call := func(id, city string) nous.ToolCall {
		return nous.ToolCall{ID: id, Name: "weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}
	}
	c := nous.NewContext()
	must(t, c.AddMessages(
		msg(nous.UserMessage("Weather in Rome and Oslo?")),
		msg(nous.AssistantMessage("", call("call_0", "Rome"), call("call_1", "Oslo"))),
		msg(nous.ToolMessage("call_0", "weather", "hot")),
		msg(nous.ToolMessage("call_1", "weather", "cold")),
		msg(nous.AssistantMessage("Hot in Rome, cold in Oslo.")),
		msg(nous.UserMessage("And Paris and London?")),
		msg(nous.AssistantMessage("", call("call_1", "Paris"), call("call_0", "London"))),
		msg(nous.ToolMessage("call_0", "weather", "rain")),
		msg(nous.ToolMessage("call_1", "weather", "sun")),
	))
	contents, err := nousgemini.Contents(c, &genai.GenerateContentConfig{})
	must(t, err)
	var order []string
	for _, p := range contents[len(contents)-1].Parts {
		if p.FunctionResponse != nil {
			order = append(order, p.FunctionResponse.ID)
		}
	}
	if !slices.Equal(order, []string{"call_1", "call_0"}) {
		t.Errorf("function responses %v, not in the calls' order [call_1 call_0]: Paris's call is answered \"rain\" by position", order)
	}
}

// A blank text part keeps its place in the order Message recorded: the
// answer after the code run goes back after it.
func TestBlankTextKeepsOrder(t *testing.T) {
	const body = `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"\n"},
	{"executableCode":{"language":"PYTHON","code":"print(2**10)"}},
	{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1024\n"}},
	{"text":"It is 1024."}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`
	m := receive(t, body)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("2^10?")), m, msg(nous.UserMessage("Thanks."))))
	sent, _, out := modelTurn(t, c, 1, body)
	if len(sent) == 0 || string(sent[len(sent)-1]) != `{"text":"It is 1024."}` {
		t.Errorf("the answer is not after the code run it reports: %s", out)
	}
}
