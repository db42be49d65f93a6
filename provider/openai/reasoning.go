package openai

import (
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// reasoningOf is a reasoning item to send, the keys of the items that
// followed it, and whether it was sent.
type reasoningOf struct {
	item  responses.ResponseInputItemUnionParam
	group []string
	sent  bool
}

// group returns the keys of the items that followed a reasoning item, as
// [ResponseMessage] recorded them: Options["followed_by_all"], or the one
// of Options["followed_by"].
func group(p *nous.ContentPart) []string {
	var keys []string
	if all, ok := p.Options[optGroup].([]any); ok {
		for _, k := range all {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
		return keys
	}
	if f, _ := p.Options[optFollowedBy].(string); f != "" {
		keys = append(keys, f)
	}
	return keys
}

// reasoningItem returns the reasoning item a thinking part from OpenAI
// carries: its ID, summary parts and encrypted content.
func reasoningItem(p *nous.ContentPart) responses.ResponseInputItemUnionParam {
	id, _ := p.Options[optItemID].(string)
	r := responses.ResponseReasoningItemParam{ID: id, Summary: []responses.ResponseReasoningItemSummaryParam{}}
	if parts, ok := p.Options[optSummary].([]any); ok {
		for _, t := range parts {
			if text, ok := t.(string); ok {
				r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: text})
			}
		}
	} else if !adapt.Blank(p.Content) {
		r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: p.Content})
	}
	if enc, _ := p.Options[optEncrypted].(string); enc != "" {
		r.EncryptedContent = openai.String(enc)
	}
	return responses.ResponseInputItemUnionParam{OfReasoning: &r}
}

// reasoningPart returns the thinking part of the reasoning item output[k]:
// its summary (the parts' texts in Options, joined as Content, for
// reading), ID, encrypted content, and the items that followed it, past any
// other reasoning item right after it and up to the next one: function
// calls' IDs, message and image items' IDs. When the item that followed it
// is one a message does not keep (a hosted tool's call), it cannot go back,
// and the items after it go without their IDs: it is marked so.
func reasoningPart(output []responses.ResponseOutputItemUnion, k int) nous.ContentPart {
	item := output[k]
	var summary []any
	var joined []string
	for _, s := range item.Summary {
		summary, joined = append(summary, s.Text), append(joined, s.Text)
	}
	p := nous.ContentPart{Type: nous.PartThinking, Content: strings.Join(joined, "\n\n"),
		Options: map[string]any{optProvider: Provider, optItemID: item.ID, optSummary: summary}}
	if item.EncryptedContent != "" {
		p.Options[optEncrypted] = item.EncryptedContent
	}
	var keys []any // the items up to the next reasoning item, past those right after it
	hosted := false
	for i, next := range output[k+1:] {
		if next.Type == "reasoning" {
			if i > 0 && output[k+i].Type != "reasoning" {
				break
			}
			continue
		}
		switch next.Type {
		case "message", "image_generation_call":
			keys = append(keys, next.ID)
		case "function_call", "custom_tool_call":
			keys = append(keys, next.CallID)
		default:
			if len(keys) == 0 {
				hosted = true // its follower is an item a message does not keep
			}
		}
	}
	switch {
	case hosted && len(keys) > 0:
		p.Options[optGroup], p.Options[optUnsendable] = keys, true
	case len(keys) > 0:
		p.Options[optFollowedBy], p.Options[optGroup] = keys[0], keys
	}
	return p
}
