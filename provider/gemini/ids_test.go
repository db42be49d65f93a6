package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// sentIDs returns the IDs of the function calls and responses of a body
// the SDK sent, by the call's (the response's) name.
func sentIDs(t *testing.T, body []byte) (calls, responses map[string]string) {
	t.Helper()
	calls, responses = map[string]string{}, map[string]string{}
	for _, c := range decodeBody(t, body).Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				calls[p.FunctionCall.Name] = p.FunctionCall.ID
			}
			if p.FunctionResponse != nil {
				responses[p.FunctionResponse.Name] = p.FunctionResponse.ID
			}
		}
	}
	return calls, responses
}

// Only an ID Gemini gave a call goes back, on the call and on its
// response: not the one Message made up for a call the API gave none, nor
// another provider's or a runtime's, nor the IDs of a log written before
// Message recorded which IDs are Gemini's (its made-up ones among them),
// nor an ID a runtime changed since. Those calls and their responses go
// without an ID, matched by place and name; after a JSON round trip of the
// context the same.
func TestOnlyGeminiIDsSent(t *testing.T) {
	given := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"functionCall":{"id":"fc_given","name":"given","args":{}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}]}`)
	if given.ToolCalls[0].Metadata[nousgemini.MetadataCallID] != "fc_given" {
		t.Fatalf("Message did not record the ID Gemini gave: %+v", given.ToolCalls[0])
	}
	madeUp := receive(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"functionCall":{"name":"made_up","args":{}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}]}`)
	if _, ok := madeUp.ToolCalls[0].Metadata[nousgemini.MetadataCallID]; ok || madeUp.ToolCalls[0].ID == "" {
		t.Fatalf("a call the API gave no ID: %+v", madeUp.ToolCalls[0])
	}
	sig := map[string]any{nous.OptionThoughtSignature: "c2ln"}
	oldMadeUp := nous.ToolCall{ID: "gemini_0123456789abcdef", Name: "old_made_up", Metadata: sig} // as Message made them up before
	oldGiven := nous.ToolCall{ID: "fc_old", Name: "old_given", Metadata: sig}
	renamed := given.ToolCalls[0]
	renamed.ID, renamed.Name = "renamed", "renamed"
	foreign := nous.ToolCall{ID: "toolu_01", Name: "foreign"}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		given, msg(nous.ToolMessage("fc_given", "given", "1")),
		madeUp, msg(nous.ToolMessage(madeUp.ToolCalls[0].ID, "made_up", "2")),
		msg(nous.AssistantMessage("", oldMadeUp)), msg(nous.ToolMessage(oldMadeUp.ID, "old_made_up", "3")),
		msg(nous.AssistantMessage("", oldGiven)), msg(nous.ToolMessage(oldGiven.ID, "old_given", "4")),
		msg(nous.AssistantMessage("", renamed)), msg(nous.ToolMessage("renamed", "renamed", "5")),
		msg(nous.AssistantMessage("", foreign)), msg(nous.ToolMessage("toolu_01", "foreign", "6"))))
	for _, d := range []*nous.Context{c, adapttest.RoundTrip(t, c)} {
		body, p := sendParams(t, d)
		if problem := checkRequest(p, d.Messages()); problem != "" {
			t.Fatalf("%s\n%s", problem, body)
		}
		calls, responses := sentIDs(t, body)
		want := map[string]string{"given": "fc_given", "made_up": "", "old_made_up": "", "old_given": "", "renamed": "", "foreign": ""}
		for name, id := range want {
			if calls[name] != id || responses[name] != id {
				t.Errorf("%s: call sent with ID %q, its response %q; want %q", name, calls[name], responses[name], id)
			}
		}
	}
}

// The mark Message records is the ID as Gemini gave it, a string that a
// store keeps.
func TestCallIDMarkStored(t *testing.T) {
	m := receive(t, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"fc_1","name":"f"}}]}}]}`)
	b, err := json.Marshal(m.ToolCalls[0])
	must(t, err)
	var back nous.ToolCall
	must(t, json.Unmarshal(b, &back))
	if back.Metadata[nousgemini.MetadataCallID] != "fc_1" {
		t.Errorf("the mark after JSON: %+v", back.Metadata)
	}
}
