package anthropic

import (
	"context"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrNoSummary reports a summary reply that holds no text (a model that
// answered with thinking or a tool call only, or ran out of tokens before
// its text).
var ErrNoSummary = errors.New("the reply holds no summary text")

// Summarizer is a [nous.UsageSummarizer] that has a Claude model write the
// summary of a compacted range, for [nous.WithSummarizer]. It holds no
// state of its own but its fields, which it only reads: one Summarizer may
// serve any number of contexts, on any goroutines, as long as its fields
// are not changed meanwhile.
type Summarizer struct {
	// Client sends the request.
	Client anthropic.Client
	// Params are the request's model, max tokens and any other setting;
	// each call fills a copy of them with [Fill], which sets its System
	// and Messages (and may set its Thinking), so Params itself is never
	// changed. Tools given here are sent too: a model that calls one in
	// place of answering gives no summary ([ErrNoSummary]).
	Params anthropic.MessageNewParams
	// Prompt is the system prompt of the request, the instruction the
	// model follows; [nous.DefaultSummaryPrompt] when empty.
	Prompt string
}

var _ nous.UsageSummarizer = (*Summarizer)(nil)

// NewSummarizer returns a Summarizer of client and params with the default
// prompt.
func NewSummarizer(client anthropic.Client, params anthropic.MessageNewParams) *Summarizer {
	return &Summarizer{Client: client, Params: params}
}

// Summarize implements [nous.Summarizer]: [Summarizer.SummarizeUsage]
// without the usage.
func (s *Summarizer) Summarize(ctx context.Context, dropped []nous.Message) (nous.Message, error) {
	m, _, err := s.SummarizeUsage(ctx, dropped)
	return m, err
}

// SummarizeUsage implements [nous.UsageSummarizer]: it sends the model one
// user message, [nous.Transcript] of dropped, under Prompt as the system
// prompt, filled by [Fill] like any request of this package, and returns
// [nous.SummaryMessage] of the reply's text (a user message) and the
// reply's usage. An error wraps the SDK's (an HTTP error: nothing billed,
// a zero usage) or [ErrNoSummary] (returned with the usage of the reply).
// It touches no context but the one it builds for the request.
func (s *Summarizer) SummarizeUsage(ctx context.Context, dropped []nous.Message) (nous.Message, nous.Usage, error) {
	return adapt.Summarize(Provider, s.Prompt, dropped, ErrNoSummary, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params // a copy: what Fill sets is this request's only
		if err := Fill(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Messages.New(ctx, params)
		if err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		return Message(resp)
	})
}
