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
	m, _ := read(t, responseOf(t, `
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

// A tool result of several texts (its Content and text parts, as a runtime
// that streams a tool's output makes it) goes with each text on a line of
// its own, by both APIs, for a function call and a custom tool's call
// alike: not glued together ("18°Csunny").
func TestToolResultTextsOnLines(t *testing.T) {
	custom, _ := read(t, responseOf(t, `
	{"type":"custom_tool_call","id":"ctc_1","call_id":"call_2","name":"shell","input":"ls","status":"completed"}`))
	custom.ToolCalls = append([]nous.ToolCall{{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{}`)}}, custom.ToolCalls...)
	result := func(id, name string) nous.Message {
		r := msg(nous.ToolMessage(id, name, "18°C"))
		r.Parts = []nous.ContentPart{nous.TextPart("sunny"), nous.TextPart(""), nous.TextPart("wind 5 km/h")}
		return r
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather, and ls?")), custom, result("call_1", "weather"), result("call_2", "shell")))
	const want = "18°C\nsunny\nwind 5 km/h"
	var chat struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(sendChat(t, c), &chat))
	for _, m := range chat.Messages {
		if m.Role == "tool" && m.Content != want {
			t.Errorf("Chat sent the result as %q, want %q", m.Content, want)
		}
	}
	outputs := 0
	for _, it := range inputItems(t, sendResponses(t, c)) {
		if it["type"] == "function_call_output" || it["type"] == "custom_tool_call_output" {
			outputs++
			if it["output"] != want {
				t.Errorf("Responses sent the %s as %q, want %q", it["type"], it["output"], want)
			}
		}
	}
	if outputs != 2 {
		t.Errorf("%d outputs sent, want 2", outputs)
	}
}
