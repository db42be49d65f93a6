package openai

import (
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// reasoningOf is a reasoning item of an assistant message, as its thinking
// part has it: its ID, the item to send, the keys of the items that
// followed it, whether it can be sent, and whether it was.
type reasoningOf struct {
	id       string
	item     responses.ResponseInputItemUnionParam
	group    []string
	sendable bool
	placed   bool
}

// newReasoning returns the reasoning item of p, a thinking part from
// OpenAI. It can be sent when it has an ID (the API takes none without),
// is not marked [OptionUnsendable], and has its encrypted content or
// store is true: a reasoning item without its encrypted content is a
// reference to one the API stored, and with params.Store false the API
// stored none ("Items are not persisted when store is set to false").
func newReasoning(p *nous.ContentPart, store bool) reasoningOf {
	id, _ := p.Options[OptionItemID].(string)
	enc, _ := p.Options[nous.OptionEncryptedContent].(string)
	return reasoningOf{
		id: id, item: reasoningItem(p, id, enc), group: group(p),
		sendable: id != "" && p.Options[OptionUnsendable] != true && (store || enc != ""),
	}
}

// group returns the keys of the items that followed a reasoning item, as
// [ResponseMessage] recorded them: Options[OptionFollowedByAll], or the one
// of Options[OptionFollowedBy].
func group(p *nous.ContentPart) []string {
	if all, ok := p.Options[OptionFollowedByAll].([]any); ok {
		var keys []string
		for _, k := range all {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
		return keys
	}
	if f, _ := p.Options[OptionFollowedBy].(string); f != "" {
		return []string{f}
	}
	return nil
}

// reasoningItem returns the reasoning item a thinking part from OpenAI
// carries: its ID, summary parts and encrypted content (enc, when not "").
func reasoningItem(p *nous.ContentPart, id, enc string) responses.ResponseInputItemUnionParam {
	r := responses.ResponseReasoningItemParam{ID: id, Summary: []responses.ResponseReasoningItemSummaryParam{}}
	if parts, ok := p.Options[OptionSummary].([]any); ok {
		for _, t := range parts {
			if text, ok := t.(string); ok {
				r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: text})
			}
		}
	} else if !adapt.Blank(p.Content) {
		r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: p.Content})
	}
	if enc != "" {
		r.EncryptedContent = openai.String(enc)
	}
	return responses.ResponseInputItemUnionParam{OfReasoning: &r}
}

// reasoningFor returns the ID of the reasoning item the output item of key
// came after in its response, as recorded (Metadata[MetadataReasoning]; ""
// for none), and lost true when that cannot be told. Without a record (the
// item was recorded before there was one, or another runtime made it):
// the last of the message's reasoning items that names key among its
// followers; none when the message has no reasoning from OpenAI (a
// response without reasoning, most likely); lost when it has some but none
// names key (the one it came after was removed).
func reasoningFor(recorded any, key string, reasoning []reasoningOf) (id string, lost bool) {
	if r, ok := recorded.(string); ok {
		return r, false
	}
	for _, r := range slices.Backward(reasoning) {
		if key != "" && slices.Contains(r.group, key) {
			return r.id, false
		}
	}
	return "", len(reasoning) > 0
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
		Options: map[string]any{nous.OptionProvider: Provider, OptionItemID: item.ID, OptionSummary: summary}}
	if item.EncryptedContent != "" {
		p.Options[nous.OptionEncryptedContent] = item.EncryptedContent
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
		p.Options[OptionFollowedByAll], p.Options[OptionUnsendable] = keys, true
	case len(keys) > 0:
		p.Options[OptionFollowedBy], p.Options[OptionFollowedByAll] = keys[0], keys
	}
	return p
}
