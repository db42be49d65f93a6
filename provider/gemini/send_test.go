package gemini_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
)

// A model call adds the reply and its usage; an error of the API changes
// nothing; a view the API would refuse is not sent; the base params are
// the caller's still.
func TestSend(t *testing.T) {
	ctx := context.Background()
	model := geminitest.NewServer(
		geminitest.Reply{Text: "18°C", Usage: nous.Usage{InputTokens: 5, OutputTokens: 2}},
		geminitest.Reply{Status: 503, Error: "overloaded"})
	defer model.Close()
	client, err := model.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	config := &genai.GenerateContentConfig{Temperature: genai.Ptr[float32](0)}
	base := nousgemini.Params{Model: "gemini-test", Config: config}
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	m, err := nousgemini.Send(ctx, client, base, c)
	if err != nil || m.Text() != "18°C" || c.Len() != 2 || c.Usage.InputTokens != 5 || c.Usage.Requests != 1 {
		t.Fatalf("got %q, %v: %d messages, usage %+v", m.Text(), err, c.Len(), c.Usage)
	}
	if s, ok := nous.StepOf(c.Log().Events()[c.Log().Len()-1]); !ok || s.Provider != nousgemini.Provider || s.Model != "gemini-test" || s.Usage != c.Usage || s.Error != "" {
		t.Errorf("the call's step: %+v", s)
	}
	if len(base.Contents) != 0 || base.Config != config || config.SystemInstruction != nil {
		t.Error("the base params were filled")
	}
	if _, err := nousgemini.Send(ctx, client, base, c); err == nil || c.Len() != 2 || c.Usage.Requests != 1 {
		t.Fatalf("an error of the API: %v, and %d messages, usage %+v", err, c.Len(), c.Usage)
	}
	if err := c.AddMessage(nous.ToolMessage("call_nowhere", "get_weather", "18°C")); err != nil {
		t.Fatal(err)
	}
	if _, err := nousgemini.Send(ctx, client, base, c); !errors.Is(err, nous.ErrUnpaired) || len(model.Requests()) != 2 {
		t.Fatalf("a view the API refuses: %v, and %d requests", err, len(model.Requests()))
	}
	if _, err := nousgemini.Send(ctx, nil, base, c); err == nil {
		t.Error("no client, no error")
	}
}
