package openai

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// SendChat is one model call of a loop on Chat Completions: a copy of
// params filled from c by [FillChat], sent through client with opts, the
// response read by [ChatMessage], its message added to c, and the step
// ended with its usage ([nous.Context.EndStep]: c.Usage, and a step_end
// event that records it). It returns the message; its ToolCalls are what
// the loop runs next ([nous.Context.RunToolCalls]).
//
// A view FillChat refuses is its [*Error], and nothing is sent. An error of
// the API changes nothing. A response ChatMessage cannot read has its usage
// added, as it is billed all the same, and its message is not; its error is
// returned.
func SendChat(ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams, c *nous.Context, opts ...option.RequestOption) (nous.Message, error) {
	return adapt.Send(c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, FillChat, func(p openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
		return client.Chat.Completions.New(ctx, p, opts...)
	}, ChatMessage)
}

// SendResponses is [SendChat] on the Responses API: params filled by
// [FillResponses], the response read by [ResponseMessage].
func SendResponses(ctx context.Context, client openai.Client, params responses.ResponseNewParams, c *nous.Context, opts ...option.RequestOption) (nous.Message, error) {
	return adapt.Send(c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, FillResponses, func(p responses.ResponseNewParams) (*responses.Response, error) {
		return client.Responses.New(ctx, p, opts...)
	}, ResponseMessage)
}
