package anthropic_test

import (
	"regexp"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A tool call ID from another provider (e.g. "functions.lookup:0"), which
// the API refuses as a tool_use id (pattern ^[a-zA-Z0-9_-]+$), is refused,
// never sent.
func TestForeignToolUseIDRefused(t *testing.T) {
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

// Providers that number calls per turn ("call_0") reuse an ID across turns,
// which CheckToolPairing allows but the API refuses in one request
// ("tool_use ids must be unique"): such a view is refused.
func TestToolUseIDTwiceRefused(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "f"})), msg(nous.ToolMessage("call_0", "f", "1")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "call_0", Name: "f"})), msg(nous.ToolMessage("call_0", "f", "2"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err == nil {
		t.Errorf("two tool_use blocks with id call_0 in one request, no error")
	}
}
