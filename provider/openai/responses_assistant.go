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

// responseAssistant returns the items of an assistant message: its images
// as image_generation_call items, its text as message items (one per text
// part an output item ID marks, one for the rest), then its tool calls as
// function_call items; or in the order the response had them, when
// [ResponseMessage] recorded it. A reasoning item goes directly before the
// first of the items that followed it in the response (up to the next
// reasoning item) that is still in the message, for the API refuses such
// an item, sent with its ID, without the reasoning it came after; a
// reasoning item none of whose items is left is dropped, as the API
// refuses it alone. One that cannot go back (it came before a hosted
// tool's call, which a message does not keep) takes its items' IDs with it.
func responseAssistant(m *nous.Message) ([]responses.ResponseInputItemUnionParam, error) {
	images, reasoning, strip, err := assistantParts(m)
	if err != nil {
		return nil, err
	}
	calls, err := callEntries(m, strip)
	if err != nil {
		return nil, err
	}
	entries := inOrder(m, slices.Concat(images, textEntries(m), calls))
	return withReasoning(entries, reasoning, strip), nil
}

// entry is an item of an assistant message to send: an image or call item,
// or a message item's text (with the content parts recorded), and the key
// the order and the reasoning items name it by (also: a second one).
type entry struct {
	key, also string
	item      responses.ResponseInputItemUnionParam
	text      string
	content   any
}

// assistantParts returns, of an assistant message's parts, the entries of
// the images OpenAI made (with their item IDs), the reasoning items to send,
// and the keys of the items to send without their IDs (those of a reasoning
// item that cannot go back); an error for a part an assistant turn cannot
// hold (another model's image or file is dropped).
func assistantParts(m *nous.Message) (images []entry, reasoning []reasoningOf, strip map[string]bool, err error) {
	strip = map[string]bool{}
	for k, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartImage && p.Options[optProvider] == Provider && id != "" {
			images = append(images, entry{key: id, item: responses.ResponseInputItemUnionParam{OfImageGenerationCall: &responses.ResponseInputItemImageGenerationCallParam{
				ID: id, Result: openai.String(p.Content), Status: "completed"}}})
			continue
		}
		switch p.Type {
		case nous.PartText:
		case nous.PartThinking:
			if p.Options[optProvider] != Provider {
				continue // another provider's, which the API cannot take
			}
			if p.Options[optUnsendable] == true {
				for _, key := range group(&p) {
					strip[key] = true
				}
				continue
			}
			reasoning = append(reasoning, reasoningOf{item: reasoningItem(&p), group: group(&p)})
		default:
			if adapt.Foreign(&p, Provider) {
				continue // another model's image or file, which an assistant turn cannot hold here
			}
			return nil, nil, nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	return images, reasoning, strip, nil
}

// textEntries returns the entries of an assistant message's text: one for
// each text part an output item ID marks, then one for the rest, under the
// message's item ID (when it has one); blank text is not sent.
func textEntries(m *nous.Message) []entry {
	var out []entry
	for _, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartText && id != "" && !adapt.Blank(p.Content) {
			out = append(out, entry{key: id, text: p.Content, content: p.Options[metaContent]})
		}
	}
	var rest []string // the text no item ID marks
	if !adapt.Blank(m.Content) {
		rest = append(rest, m.Content)
	}
	for _, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartText && id == "" && !adapt.Blank(p.Content) {
			rest = append(rest, p.Content)
		}
	}
	if len(rest) > 0 {
		id, _ := m.Metadata[metaItemID].(string)
		out = append(out, entry{key: id, also: "message", text: strings.Join(rest, ""), content: m.Metadata[metaContent]})
	}
	return out
}

// callEntries returns the entries of an assistant message's tool calls:
// function_call items, or custom_tool_call items for a custom tool's, with
// their item IDs but for the keys in strip.
func callEntries(m *nous.Message, strip map[string]bool) ([]entry, error) {
	var out []entry
	for _, tc := range m.ToolCalls {
		args, err := tc.ArgumentsObject()
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		id, _ := tc.Metadata[metaItemID].(string)
		if strip[tc.ID] {
			id = ""
		}
		var item responses.ResponseInputItemUnionParam
		if tc.Metadata[metaCustom] == true {
			if item, err = customCall(&tc, id, args); err != nil {
				return nil, adapt.CallError{ID: tc.ID, Err: err}
			}
		} else {
			item = functionCall(&tc, id, args)
		}
		out = append(out, entry{key: tc.ID, item: item})
	}
	return out, nil
}

// functionCall returns the function_call item of a tool call, with its
// item ID (none when id is ""), namespace and caller.
func functionCall(tc *nous.ToolCall, id string, args json.RawMessage) responses.ResponseInputItemUnionParam {
	call := responses.ResponseFunctionToolCallParam{CallID: tc.ID, Name: tc.Name, Arguments: string(args)}
	if id != "" {
		call.ID = openai.String(id)
	}
	if ns, _ := tc.Metadata[metaNamespace].(string); ns != "" {
		call.Namespace = openai.String(ns)
	}
	if caller, ok := callerOf(tc); ok {
		call.Caller = param.Override[responses.ResponseFunctionToolCallCallerUnionParam](caller)
	}
	return responses.ResponseInputItemUnionParam{OfFunctionCall: &call}
}

// customCall returns the custom_tool_call item of a custom tool's call,
// whose arguments args must be {"input": text}, with its item ID (none
// when id is ""), namespace and caller.
func customCall(tc *nous.ToolCall, id string, args json.RawMessage) (responses.ResponseInputItemUnionParam, error) {
	var in struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(args, &in) != nil || in.Input == nil {
		return responses.ResponseInputItemUnionParam{}, fmt.Errorf(`a custom tool call whose arguments are not {"input": text}: %w`, nous.ErrInvalidArguments)
	}
	call := responses.ResponseCustomToolCallParam{CallID: tc.ID, Name: tc.Name, Input: *in.Input}
	if id != "" {
		call.ID = openai.String(id)
	}
	if ns, _ := tc.Metadata[metaNamespace].(string); ns != "" {
		call.Namespace = openai.String(ns)
	}
	if caller, ok := callerOf(tc); ok {
		call.Caller = param.Override[responses.ResponseCustomToolCallCallerUnionParam](caller)
	}
	return responses.ResponseInputItemUnionParam{OfCustomToolCall: &call}, nil
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
	out, _ := adapt.Replay(adapt.Recorded(m.Metadata[metaOrder]), slots, nil) // no error without items kept whole
	return out
}

// withReasoning returns the items of entries, each reasoning item directly
// before the first of them that followed it in the response; the items in
// strip go without their IDs, and an image, whose ID is required, not at
// all.
func withReasoning(entries []entry, reasoning []reasoningOf, strip map[string]bool) []responses.ResponseInputItemUnionParam {
	var items []responses.ResponseInputItemUnionParam
	for _, e := range entries {
		for _, key := range []string{e.also, e.key} {
			for i := range reasoning {
				if r := &reasoning[i]; key != "" && !r.sent && slices.Contains(r.group, key) {
					items, r.sent = append(items, r.item), true
				}
			}
		}
		switch {
		case e.item.OfImageGenerationCall != nil && strip[e.key]:
			// Its ID is required, and the reasoning it came after cannot go:
			// the image stays in the message, but not in the request.
		case e.item.OfImageGenerationCall != nil || e.item.OfFunctionCall != nil || e.item.OfCustomToolCall != nil:
			items = append(items, e.item)
		case e.key != "" && !strip[e.key]:
			items = append(items, outputMessage(e.key, e.text, e.content))
		default:
			items = append(items, responses.ResponseInputItemParamOfMessage(e.text, responses.EasyInputMessageRoleAssistant))
		}
	}
	return items
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
	raw, _ := tc.Metadata[metaCaller].(string)
	var caller struct{ Type string }
	if raw == "" || json.Unmarshal([]byte(raw), &caller) != nil || caller.Type == "" {
		return nil, false
	}
	return json.RawMessage(raw), true
}
