package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A Responses tool result with a file sends it as an input_file of its
// function_call_output (only a Chat tool result is text only).
func TestResponsesToolResultFile(t *testing.T) {
	pdf := nous.ContentPart{Type: nous.PartFile, Content: "JVBERi0=", Options: map[string]any{"media_type": "application/pdf", "filename": "report.pdf"}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Fetch the report.")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_1", Name: "fetch", Arguments: json.RawMessage(`{}`)})),
		msg(nous.Message{Role: nous.RoleTool, ToolCallID: "call_1", Name: "fetch", Content: "here it is", Parts: []nous.ContentPart{pdf}})))
	var params responses.ResponseNewParams
	if err := nousopenai.FillResponses(&params, c); err != nil {
		t.Fatalf("FillResponses: %v", err)
	}
	if body := sendResponses(t, c); !bytes.Contains(body, []byte(`"input_file"`)) {
		t.Errorf("the file was not sent as input_file: %s", body)
	}
}

// The result of a custom tool call with an image goes as a list of content
// (input_text, input_image), as a function call's does.
func TestCustomCallResultImage(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"screenshot","input":"https://example.com","status":"completed"}`))
	result := msg(nous.ToolMessage("call_1", "screenshot", "the page:"))
	result.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Look at example.com.")), m, result))
	body := sendResponses(t, c)
	if !strings.Contains(string(body), "iVBORw0KGgo") {
		items := inputItems(t, body)
		out, _ := json.Marshal(items[len(items)-1])
		t.Errorf("the result's image is not in the request: %s", out)
	}
}

// A custom tool's result whose text has a line break as a part of its own
// ("a" "\n" "b") keeps it, as a function call's output does.
func TestCustomCallResultWhitespace(t *testing.T) {
	m, _ := nousopenai.ResponseMessage(responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"shell","input":"ls","status":"completed"}`))
	result := msg(nous.ToolMessage("call_1", "shell", "a.txt"))
	result.Parts = []nous.ContentPart{nous.TextPart("\n"), nous.TextPart("b.txt")}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("ls")), m, result))
	items := inputItems(t, sendResponses(t, c))
	if out := items[len(items)-1]["output"]; out != "a.txt\nb.txt" {
		t.Errorf("the custom call's output went as %q, the result is %q", out, "a.txt\nb.txt")
	}
}
