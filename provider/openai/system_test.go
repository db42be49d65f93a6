package openai_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A whitespace-only SystemPrompt (say, read from an empty config line) is
// not sent.
func TestBlankSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("\n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	chat := sendChat(t, c)
	if bytes.Contains(chat, []byte(`"role":"system"`)) {
		t.Errorf("Chat: a blank system message was sent: %s", chat)
	}
	resp := sendResponses(t, c)
	if bytes.Contains(resp, []byte(`"role":"system"`)) {
		t.Errorf("Responses: a blank system message was sent: %s", resp)
	}
}

// A leading system message that holds the system prompt as a text part
// (Parts, no Content) has it: the prompt goes once.
func TestPromptInViewAsPart(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	sys := msg(nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{nous.TextPart("You are terse.")}})
	must(t, c.AddMessages(sys, msg(nous.UserMessage("q"))))
	if body := sendChat(t, c); bytes.Count(body, []byte("You are terse.")) != 1 {
		t.Errorf("the system prompt was sent twice: %s", body)
	}
}

// A system message's image is refused or sent by FillChat and
// FillResponses, never dropped without an error.
func TestSystemImageNotDroppedSilently(t *testing.T) {
	c := nous.NewContext()
	sys := msg(nous.SystemMessage("Use this logo."))
	sys.Parts = []nous.ContentPart{nous.ImageURLPart("https://example.com/logo.png")}
	must(t, c.AddMessages(sys, msg(nous.UserMessage("q"))))
	for name, fill := range map[string]func() error{
		"chat":      func() error { p := openai.ChatCompletionNewParams{}; return nousopenai.FillChat(&p, c) },
		"responses": func() error { p := responses.ResponseNewParams{}; return nousopenai.FillResponses(&p, c) },
	} {
		if fill() == nil {
			var body []byte
			if name == "chat" {
				body = sendChat(t, c)
			} else {
				body = sendResponses(t, c)
			}
			if !strings.Contains(string(body), "logo.png") {
				t.Errorf("%s: the system message's image was dropped without an error: %s", name, body)
			}
		}
	}
}
