package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
)

// Message returns the assistant message and the usage of a Messages API
// response. Text blocks become its Content (one block) or text parts (with
// thinking, or several); thinking and redacted thinking blocks become
// thinking parts marked as Anthropic's, with their signature or data and a
// digest of their text, so that [Fill] sends them back as they came; tool
// use blocks become tool calls, their input bytes the arguments. A text
// block's citations are kept with its part (Options["citations"], their
// JSON). The blocks of the API's own server tools (web search, web fetch,
// code execution and their results), and any other block, are kept as
// their JSON in Metadata["anthropic_blocks"], for Fill alone: other
// providers do not see them. Metadata holds the response's stop_reason and
// model, and, when the blocks did not come as thinking, text, tool use
// (interleaved thinking, server tools), their order, which Fill follows; so
// a turn the API paused (stop_reason "pause_turn") is sent back as it came.
func Message(resp *anthropic.Message) (nous.Message, nous.Usage) {
	m := nous.AssistantMessage("")
	if resp == nil {
		return m, nous.Usage{}
	}
	var parts []nous.ContentPart
	var order []any  // the kinds of the blocks kept, in order
	var blocks []any // the JSON of the blocks kept whole
	thinking := false
	for _, b := range resp.Content {
		switch b.Type {
		case "text", "thinking", "redacted_thinking":
			order = append(order, kindOf(b.Type))
		case "tool_use":
			order = append(order, "tool_use:"+b.ID)
		default:
			if raw := rawJSON(b.RawJSON(), b); raw != "" {
				order = append(order, fmt.Sprint("block:", len(blocks)))
				blocks = append(blocks, raw)
			}
		}
		switch b.Type {
		case "text":
			p := nous.TextPart(b.Text)
			if len(b.Citations) > 0 {
				p.Options = map[string]any{optProvider: Provider, optCitations: citations(&b)}
			}
			parts = append(parts, p)
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
			tc := nous.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}
			var extra struct {
				Caller      json.RawMessage `json:"caller"`
				ToolsetName string          `json:"toolset_name"`
			}
			if json.Unmarshal([]byte(b.RawJSON()), &extra) == nil {
				var caller struct{ Type string }
				if json.Unmarshal(extra.Caller, &caller) == nil && caller.Type != "" && caller.Type != "direct" {
					tc.Metadata = map[string]any{metaCaller: string(extra.Caller)} // code that called it
				}
				if extra.ToolsetName != "" {
					if tc.Metadata == nil {
						tc.Metadata = map[string]any{}
					}
					tc.Metadata[metaToolset] = extra.ToolsetName
				}
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	if len(parts) == 1 && !thinking && parts[0].Options == nil {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{"stop_reason": string(resp.StopReason), "model": string(resp.Model)}
	if len(blocks) > 0 {
		m.Metadata[metaBlocks] = blocks
	}
	if len(blocks) > 0 || !canonical(order) {
		m.Metadata[metaOrder] = order
	}
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

// rawJSON returns raw, the JSON of a value as the response had it, or v
// encoded when the value was made in Go rather than decoded; "" when it
// cannot be encoded.
func rawJSON(raw string, v any) string {
	if raw != "" {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// citations returns the JSON of a text block's citations: from the block's
// JSON, which a streamed message's Accumulate brings up to date with every
// citation delta (the field's own raw JSON keeps what the block started
// with), or encoded when the block was made in Go.
func citations(b *anthropic.ContentBlockUnion) string {
	var v struct {
		Citations json.RawMessage `json:"citations"`
	}
	if json.Unmarshal([]byte(b.RawJSON()), &v) == nil && len(v.Citations) > 0 && string(v.Citations) != "null" {
		return string(v.Citations)
	}
	return rawJSON("", b.Citations)
}

// kindOf returns the kind of a block as the order of a message records it.
func kindOf(typ string) string {
	if typ == "redacted_thinking" {
		return "thinking"
	}
	return typ
}

// canonical reports whether the blocks of order come as Fill sends them by
// default: thinking, then text, then tool use.
func canonical(order []any) bool {
	rank := func(k any) int {
		switch s, _ := k.(string); {
		case s == "thinking":
			return 0
		case s == "text":
			return 1
		}
		return 2
	}
	for i := 1; i < len(order); i++ {
		if rank(order[i]) < rank(order[i-1]) {
			return false
		}
	}
	return true
}
