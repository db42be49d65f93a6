package openai

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
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
	return summarize(s.Prompt, dropped, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params
		if err := FillChat(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Chat.Completions.New(ctx, params)
		if err != nil {
			return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: summary request: %w", err)
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
	return summarize(s.Prompt, dropped, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params
		if err := FillResponses(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Responses.New(ctx, params)
		if err != nil {
			return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: summary request: %w", err)
		}
		return ResponseMessage(resp)
	})
}

// summarize is what both summarizers share: it builds a context of its own
// (the prompt as its system prompt, the transcript of dropped as its one
// user message), has send fill, send and read the request, and makes the
// summary of the reply's text. A refusal is no summary: its text would
// take the conversation's place. The usage counts no tool call: the
// reply's calls, if the caller's params offer tools, are never run.
func summarize(prompt string, dropped []nous.Message, send func(*nous.Context) (nous.Message, nous.Usage, error)) (nous.Message, nous.Usage, error) {
	if strings.TrimSpace(prompt) == "" {
		prompt = nous.DefaultSummaryPrompt
	}
	c := nous.NewContext(nous.WithSystemPrompt(prompt))
	if err := c.AddMessage(nous.UserMessage(nous.Transcript(dropped))); err != nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: summarize %d messages: %w", len(dropped), err)
	}
	m, u, err := send(c)
	u.ToolCalls = 0 // a call in the reply is never run
	if err != nil {
		return nous.Message{}, u, err
	}
	text := strings.TrimSpace(m.Text())
	if m.Metadata["refusal"] == true {
		return nous.Message{}, u, fmt.Errorf("openai: the model refused to summarize (%q): %w", text, ErrNoSummary)
	}
	if text == "" {
		return nous.Message{}, u, fmt.Errorf("openai: a summary reply without text: %w", ErrNoSummary)
	}
	return nous.SummaryMessage(text), u, nil
}
