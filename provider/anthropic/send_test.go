package anthropic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
)

// A model call adds the reply and its usage; an error of the API changes
// nothing; a view the API would refuse is not sent; the base params are
// the caller's still.
func TestSend(t *testing.T) {
	ctx := context.Background()
	model := anthropictest.NewServer(
		anthropictest.Reply{Text: "18°C", Usage: nous.Usage{InputTokens: 5, OutputTokens: 2}},
		anthropictest.Reply{Status: 529, Error: "overloaded"})
	defer model.Close()
	base := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 64}
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	m, err := nousanthropic.Send(ctx, model.Client(), base, c)
	if err != nil || m.Text() != "18°C" || c.Len() != 2 || c.Usage.InputTokens != 5 || c.Usage.Requests != 1 {
		t.Fatalf("got %q, %v: %d messages, usage %+v", m.Text(), err, c.Len(), c.Usage)
	}
	if s, ok := nous.StepOf(c.Log().Events()[c.Log().Len()-1]); !ok || s.Provider != nousanthropic.Provider || s.Model != "claude-test" || s.Usage != c.Usage || s.Error != "" {
		t.Errorf("the call's step: %+v", s)
	}
	if len(base.Messages) != 0 || len(base.System) != 0 {
		t.Error("the base params were filled")
	}
	var apiErr *anthropic.Error
	if _, err := nousanthropic.Send(ctx, model.Client(), base, c); !errors.As(err, &apiErr) || c.Len() != 2 || c.Usage.Requests != 1 {
		t.Fatalf("an error of the API: %v, and %d messages, usage %+v", err, c.Len(), c.Usage)
	}
	if err := c.AddMessage(nous.ToolMessage("toolu_nowhere", "get_weather", "18°C")); err != nil {
		t.Fatal(err)
	}
	if _, err := nousanthropic.Send(ctx, model.Client(), base, c); !errors.Is(err, nous.ErrUnpaired) || len(model.Requests()) != 2 {
		t.Fatalf("a view the API refuses: %v, and %d requests", err, len(model.Requests()))
	}
}
