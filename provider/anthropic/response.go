package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Message returns the assistant message and the usage of a Messages API
// response. Text blocks become its Content (one block) or text parts (with
// thinking, or several); thinking and redacted thinking blocks become
// thinking parts marked as Anthropic's, with their signature or data and a
// digest of their text ([ThinkingPart]), so that [Fill] sends them back as
// they came; tool use blocks become tool calls, their input bytes the
// arguments. A text block's citations are kept with its part
// ([OptionCitations]). The blocks of the API's own server tools (web
// search, web fetch, code execution and their results), and any other
// block, are kept as their JSON in Metadata[MetadataBlocks], for Fill
// alone: other providers do not see them. Metadata holds the response's
// stop_reason ([MetadataStopReason]) and model, and, when the blocks did not
// come as thinking, text, tool use (interleaved thinking, server tools),
// their order ([MetadataBlockOrder]), which Fill follows; so a turn the API
// paused (stop_reason "pause_turn") is sent back as it came. A nil resp is
// an error wrapping [ErrNoResponse]. (The API reports a request that failed
// as an HTTP error, which the SDK returns in place of a response.)
func Message(resp *anthropic.Message) (nous.Message, nous.Usage, error) {
	if resp == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("anthropic: Message: %w", ErrNoResponse)
	}
	m := nous.AssistantMessage("")
	var parts []nous.ContentPart
	var order adapt.Order
	var blocks []any // the JSON of the blocks kept whole
	thinking := false
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			order.Add(keyText, rankText)
			parts = append(parts, textPart(&b))
		case "thinking", "redacted_thinking":
			order.Add(keyThinking, rankThinking)
			parts = append(parts, thinkingPart(&b))
			thinking = true
		case "tool_use":
			order.Add(keyToolUse+b.ID, rankToolUse)
			m.ToolCalls = append(m.ToolCalls, toolCall(&b))
		default:
			if raw := rawJSON(b.RawJSON(), b); raw != "" {
				order.AddWhole(fmt.Sprint(keyKept, len(blocks)))
				blocks = append(blocks, raw)
			}
		}
	}
	if len(parts) == 1 && !thinking && parts[0].Options == nil {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{MetadataStopReason: string(resp.StopReason), metaModel: string(resp.Model)}
	if len(blocks) > 0 {
		m.Metadata[MetadataBlocks] = blocks
	}
	if keys := order.Keys(); keys != nil {
		m.Metadata[MetadataBlockOrder] = keys
	}
	u := Usage(resp.Usage)
	u.ToolCalls = len(m.ToolCalls)
	return m, u, nil
}

// textPart returns the text part of a text block, with its citations.
func textPart(b *anthropic.ContentBlockUnion) nous.ContentPart {
	p := nous.TextPart(b.Text)
	if len(b.Citations) > 0 {
		p.Options = map[string]any{optProvider: Provider, OptionCitations: citations(b)}
	}
	return p
}

// thinkingPart returns the thinking part of a thinking block, with its
// signature and the digest of its text, or of a redacted thinking block,
// with its data.
func thinkingPart(b *anthropic.ContentBlockUnion) nous.ContentPart {
	if b.Type == "redacted_thinking" {
		return nous.ContentPart{Type: nous.PartThinking, Options: map[string]any{optProvider: Provider, nous.OptionRedactedData: b.Data}}
	}
	return ThinkingPart(b.Thinking, b.Signature)
}

// toolCall returns the tool call of a tool use block: its input bytes as
// the arguments ({} when it has none), and its caller, when code made the
// call, and toolset in Metadata.
func toolCall(b *anthropic.ContentBlockUnion) nous.ToolCall {
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
			tc.Metadata = map[string]any{MetadataCaller: string(extra.Caller)} // code that called it
		}
		if extra.ToolsetName != "" {
			if tc.Metadata == nil {
				tc.Metadata = map[string]any{}
			}
			tc.Metadata[MetadataToolset] = extra.ToolsetName
		}
	}
	return tc
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
