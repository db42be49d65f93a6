// Package tiktoken counts the tokens of nous messages exactly, with
// OpenAI's o200k_base vocabulary (the GPT-4o, GPT-4.1, GPT-5 and o-series
// models), offline: the vocabulary is compiled in. A [*Counter] is a
// [nous.TokenCounter] for compaction:
//
//	counter, err := tiktoken.New()
//	plan, err := c.PlanCompaction(budget, nous.WithTokenCounter(counter))
//
// A message costs the tokens of its text, reasoning, thinking, tool names,
// arguments and IDs, plus the framing the Chat format adds: 3 tokens per
// message, 1 more with a name, 3 per tool call. Images and files cost
// [nous.ApproxAttachmentTokens] each, as their real cost depends on the
// model and the detail asked for.
package tiktoken

import (
	"github.com/tiktoken-go/tokenizer"

	"github.com/nous-go/nous"
)

// Framing, as the Chat format adds it.
const (
	MessageTokens  = 3 // per message
	NameTokens     = 1 // for a message with a name
	ToolCallTokens = 3 // per tool call
)

// Counter counts tokens with the o200k_base vocabulary. It is safe for
// concurrent use.
type Counter struct {
	codec tokenizer.Codec
}

// New returns a Counter.
func New() (*Counter, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, err
	}
	return &Counter{codec: codec}, nil
}

// Text returns the number of tokens of s.
func (c *Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.codec.Count(s)
	if err != nil { // invalid UTF-8: a token a byte, an upper bound
		return len(s)
	}
	return n
}

// CountTokens implements [nous.TokenCounter].
func (c *Counter) CountTokens(m nous.Message) int {
	n := MessageTokens + c.Text(string(m.Role)) + c.Text(m.Content) + c.Text(m.ReasoningContent) + c.Text(m.ToolCallID)
	if m.Name != "" {
		n += NameTokens + c.Text(m.Name)
	}
	for _, p := range m.Parts {
		switch p.Type {
		case nous.PartText, nous.PartThinking:
			n += c.Text(p.Content)
		default:
			n += nous.ApproxAttachmentTokens
		}
	}
	for _, tc := range m.ToolCalls {
		n += ToolCallTokens + c.Text(tc.ID) + c.Text(tc.Name) + c.Text(string(tc.Arguments))
	}
	return n
}
