package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ResponseMessage returns the assistant message and the usage of a
// Responses API response: the text of its message items (Content for one
// item, with its ID in Metadata; text parts for several, or with
// reasoning, each with its item's ID in Options), a refusal's text with
// Metadata["refusal"] true, its function calls as tool calls with their
// argument bytes and item IDs, and its reasoning items as thinking parts
// marked as OpenAI's, with their ID, encrypted content, summary parts and
// the items that followed them, so that [FillResponses] sends them back in
// their place; the images its image_generation_call items made as image
// parts marked as OpenAI's, with their item IDs; its custom tool calls as
// tool calls whose arguments are {"input": text} (Metadata[MetadataCustom]
// true), which go back as custom tool calls, their results as their
// outputs. Each item that came after a reasoning item records its ID
// ([MetadataReasoning]). The calls of hosted tools (web search, file
// search, code interpreter, MCP) are not kept; the client calls a message
// has no place for (computer, shell, apply patch, MCP approval requests)
// are kept as their JSON in Metadata[MetadataClientItems], for the runtime
// that runs them, and are not sent back. Metadata["model"] names the
// model.
//
// A nil response is an error wrapping [ErrNoResponse]; a response whose
// status is "failed" (its error set), one wrapping [ErrFailed] that quotes
// the API's error, returned with the response's usage, which is billed all
// the same. A response whose status is "incomplete" (it stopped at its
// output limit, or a content filter) is a message of what it made, with
// the reason in Metadata[MetadataIncompleteReason].
func ResponseMessage(resp *responses.Response) (nous.Message, nous.Usage, error) {
	if resp == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: a nil Responses API response: %w", ErrNoResponse)
	}
	u := ResponseUsage(resp.Usage)
	if resp.Status == responses.ResponseStatusFailed || resp.Error.Code != "" || resp.Error.Message != "" {
		return nous.Message{}, u, fmt.Errorf("openai: response %q failed: %s: %s: %w", resp.ID, resp.Error.Code, resp.Error.Message, ErrFailed)
	}
	m := nous.AssistantMessage("")
	m.Metadata = map[string]any{"model": resp.Model}
	if resp.Status == responses.ResponseStatusIncomplete {
		reason := resp.IncompleteDetails.Reason
		if reason == "" {
			reason = "unknown"
		}
		m.Metadata[MetadataIncompleteReason] = reason
	}
	var texts []nous.ContentPart // one per message item, marked with its ID
	var thinking, images []nous.ContentPart
	var order adapt.Order
	reasons := slices.ContainsFunc(resp.Output, func(o responses.ResponseOutputItemUnion) bool { return o.Type == "reasoning" })
	after := func(opts map[string]any, k int) { // records the reasoning item output[k] came after
		for j := k - 1; j >= 0; j-- {
			if resp.Output[j].Type == "reasoning" {
				opts[MetadataReasoning] = resp.Output[j].ID
				return
			}
		}
		if reasons {
			opts[MetadataReasoning] = "" // none, in a response with reasoning
		}
	}
	for k, item := range resp.Output {
		switch item.Type {
		case "message":
			p, refusal := messagePart(&item)
			if refusal {
				m.Metadata["refusal"] = true
			}
			after(p.Options, k)
			texts = append(texts, p)
			order.Add(item.ID, rankMessage)
		case "function_call", "custom_tool_call":
			tc := toolCall(&item)
			after(tc.Metadata, k)
			m.ToolCalls = append(m.ToolCalls, tc)
			order.Add(item.CallID, rankCall)
		case "computer_call", "local_shell_call", "shell_call", "apply_patch_call", "mcp_approval_request":
			// Calls of the client's that a message has no place for: kept
			// as they came, for the runtime that runs them; never sent back.
			kept, _ := m.Metadata[MetadataClientItems].([]any)
			m.Metadata[MetadataClientItems] = append(kept, item.RawJSON())
		case "reasoning":
			thinking = append(thinking, reasoningPart(resp.Output, k))
		case "image_generation_call":
			if item.Result == "" {
				order.Skip(rankImage) // no image, but an item out of place all the same
				continue
			}
			p := imagePart(&item)
			after(p.Options, k)
			images = append(images, p)
			order.Add(item.ID, rankImage)
		}
	}
	if len(texts) == 1 && len(thinking) == 0 && len(images) == 0 {
		m.Content = texts[0].Content
		m.Metadata[MetadataItemID] = texts[0].Options[MetadataItemID]
		if content, ok := texts[0].Options[MetadataContent]; ok {
			m.Metadata[MetadataContent] = content
		}
	} else {
		m.Parts = slices.Concat(thinking, images, texts)
	}
	if keys := order.Keys(); keys != nil {
		m.Metadata[MetadataItemOrder] = keys
	}
	u.ToolCalls = len(m.ToolCalls)
	return m, u, nil
}

// The ranks of output items in the layout [FillResponses] sends without an
// order: images, then message items, then function and custom tool calls.
const (
	rankImage   = 1
	rankMessage = 2
	rankCall    = 3
)

// messagePart returns the text part of a message item, marked with its ID,
// with its content parts when they are not one output_text without
// annotations; refusal reports whether one of them is a refusal.
func messagePart(item *responses.ResponseOutputItemUnion) (p nous.ContentPart, refusal bool) {
	var text strings.Builder
	var content []any // its parts, each {"type", "text", "json"}
	for _, c := range item.Content {
		switch c.Type {
		case "output_text":
			text.WriteString(c.Text)
			content = append(content, map[string]any{"type": c.Type, "text": c.Text, "json": c.RawJSON()})
		case "refusal":
			text.WriteString(c.Refusal)
			content = append(content, map[string]any{"type": c.Type, "text": c.Refusal, "json": c.RawJSON()})
			refusal = true
		}
	}
	p = nous.ContentPart{Type: nous.PartText, Content: text.String(), Options: map[string]any{MetadataItemID: item.ID}}
	if len(content) > 1 || len(content) == 1 && (item.Content[0].Type != "output_text" || len(item.Content[0].Annotations) > 0) {
		p.Options[MetadataContent] = content
	}
	return p, refusal
}

// toolCall returns the tool call of a function_call item, its argument
// bytes ({} for none) as the arguments, or of a custom_tool_call item, its
// arguments {"input": text} and Metadata[MetadataCustom] true.
func toolCall(item *responses.ResponseOutputItemUnion) nous.ToolCall {
	meta := callMetadata(item)
	if item.Type == "custom_tool_call" {
		args, _ := json.Marshal(map[string]string{"input": item.Input})
		meta[MetadataCustom] = true
		return nous.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args, Metadata: meta}
	}
	args := json.RawMessage(item.Arguments.OfString)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return nous.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args, Metadata: meta}
}

// callMetadata returns the Metadata of the tool call of a function or
// custom tool call item: its item ID, and its namespace and caller (the
// program that made it) when it has them.
func callMetadata(item *responses.ResponseOutputItemUnion) map[string]any {
	meta := map[string]any{MetadataItemID: item.ID}
	if item.Namespace != "" {
		meta[MetadataNamespace] = item.Namespace
	}
	if raw := item.JSON.Caller.Raw(); raw != "" && raw != "null" {
		var caller struct{ Type string }
		if json.Unmarshal([]byte(raw), &caller) == nil && caller.Type != "" {
			meta[MetadataCaller] = raw
		}
	}
	return meta
}

// imagePart returns the image part of an image_generation_call item: its
// base64 result, media type and item ID.
func imagePart(item *responses.ResponseOutputItemUnion) nous.ContentPart {
	format := item.OutputFormat
	if format == "" {
		format = "png"
	}
	return nous.ContentPart{Type: nous.PartImage, Content: item.Result,
		Options: map[string]any{nous.OptionProvider: Provider, "media_type": "image/" + format, MetadataItemID: item.ID}}
}

// ResponseUsage returns the usage of one Responses API response: Requests
// 1, InputTokens every prompt token (cached ones included), OutputTokens
// every generated one (reasoning included), the cache and reasoning counts
// as their breakdowns.
func ResponseUsage(u responses.ResponseUsage) nous.Usage {
	in, out := int(u.InputTokens), int(u.OutputTokens)
	return nous.Usage{
		Requests: 1, InputTokens: in, OutputTokens: out, TotalTokens: in + out,
		CacheReadInputTokens:     int(u.InputTokensDetails.CachedTokens),
		CacheCreationInputTokens: int(u.InputTokensDetails.CacheWriteTokens),
		ReasoningTokens:          int(u.OutputTokensDetails.ReasoningTokens),
	}
}
