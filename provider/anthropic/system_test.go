package anthropic_test

import (
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A system message's image, which no system block holds, is refused or
// sent, never dropped without an error.
func TestSystemImageNotDroppedSilently(t *testing.T) {
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
