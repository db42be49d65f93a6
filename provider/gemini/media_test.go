package gemini_test

import (
	"bytes"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// An image the model made and the code execution tool's parts survive a
// round trip: the image with its signature, the code and its result.
func TestNonTextPartsKept(t *testing.T) {
	resp := decodeResp(t, `{"candidates":[{"content":{"role":"model","parts":[
	{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="},"thoughtSignature":"c2lnLWltYWdl"},
	{"executableCode":{"language":"PYTHON","code":"print(6*7)"}},
	{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}},
	{"text":"Here it is: 42."}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9},"modelVersion":"gemini-test"}`)
	m, _, err := nousgemini.Message(resp)
	must(t, err)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat, then compute 6*7.")), m, msg(nous.UserMessage("Make it blue."))))
	c = adapttest.RoundTrip(t, c)
	sent := send(t, c)
	for _, want := range []string{"c2lnLWltYWdl", "iVBORw0KGgo=", "print(6*7)", "42\\n"} {
		if !bytes.Contains(sent, []byte(want)) {
			t.Errorf("%s was lost on the round trip (message %+v): %s", want, m, sent)
		}
	}
}

// An image in an assistant message goes in the model turn (the history of
// an image model's conversation).
func TestModelImageSent(t *testing.T) {
	a := msg(nous.AssistantMessage("Here is the cat."))
	a.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), a, msg(nous.UserMessage("Make it blue."))))
	if err := nousgemini.Fill(&nousgemini.Params{}, c); err != nil {
		t.Errorf("Fill refused a model turn with an image, which the API takes: %v", err)
	}
}
