package openai_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// A model call adds the reply and its usage; an error of the API changes
// nothing; a view the API would refuse is not sent; the base params are
// the caller's still.
func TestSend(t *testing.T) {
	ctx := context.Background()
	sends := map[string]func(openai.Client, *nous.Context) (nous.Message, error){
		"chat": func(client openai.Client, c *nous.Context) (nous.Message, error) {
			base := openai.ChatCompletionNewParams{Model: "gpt-test"}
			m, err := nousopenai.SendChat(ctx, client, base, c)
			if len(base.Messages) != 0 {
				t.Error("the base params were filled")
			}
			return m, err
		},
		"responses": func(client openai.Client, c *nous.Context) (nous.Message, error) {
			base := responses.ResponseNewParams{Model: "gpt-test"}
			m, err := nousopenai.SendResponses(ctx, client, base, c)
			if base.Input.OfInputItemList != nil {
				t.Error("the base params were filled")
			}
			return m, err
		},
	}
	for name, send := range sends {
		t.Run(name, func(t *testing.T) {
			model := openaitest.NewServer(
				openaitest.Reply{Text: "18°C", Usage: nous.Usage{InputTokens: 5, OutputTokens: 2}},
				openaitest.Reply{Status: 503, Error: "overloaded"})
			defer model.Close()
			c := nous.NewContext()
			if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
				t.Fatal(err)
			}
			m, err := send(model.Client(), c)
			if err != nil || m.Text() != "18°C" || c.Len() != 2 || c.Usage.InputTokens != 5 || c.Usage.Requests != 1 {
				t.Fatalf("got %q, %v: %d messages, usage %+v", m.Text(), err, c.Len(), c.Usage)
			}
			if s, ok := nous.StepOf(c.Log().Events()[c.Log().Len()-1]); !ok || s.Provider != nousopenai.Provider || s.Model != "gpt-test" || s.Usage != c.Usage || s.Error != "" {
				t.Errorf("the call's step: %+v", s)
			}
			var apiErr *openai.Error
			if _, err := send(model.Client(), c); !errors.As(err, &apiErr) || c.Len() != 2 || c.Usage.Requests != 1 {
				t.Fatalf("an error of the API: %v, and %d messages, usage %+v", err, c.Len(), c.Usage)
			}
			if err := c.AddMessage(nous.ToolMessage("call_nowhere", "get_weather", "18°C")); err != nil {
				t.Fatal(err)
			}
			if _, err := send(model.Client(), c); !errors.Is(err, nous.ErrUnpaired) || len(model.Requests()) != 2 {
				t.Fatalf("a view the API refuses: %v, and %d requests", err, len(model.Requests()))
			}
		})
	}
}
