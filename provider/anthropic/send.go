package anthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Send is one model call of a loop on the Messages API: a copy of params
// filled from c by [Fill] (so params may be the same base for every call),
// sent through client with opts, the response read by [Message], its
// message added to c, and the step ended with its usage
// ([nous.Context.EndStep]: c.Usage, and a step_end event that records
// it). It returns the message; its ToolCalls are what the loop runs next
// ([nous.Context.RunToolCalls]).
//
// A view Fill refuses is its [*Error], and nothing is sent. An error of the
// API changes nothing. A response Message cannot read has its usage added,
// as it is billed all the same, and its message is not; its error is
// returned.
func Send(ctx context.Context, client anthropic.Client, params anthropic.MessageNewParams, c *nous.Context, opts ...option.RequestOption) (nous.Message, error) {
	return adapt.Send(c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, Fill, func(p anthropic.MessageNewParams) (*anthropic.Message, error) {
		return client.Messages.New(ctx, p, opts...)
	}, Message)
}
