package anthropic

import (
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
)

// Message returns the assistant message and the usage of a Messages API
// response. Text blocks become its Content (one block) or text parts (with
// thinking, or several); thinking and redacted thinking blocks become
// thinking parts marked as Anthropic's, with their signature or data and a
// digest of their text, so that [Fill] sends them back as they came; tool
// use blocks become tool calls, their input bytes the arguments. Blocks of
// the API's own server tools are not kept. Metadata holds the response's
// stop_reason and model.
func Message(resp *anthropic.Message) (nous.Message, nous.Usage) {
	m := nous.AssistantMessage("")
	var parts []nous.ContentPart
	thinking := false
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			parts = append(parts, nous.TextPart(b.Text))
		case "thinking":
			thinking = true
			p := nous.ThinkingPart(b.Thinking, b.Signature)
			if p.Options == nil {
				p.Options = map[string]any{}
			}
			p.Options[optProvider], p.Options[optDigest] = Provider, digest(b.Thinking)
			parts = append(parts, p)
		case "redacted_thinking":
			thinking = true
			parts = append(parts, nous.ContentPart{Type: nous.PartThinking, Options: map[string]any{optProvider: Provider, optRedacted: b.Data}})
		case "tool_use":
			args := json.RawMessage(b.Input)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	if len(parts) == 1 && !thinking {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{"stop_reason": string(resp.StopReason), "model": string(resp.Model)}
	u := Usage(resp.Usage)
	u.ToolCalls = len(m.ToolCalls)
	return m, u
}

// Usage returns the usage of one response: Requests 1, InputTokens every
// prompt token (input, cache writes and cache reads), OutputTokens every
// generated one, thinking included, the cache and thinking counts as their
// breakdowns. ToolCalls is the caller's: [Message] sets it.
func Usage(u anthropic.Usage) nous.Usage {
	in := int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
	out := int(u.OutputTokens)
	return nous.Usage{
		Requests:                 1,
		InputTokens:              in,
		OutputTokens:             out,
		TotalTokens:              in + out,
		CacheCreationInputTokens: int(u.CacheCreationInputTokens),
		CacheReadInputTokens:     int(u.CacheReadInputTokens),
		ReasoningTokens:          int(u.OutputTokensDetails.ThinkingTokens),
	}
}
