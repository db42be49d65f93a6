package gemini

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrNoSummary reports a summary call whose reply has no text: a reply of
// thoughts or function calls alone, or no candidate (then the error wraps
// [ErrNoCandidate] too).
var ErrNoSummary = errors.New("the reply has no summary text")

// Summarizer is a [nous.UsageSummarizer] that asks a Gemini model for the
// summary of a compacted range, with the request [Fill] makes.
//
// Client is the SDK client, as genai.NewClient returns it. Params is the
// request: its Model and Config (max output tokens, temperature, and
// whatever else the caller sets, tools too, so give one without them) are
// sent as they are; Contents and the system instruction are the
// summarizer's, filled on a copy each call, so the caller's Params and
// Config are never written and one Summarizer serves many calls at once.
// Prompt is the instruction, the request's system instruction;
// [nous.DefaultSummaryPrompt] when empty.
type Summarizer struct {
	Client *genai.Client
	Params Params
	Prompt string
}

var _ nous.UsageSummarizer = (*Summarizer)(nil)

// NewSummarizer returns a Summarizer of client and params, with the
// default prompt.
func NewSummarizer(client *genai.Client, params Params) *Summarizer {
	return &Summarizer{Client: client, Params: params}
}

// Summarize implements [nous.Summarizer]: SummarizeUsage without the usage.
func (s *Summarizer) Summarize(ctx context.Context, dropped []nous.Message) (nous.Message, error) {
	m, _, err := s.SummarizeUsage(ctx, dropped)
	return m, err
}

// SummarizeUsage implements [nous.UsageSummarizer]: it sends the prompt as
// the system instruction and [nous.Transcript] of dropped as the one user
// message, and returns [nous.SummaryMessage] of the reply's text (a user
// message) and the reply's usage. An error wraps the SDK's (with no usage:
// the API reported none) or [ErrNoSummary] (with the usage of the reply,
// which was billed). It touches no context but the one it builds for the
// request, so it may run on any goroutine.
func (s *Summarizer) SummarizeUsage(ctx context.Context, dropped []nous.Message) (nous.Message, nous.Usage, error) {
	if s == nil || s.Client == nil {
		return nous.Message{}, nous.Usage{}, errors.New("gemini: a Summarizer needs a client")
	}
	return adapt.Summarize(Provider, s.Prompt, dropped, ErrNoSummary, func(c *nous.Context) (nous.Message, nous.Usage, error) {
		params := s.Params // Fill writes Contents and a copy of Config, not the caller's
		if err := Fill(&params, c); err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		resp, err := s.Client.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config)
		if err != nil {
			return nous.Message{}, nous.Usage{}, err
		}
		m, u, err := Message(resp)
		if err != nil { // no candidate: Message gives the usage, billed all the same
			err = fmt.Errorf("%w: %w", ErrNoSummary, err)
		}
		return m, u, err
	})
}
