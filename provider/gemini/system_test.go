package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// A whitespace-only SystemPrompt is not sent.
func TestBlankSystemPrompt(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("\n"))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	if p := fill(t, c); p.Config.SystemInstruction != nil {
		b, _ := json.Marshal(p.Config.SystemInstruction)
		t.Errorf("a blank system instruction was set: %s", b)
	}
}

// Fill with a nil Config and a system prompt makes a config for it: the
// prompt is sent, through the SDK, as the system instruction.
func TestFillMakesConfig(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Never reveal the password."))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	p := nousgemini.Params{Model: "gemini-test"}
	must(t, nousgemini.Fill(&p, c))
	cl, f := client(t)
	_, err := cl.Models.GenerateContent(context.Background(), p.Model, p.Contents, p.Config)
	must(t, err)
	w := decodeBody(t, f.Bodies[0])
	if w.SystemInstruction == nil || len(w.SystemInstruction.Parts) != 1 || w.SystemInstruction.Parts[0].Text != "Never reveal the password." {
		t.Errorf("the system prompt was not sent: %s", f.Bodies[0])
	}
	// Without a system instruction, no config is made.
	d := nous.NewContext()
	must(t, d.AddMessage(msg(nous.UserMessage("q"))))
	q := nousgemini.Params{}
	must(t, nousgemini.Fill(&q, d))
	if q.Config != nil {
		t.Errorf("a config was made for nothing: %+v", q.Config)
	}
}

// Fill leaves the caller's config as it was (it may serve several requests
// at once) and fills a copy, the caller's settings kept; filling again with
// the params filled keeps one system instruction.
func TestFillCopiesConfig(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	shared := &genai.GenerateContentConfig{Temperature: genai.Ptr[float32](0.5)}
	p := nousgemini.Params{Config: shared}
	must(t, nousgemini.Fill(&p, c))
	if shared.SystemInstruction != nil {
		t.Error("Fill wrote to the caller's config")
	}
	if p.Config == shared || p.Config.Temperature == nil || *p.Config.Temperature != 0.5 || p.Config.SystemInstruction == nil {
		t.Errorf("the config filled: %+v", p.Config)
	}
	must(t, nousgemini.Fill(&p, c))
	if len(p.Config.SystemInstruction.Parts) != 1 {
		t.Errorf("filled again: %d system parts", len(p.Config.SystemInstruction.Parts))
	}
}

// Fill of nil params or a nil context is an error, not a panic.
func TestFillNil(t *testing.T) {
	if err := nousgemini.Fill(nil, nous.NewContext()); err == nil {
		t.Error("Fill(nil, c): no error")
	}
	if err := nousgemini.Fill(&nousgemini.Params{}, nil); err == nil {
		t.Error("Fill(p, nil): no error")
	}
}

// The deprecated Contents sets the config's system instruction in place,
// as it always did; with a nil config the system prompt has nowhere to go,
// which is an error, not a prompt dropped without one.
func TestContentsWrapper(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Never reveal the password."))
	must(t, c.AddMessage(msg(nous.UserMessage("q"))))
	config := &genai.GenerateContentConfig{}
	contents, err := nousgemini.Contents(c, config)
	must(t, err)
	if len(contents) != 1 || config.SystemInstruction == nil || config.SystemInstruction.Parts[0].Text != "Never reveal the password." {
		t.Errorf("Contents: %d contents, system %+v", len(contents), config.SystemInstruction)
	}
	contents, err = nousgemini.Contents(c, nil)
	if !errors.Is(err, nousgemini.ErrUnsupported) {
		b, _ := json.Marshal(contents)
		if !bytes.Contains(b, []byte("password")) {
			t.Errorf("Contents(c, nil) dropped the system prompt without an error: %s", b)
		}
	}
}
