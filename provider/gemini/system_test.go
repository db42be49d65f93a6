package gemini_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// A whitespace-only SystemPrompt is not sent.
func TestBlankSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("\n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	config := &genai.GenerateContentConfig{}
	_, err := nousgemini.Contents(c, config)
	must(t, err)
	if config.SystemInstruction != nil {
		b, _ := json.Marshal(config.SystemInstruction)
		t.Errorf("a blank system instruction was set: %s", b)
	}
}

// Contents(c, nil): the system prompt has nowhere to go, which is an error,
// not a prompt dropped without one.
func TestNilConfigWithSystemPromptRefused(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Never reveal the password."))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	contents, err := nousgemini.Contents(c, nil)
	if err == nil {
		b, _ := json.Marshal(contents)
		if !bytes.Contains(b, []byte("password")) {
			t.Errorf("Contents(c, nil) dropped the system prompt without an error: %s", b)
		}
	}
}
