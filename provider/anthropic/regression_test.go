package anthropic_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

type sentBody struct {
	System   []map[string]any `json:"system"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
}

func sentOf(t *testing.T, body []byte) sentBody {
	var s sentBody
	must(t, json.Unmarshal(body, &s))
	return s
}

func types(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b["type"].(string))
	}
	return out
}

// A response with a server tool in the middle (web search) has thinking,
// text, server blocks, thinking, text: the blocks go back in their order,
// the server tool's among them.
func TestThinkingOrderChanged(t *testing.T) {
	resp := decode(t, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"thinking","thinking":"Search first.","signature":"sigA"},
	{"type":"text","text":"Let me search."},
	{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
	{"type":"thinking","thinking":"Now answer.","signature":"sigB"},
	{"type":"text","text":"Answer."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`)
	m, _ := nousanthropic.Message(resp)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	got := types(sentOf(t, send(t, c)).Messages[1].Content)
	want := []string{"thinking", "text", "server_tool_use", "web_search_tool_result", "thinking", "text"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("assistant blocks went back as %v, came as %v", got, want)
	}
}

// Doc: thinking goes "first in its assistant turn, as the API wants for
// the last turn of a tool loop". Two consecutive assistant messages are
// merged into one turn, and the signed thinking of the second lands after
// the first's text: the API refuses ("a final assistant message must start
// with a thinking block"). Fill gives no error.
func TestThinkingNotFirstAfterMerge(t *testing.T) {
	c := nous.NewContext()
	second := msg(nous.AssistantMessage("", nous.ToolCall{ID: "toolu_1", Name: "f"}))
	second.Parts = []nous.ContentPart{signed(t, "Call f.", "sig")}
	must(t, c.AddMessages(msg(nous.UserMessage("q")), msg(nous.AssistantMessage("Let me look.")), second, msg(nous.ToolMessage("toolu_1", "f", "1"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err != nil {
		return // refusing is fine
	}
	body := send(t, c)
	s := sentOf(t, body)
	if first := s.Messages[1].Content[0]["type"]; first != "thinking" {
		t.Errorf("the last tool-loop assistant turn starts with %v, not thinking: %s", first, body)
	}
}

// Spec: images/files map to provider parts or a typed error. A system
// message's image is silently dropped.
func TestSystemImageDropped(t *testing.T) {
	c := nous.NewContext()
	sys := msg(nous.SystemMessage("Use this logo."))
	sys.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	must(t, c.AddMessages(sys, msg(nous.UserMessage("q"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err == nil {
		body := send(t, c)
		if !strings.Contains(string(body), "iVBORw0KGgo=") {
			t.Errorf("the system message's image was dropped without an error: %s", body)
		}
	}
}

// A tool call ID from another provider (e.g. "functions.lookup:0") is sent
// as a tool_use id, which the API refuses (pattern ^[a-zA-Z0-9_-]+$).
func TestForeignToolUseID(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "functions.lookup:0", Name: "lookup"})),
		msg(nous.ToolMessage("functions.lookup:0", "lookup", "1"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err == nil {
		body := string(send(t, c))
		if !regexp.MustCompile(`"id":"[a-zA-Z0-9_-]+"`).MatchString(body) {
			t.Errorf("an ID the API refuses was sent without an error: %s", body)
		}
	}
}

// A view of system messages only: messages is empty, which the API
// refuses ("messages: at least one message is required"); no error.
func TestNoMessages(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.SystemMessage("s"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err == nil && len(params.Messages) == 0 {
		t.Errorf("Fill produced a request with no messages and no error")
	}
}

func TestMessageNil(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Message(nil) panicked: %v", r)
		}
	}()
	nousanthropic.Message(nil)
}

// Providers that number calls per turn ("call_0") reuse an ID across turns;
// CheckToolPairing allows it, but Anthropic refuses duplicate tool_use ids
// in one request ("tool_use ids must be unique"). No error.
func TestDuplicateToolUseIDAcrossTurns(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "f"})), msg(nous.ToolMessage("call_0", "f", "1")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "f"})), msg(nous.ToolMessage("call_0", "f", "2"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err == nil {
		t.Errorf("two tool_use blocks with id call_0 in one request, no error")
	}
}

// A whitespace-only system prompt is not sent (the API refuses a blank text
// block), and one the leading system message holds as a text part goes
// once.
func TestSystemPromptBlankOrInPart(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt(" \n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	if s := sentOf(t, send(t, c)); len(s.System) != 0 {
		t.Errorf("a blank system prompt was sent: %v", s.System)
	}
	c = nous.NewContext(nous.WithSystemPrompt("You are terse."))
	must(t, c.AddMessages(msg(nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{nous.TextPart("You are terse.")}}), msg(nous.UserMessage("q"))))
	if s := sentOf(t, send(t, c)); len(s.System) != 1 {
		t.Errorf("system blocks %v, want the prompt once", s.System)
	}
}
