package gemini_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

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

// An empty thought part ({"thought":true}: no text, no signature) takes no
// place in the recorded order: the signed thought after the text goes back
// after it.
func TestEmptyThoughtKeepsOrder(t *testing.T) {
	for _, blank := range []string{`{"thought":true}`, `{"text":" \n","thought":true}`} {
		emptyThoughtKeepsOrder(t, blank)
	}
}

func emptyThoughtKeepsOrder(t *testing.T, blank string) {
	body := `{"candidates":[{"content":{"role":"model","parts":[
	` + blank + `,
	{"text":"Let me look it up."},
	{"text":"The user wants Paris.","thought":true,"thoughtSignature":"c2lnQQ=="},
	{"functionCall":{"id":"fc_1","name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnQg=="}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`
	m := receive(t, body)
	for _, p := range m.Parts {
		if p.Type == nous.PartThinking && strings.TrimSpace(p.Content) == "" && p.Options["thought_signature"] == nil {
			t.Errorf("%s: a blank thought without a signature is a part of the message", blank)
		}
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")), m, msg(nous.ToolMessage("fc_1", "weather", "sun"))))
	sent, came, out := modelTurn(t, c, 1, body)
	var want []string
	for _, p := range came[1:] { // the empty part aside
		want = append(want, string(p))
	}
	var got []string
	for _, p := range sent {
		got = append(got, string(p))
	}
	// compare the parts by what they carry (the SDK reorders a part's fields)
	texts := func(parts []string) []string {
		var out []string
		for _, p := range parts {
			for _, s := range []string{"Let me look it up.", "The user wants Paris.", "fc_1"} {
				if strings.Contains(p, s) {
					out = append(out, s)
				}
			}
		}
		return out
	}
	if g, w := texts(got), texts(want); !slices.Equal(g, w) {
		t.Errorf("the model turn went back as %v, came as %v\n%s", g, w, out)
	}
}
