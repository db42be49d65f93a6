package gemini

import (
	"context"
	"errors"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Send is one model call of a loop on GenerateContent: a copy of params
// filled from c by [Fill] (which copies Config too, so params may be the
// same base for every call), sent through client, the response read by
// [Message], its message added to c, and the step ended with its usage
// ([nous.Context.EndStep]: c.Usage, and a step_end event that records
// it). It returns the message; its ToolCalls are what the loop runs next
// ([nous.Context.RunToolCalls]).
//
// A view Fill refuses is its [*Error], and nothing is sent. An error of the
// API changes nothing. A response Message cannot read has its usage added,
// as it is billed all the same, and its message is not; its error is
// returned.
func Send(ctx context.Context, client *genai.Client, params Params, c *nous.Context) (nous.Message, error) {
	if client == nil {
		return nous.Message{}, errors.New("gemini: Send needs a client")
	}
	return adapt.Send(c, nous.Step{Provider: Provider, Model: params.Model}, params, Fill, func(p Params) (*genai.GenerateContentResponse, error) {
		return client.Models.GenerateContent(ctx, p.Model, p.Contents, p.Config)
	}, Message)
}
