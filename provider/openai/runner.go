package openai

import (
	"context"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ChatModel is a [nous.Model] on Chat Completions: what a runner (package
// github.com/nous-go/nous/agent) calls for the model's next reply. Each
// call is [SendChat], or [StreamChat] when the request streams, with the
// params and request options [NewChatModel] was given, and the request's
// tools added to theirs. A ChatModel is never changed after NewChatModel:
// each call fills a copy of the params, whose tools are a new slice, so
// one ChatModel serves concurrent calls (each on its own context).
type ChatModel struct {
	client openai.Client
	params openai.ChatCompletionNewParams
	opts   []option.RequestOption
}

var _ nous.Model = (*ChatModel)(nil)

// NewChatModel returns the [ChatModel] that sends params (the model, max
// tokens, tools of your own, ...; their messages are filled from the
// context, as [FillChat] does) through client with opts. The caller keeps
// params and opts: ChatModel reads them, and never writes to them.
func NewChatModel(client openai.Client, params openai.ChatCompletionNewParams, opts ...option.RequestOption) *ChatModel {
	return &ChatModel{client: client, params: params, opts: slices.Clone(opts)}
}

// Call implements [nous.Model]: req.Tools, as [ChatTools] converts them,
// go after the params' tools (the API refuses two tools of one name, so
// give a tool in one place only), and the request is sent by [SendChat],
// or streamed by [StreamChat] to req.OnDelta when it is set. A stream cut
// short adds its partial reply to c, when there is one, after the
// step_end, and returns it with an error wrapping [nous.ErrInterrupted].
// A tool that [ChatTools] refuses is an error wrapping
// [nous.ErrInvalidTool], and nothing is sent.
func (m *ChatModel) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	params := m.params
	if len(req.Tools) > 0 {
		tools, err := ChatTools(req.Tools...)
		if err != nil {
			return nous.Message{}, err
		}
		params.Tools = slices.Concat(m.params.Tools, tools)
	}
	return adapt.Call(c, req, func() (nous.Message, error) {
		return SendChat(ctx, m.client, params, c, m.opts...)
	}, func(onDelta func(nous.Delta)) (nous.Message, error) {
		return StreamChat(ctx, m.client, params, c, onDelta, m.opts...)
	})
}

// ResponsesModel is [ChatModel] on the Responses API: each call is
// [SendResponses], or [StreamResponses] when the request streams, with the
// params and request options [NewResponsesModel] was given, and the
// request's tools added to theirs. One ResponsesModel serves concurrent
// calls, as a ChatModel does.
type ResponsesModel struct {
	client openai.Client
	params responses.ResponseNewParams
	opts   []option.RequestOption
}

var _ nous.Model = (*ResponsesModel)(nil)

// NewResponsesModel returns the [ResponsesModel] that sends params (the
// model, max output tokens, store, tools of your own, ...; their input is
// filled from the context, as [FillResponses] does) through client with
// opts. The caller keeps params and opts: ResponsesModel reads them, and
// never writes to them.
func NewResponsesModel(client openai.Client, params responses.ResponseNewParams, opts ...option.RequestOption) *ResponsesModel {
	return &ResponsesModel{client: client, params: params, opts: slices.Clone(opts)}
}

// Call implements [nous.Model] as [ChatModel.Call] does, with the tools
// [ResponsesTools] converts, sent by [SendResponses] or streamed by
// [StreamResponses].
func (m *ResponsesModel) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	params := m.params
	if len(req.Tools) > 0 {
		tools, err := ResponsesTools(req.Tools...)
		if err != nil {
			return nous.Message{}, err
		}
		params.Tools = slices.Concat(m.params.Tools, tools)
	}
	return adapt.Call(c, req, func() (nous.Message, error) {
		return SendResponses(ctx, m.client, params, c, m.opts...)
	}, func(onDelta func(nous.Delta)) (nous.Message, error) {
		return StreamResponses(ctx, m.client, params, c, onDelta, m.opts...)
	})
}
