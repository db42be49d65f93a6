package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// assistant returns the items of an assistant message, view message i: its
// images as image_generation_call items, its text as message items (one per
// text part an output item ID marks, one for the rest), then its tool calls
// as function_call items; or in the order the response had them, when
// [ResponseMessage] recorded it. A reasoning item goes directly before the
// first of the items that followed it in the response that is still in the
// message, and is dropped when none is, or when it cannot be sent (see
// [newReasoning]), or its ID was sent before. An item goes with its ID only
// when the reasoning item it came after goes too (the API refuses an item
// with its ID without it: "provided without its required 'reasoning'
// item") and no item before it in the request had that ID (the API refuses
// an item ID twice); an image generation item, whose ID is required, goes
// with it or not at all.
func (f *responsesFill) assistant(m *nous.Message, i int) ([]responses.ResponseInputItemUnionParam, error) {
	images, reasoning, err := assistantParts(m, f.store)
	if err != nil {
		return nil, err
	}
	entries := slices.Concat(images, textEntries(m), f.callEntries(m, i))
	for k := range entries {
		e := &entries[k]
		e.reasoning, e.lost = reasoningFor(e.recorded, e.key, reasoning)
	}
	return f.withReasoning(inOrder(m, entries), reasoning), nil
}

// entry is an item of an assistant message to send: an image or a call
// (item, without its ID), or a message item's text (with the content parts
// recorded); the key the order and the reasoning items name it by (also: a
// second one); its item ID; and the reasoning item it came after, as
// recorded and as told.
type entry struct {
	key, also string
	id        string
	item      responses.ResponseInputItemUnionParam
	text      string
	content   any
	recorded  any    // its Metadata[MetadataReasoning]
	reasoning string // the ID of the reasoning item it came after, "" for none
	lost      bool   // which one cannot be told
}

// assistantParts returns, of an assistant message's parts, the entries of
// the images OpenAI made (with their item IDs) and the reasoning items,
// those that can be sent and those that cannot (see [newReasoning]); an
// error for a part an assistant turn cannot hold (another model's image or
// file is dropped, and so is an image OpenAI made without an item ID,
// which an image generation item cannot go without).
func assistantParts(m *nous.Message, store bool) (images []entry, reasoning []reasoningOf, err error) {
	for k, p := range m.Parts {
		ours := p.Options[nous.OptionProvider] == Provider
		switch {
		case p.Type == nous.PartText:
		case p.Type == nous.PartThinking:
			if ours {
				reasoning = append(reasoning, newReasoning(&p, store))
			} // another provider's thinking the API cannot take
		case p.Type == nous.PartImage && ours:
			if id, _ := p.Options[MetadataItemID].(string); id != "" {
				images = append(images, entry{key: id, id: id, recorded: p.Options[MetadataReasoning],
					item: responses.ResponseInputItemUnionParam{OfImageGenerationCall: &responses.ResponseInputItemImageGenerationCallParam{
						ID: id, Result: openai.String(p.Content), Status: "completed"}}})
			}
		case adapt.Foreign(&p, Provider):
			// another model's image or file, which an assistant turn cannot hold here
		default:
			return nil, nil, fmt.Errorf("part %d: a %s part in an assistant message (the API takes text, calls and the images of its own "+
				"image generation there; move it to a user message): %w", k, p.Type, ErrUnsupported)
		}
	}
	return images, reasoning, nil
}

// textEntries returns the entries of an assistant message's text: one for
// each text part an output item ID marks, then one for the rest, under the
// message's item ID (when it has one); blank text is not sent.
func textEntries(m *nous.Message) []entry {
	var out []entry
	for _, p := range m.Parts {
		if id, _ := p.Options[MetadataItemID].(string); p.Type == nous.PartText && id != "" && !adapt.Blank(p.Content) {
			out = append(out, entry{key: id, id: id, text: p.Content, content: p.Options[MetadataContent], recorded: p.Options[MetadataReasoning]})
		}
	}
	var rest []string // the text no item ID marks
	if !adapt.Blank(m.Content) {
		rest = append(rest, m.Content)
	}
	for _, p := range m.Parts {
		if id, _ := p.Options[MetadataItemID].(string); p.Type == nous.PartText && id == "" && !adapt.Blank(p.Content) {
			rest = append(rest, p.Content)
		}
	}
	if len(rest) > 0 {
		id, _ := m.Metadata[MetadataItemID].(string)
		out = append(out, entry{key: id, also: "message", id: id, text: strings.Join(rest, ""),
			content: m.Metadata[MetadataContent], recorded: m.Metadata[MetadataReasoning]})
	}
	return out
}

// callEntries returns the entries of the tool calls of view message m:
// function_call items, or custom_tool_call items for a custom tool's, under
// the call IDs f sends, keyed by their own.
func (f *responsesFill) callEntries(m *nous.Message, i int) []entry {
	var out []entry
	for k, tc := range m.ToolCalls {
		id := f.ids.Call(i, k, tc.ID)
		var item responses.ResponseInputItemUnionParam
		if isCustom(&tc) {
			item = customCall(&tc, id)
			f.custom[id] = true
		} else {
			item = functionCall(&tc, id)
		}
		itemID, _ := tc.Metadata[MetadataItemID].(string)
		out = append(out, entry{key: tc.ID, id: itemID, item: item, recorded: tc.Metadata[MetadataReasoning]})
	}
	return out
}

// functionCall returns the function_call item of a tool call, under the
// call ID callID, without its item ID, with its namespace and caller.
func functionCall(tc *nous.ToolCall, callID string) responses.ResponseInputItemUnionParam {
	call := responses.ResponseFunctionToolCallParam{CallID: callID, Name: adapt.Name(tc.Name), Arguments: arguments(tc)}
	if ns, _ := tc.Metadata[MetadataNamespace].(string); ns != "" {
		call.Namespace = openai.String(ns)
	}
	if caller, ok := callerOf(tc); ok {
		call.Caller = param.Override[responses.ResponseFunctionToolCallCallerUnionParam](caller)
	}
	return responses.ResponseInputItemUnionParam{OfFunctionCall: &call}
}

// customCall returns the custom_tool_call item of a custom tool's call,
// under the call ID callID, without its item ID, with its namespace and
// caller.
func customCall(tc *nous.ToolCall, callID string) responses.ResponseInputItemUnionParam {
	call := responses.ResponseCustomToolCallParam{CallID: callID, Name: adapt.Name(tc.Name), Input: customInput(tc)}
	if ns, _ := tc.Metadata[MetadataNamespace].(string); ns != "" {
		call.Namespace = openai.String(ns)
	}
	if caller, ok := callerOf(tc); ok {
		call.Caller = param.Override[responses.ResponseCustomToolCallCallerUnionParam](caller)
	}
	return responses.ResponseInputItemUnionParam{OfCustomToolCall: &call}
}

// inOrder returns the entries of an assistant message in the order
// [ResponseMessage] recorded, each where the order first names its key;
// what the order does not name (the message was changed) comes after, as
// it was.
func inOrder(m *nous.Message, entries []entry) []entry {
	slots := make([]adapt.Slot[entry], len(entries))
	for i, e := range entries {
		slots[i] = adapt.Slot[entry]{Item: e, Key: e.key}
	}
	out, _ := adapt.Replay(adapt.Recorded(m.Metadata[MetadataItemOrder]), slots, nil) // no error without items kept whole
	return out
}

// withReasoning returns the items of entries, each reasoning item that can
// be sent directly before the first of them it precedes; each item with
// its ID when the reasoning item it came after went before it and no item
// sent so far had the ID, and without it otherwise (an image, whose ID is
// required, not at all).
func (f *responsesFill) withReasoning(entries []entry, reasoning []reasoningOf) []responses.ResponseInputItemUnionParam {
	var items []responses.ResponseInputItemUnionParam
	placed := map[string]bool{} // the reasoning items sent before this entry
	for _, e := range entries {
		var before []int // the reasoning items to send right before e
		ids := map[string]bool{}
		for k, r := range reasoning {
			if !r.placed && r.sendable && !f.itemIDs[r.id] && !ids[r.id] && r.precedes(&e) {
				before, ids[r.id] = append(before, k), true
			}
		}
		keep := e.id != "" && !e.lost && !f.itemIDs[e.id] && (e.reasoning == "" || placed[e.reasoning] || ids[e.reasoning])
		image := e.item.OfImageGenerationCall != nil
		if image && !keep {
			continue // the image stays in the message, but not in the request
		}
		for _, k := range before {
			r := &reasoning[k]
			items, r.placed, placed[r.id], f.itemIDs[r.id] = append(items, r.item), true, true, true
		}
		id := ""
		if keep {
			id, f.itemIDs[e.id] = e.id, true
		}
		switch {
		case image:
			items = append(items, e.item)
		case e.item.OfFunctionCall != nil:
			call := *e.item.OfFunctionCall
			if id != "" {
				call.ID = openai.String(id)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &call})
		case e.item.OfCustomToolCall != nil:
			call := *e.item.OfCustomToolCall
			if id != "" {
				call.ID = openai.String(id)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfCustomToolCall: &call})
		case id != "":
			items = append(items, outputMessage(id, e.text, e.content))
		default:
			items = append(items, responses.ResponseInputItemParamOfMessage(e.text, responses.EasyInputMessageRoleAssistant))
		}
	}
	return items
}

// precedes reports whether r goes before e: e is among the items that
// followed it, or came after it by its record.
func (r *reasoningOf) precedes(e *entry) bool {
	return e.key != "" && slices.Contains(r.group, e.key) || e.also != "" && slices.Contains(r.group, e.also) ||
		e.reasoning != "" && e.reasoning == r.id
}

// outputMessage returns an output message item of the model's, with its
// ID: its content parts as [ResponseMessage] recorded them (refusals among
// them) when they still make up text, or text as one output_text part.
func outputMessage(id, text string, recorded any) responses.ResponseInputItemUnionParam {
	var content []responses.ResponseOutputMessageContentUnionParam
	var joined strings.Builder
	list, _ := recorded.([]any)
	for _, r := range list {
		part, _ := r.(map[string]any)
		t, _ := part["text"].(string)
		joined.WriteString(t)
		raw, _ := part["json"].(string)
		switch {
		case raw != "" && json.Valid([]byte(raw)): // as it came, annotations and all
			content = append(content, param.Override[responses.ResponseOutputMessageContentUnionParam](json.RawMessage(raw)))
		case part["type"] == "refusal":
			content = append(content, responses.ResponseOutputMessageContentUnionParam{OfRefusal: &responses.ResponseOutputRefusalParam{Refusal: t}})
		default:
			content = append(content, responses.ResponseOutputMessageContentUnionParam{OfOutputText: &responses.ResponseOutputTextParam{
				Text: t, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}})
		}
	}
	if len(content) == 0 || joined.String() != text {
		content = []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
			Text: text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}}}
	}
	return responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
		ID: id, Status: responses.ResponseOutputMessageStatusCompleted, Content: content}}
}

// callerOf returns the JSON of the caller a tool call keeps, when it is an
// object with a type.
func callerOf(tc *nous.ToolCall) (json.RawMessage, bool) {
	raw, _ := tc.Metadata[MetadataCaller].(string)
	var caller struct{ Type string }
	if raw == "" || json.Unmarshal([]byte(raw), &caller) != nil || caller.Type == "" {
		return nil, false
	}
	return json.RawMessage(raw), true
}
