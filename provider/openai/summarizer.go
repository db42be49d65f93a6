package openai

import (
	"context"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrNoSummary reports a summarizer's reply that has no text to make a
// summary of (only tool calls or reasoning, blank text, or a refusal).
var ErrNoSummary = errors.New("the reply has no summary text")

// ChatSummarizer is a [nous.UsageSummarizer] that asks a model for the
// summary through Chat Completions: a request of Params with Prompt as its
// system prompt and the transcript of the range ([nous.Transcript]) as its
// one user message, filled by [FillChat]. Its fields are read, never
// written, so one ChatSummarizer may serve several goroutines.
type ChatSummarizer struct {
	// Client sends the request.
	Client openai.Client
	// Params is the request but for its messages (model, max tokens, ...);
	// each call sends a copy with the messages filled in.
	Params openai.ChatCompletionNewParams
	// Prompt is the instruction; [nous.DefaultSummaryPrompt] when blank.
	Prompt string
}

var _ nous.UsageSummarizer = (*ChatSummarizer)(nil)

// NewChatSummarizer returns a [ChatSummarizer] that sends params through
// client with the default prompt.
func NewChatSummarizer(client openai.Client, params openai.ChatCompletionNewParams) *ChatSummarizer {
	return &ChatSummarizer{Client: client, Params: params}
}

// Summarize implements [nous.Summarizer]: [ChatSummarizer.SummarizeUsage]
// without the usage.
func (s *ChatSummarizer) Summarize(ctx context.Context, dropped []nous.Message) (nous.Message, error) {
	m, _, err := s.SummarizeUsage(ctx, dropped)
	return m, err
}

// SummarizeUsage implements [nous.UsageSummarizer]: it returns the
// [nous.SummaryMessage] of the reply's text and the reply's usage (with no
// tool calls: the reply's, if Params offers tools, are never run). An
// error wraps the SDK's, [ChatMessage]'s or [ErrNoSummary], and comes with
// the usage billed (none when the request failed).
func (s *ChatSummarizer) SummarizeUsage(ctx context.Context, dropped []nous.Message) (nous.Message, nous.Usage, error) {
	return adapt.Summarize(Provider, s.Prompt, dropped, ErrNoSummary, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params
		if err := FillChat(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Chat.Completions.New(ctx, params)
		if err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		return ChatMessage(resp)
	})
}

// ResponsesSummarizer is [ChatSummarizer] through the Responses API: the
// request is filled by [FillResponses] and read by [ResponseMessage].
type ResponsesSummarizer struct {
	// Client sends the request.
	Client openai.Client
	// Params is the request but for its input (model, max output tokens,
	// store, ...); each call sends a copy with the input filled in.
	Params responses.ResponseNewParams
	// Prompt is the instruction; [nous.DefaultSummaryPrompt] when blank.
	Prompt string
}

var _ nous.UsageSummarizer = (*ResponsesSummarizer)(nil)

// NewResponsesSummarizer returns a [ResponsesSummarizer] that sends params
// through client with the default prompt.
func NewResponsesSummarizer(client openai.Client, params responses.ResponseNewParams) *ResponsesSummarizer {
	return &ResponsesSummarizer{Client: client, Params: params}
}

// Summarize implements [nous.Summarizer]:
// [ResponsesSummarizer.SummarizeUsage] without the usage.
func (s *ResponsesSummarizer) Summarize(ctx context.Context, dropped []nous.Message) (nous.Message, error) {
	m, _, err := s.SummarizeUsage(ctx, dropped)
	return m, err
}

// SummarizeUsage implements [nous.UsageSummarizer] as
// [ChatSummarizer.SummarizeUsage] does; an error may also wrap
// [ResponseMessage]'s [ErrFailed].
func (s *ResponsesSummarizer) SummarizeUsage(ctx context.Context, dropped []nous.Message) (nous.Message, nous.Usage, error) {
	return adapt.Summarize(Provider, s.Prompt, dropped, ErrNoSummary, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params
		if err := FillResponses(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Responses.New(ctx, params)
		if err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		return ResponseMessage(resp)
	})
}
