package openai

import (
	"cmp"
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

// FillResponses sets params.Input to the items of c's system prompt and
// view, with its overlay, by the rules of the package doc; the rest of
// params is the caller's. A view the API would refuse is an [*Error], and
// params is left as it was.
func FillResponses(params *responses.ResponseNewParams, c *nous.Context) error {
	if err := adapt.Pairing(Provider, c); err != nil {
		return err
	}
	var items responses.ResponseInputParam
	if prompt := adapt.Prompt(c); prompt != "" {
		items = append(items, responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleSystem))
	}
	custom := map[string]bool{} // the IDs of the custom tool calls so far
	for i, m := range c.All() {
		for _, tc := range m.ToolCalls {
			custom[tc.ID] = tc.Metadata[metaCustom] == true
		}
		its, err := responseItems(&m, custom)
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		items = append(items, its...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return nil
}

// responseItems returns the input items of m; custom says which calls so
// far are custom tool calls.
func responseItems(m *nous.Message, custom map[string]bool) ([]responses.ResponseInputItemUnionParam, error) {
	switch m.Role {
	case nous.RoleSystem:
		if err := adapt.SystemOnlyText(m, ErrUnsupported); err != nil {
			return nil, err
		}
		t := adapt.Texts(m)
		if len(t) == 0 {
			return nil, nil
		}
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(strings.Join(t, "\n\n"), responses.EasyInputMessageRoleSystem)}, nil
	case nous.RoleUser:
		return responseUser(m)
	case nous.RoleAssistant:
		return responseAssistant(m)
	case nous.RoleTool:
		out, err := responseToolOutput(m)
		if err != nil {
			return nil, adapt.CallError{ID: m.ToolCallID, Err: err}
		}
		if custom[m.ToolCallID] {
			item := responses.ResponseCustomToolCallOutputParam{CallID: m.ToolCallID, Output: customOutput(out)}
			return []responses.ResponseInputItemUnionParam{{OfCustomToolCallOutput: &item}}, nil
		}
		item := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(m.ToolCallID), Output: out}
		return []responses.ResponseInputItemUnionParam{{OfFunctionCallOutput: &item}}, nil
	}
	return nil, fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
}

func responseUser(m *nous.Message) ([]responses.ResponseInputItemUnionParam, error) {
	if len(m.Parts) == 0 {
		if adapt.Blank(m.Content) {
			return nil, nil
		}
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser)}, nil
	}
	var content responses.ResponseInputMessageContentListParam
	if !adapt.Blank(m.Content) {
		content = append(content, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: m.Content}})
	}
	for k, p := range m.Parts {
		var c responses.ResponseInputContentUnionParam
		switch p.Type {
		case nous.PartText:
			if adapt.Blank(p.Content) {
				continue
			}
			c.OfInputText = &responses.ResponseInputTextParam{Text: p.Content}
		case nous.PartImage, nous.PartImageURL:
			url := p.Content
			if p.Type == nous.PartImage {
				var err error
				if url, err = dataURL(&p); err != nil {
					return nil, fmt.Errorf("part %d: %w", k, err)
				}
			}
			c.OfInputImage = &responses.ResponseInputImageParam{ImageURL: openai.String(url), Detail: responses.ResponseInputImageDetailAuto}
		case nous.PartFile:
			data, err := dataURL(&p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", k, err)
			}
			c.OfInputFile = &responses.ResponseInputFileParam{FileData: openai.String(data), Filename: openai.String(filename(&p))}
		case nous.PartFileURL:
			c.OfInputFile = &responses.ResponseInputFileParam{FileURL: openai.String(p.Content)}
		default:
			return nil, fmt.Errorf("part %d: a %s part in a user message: %w", k, p.Type, ErrUnsupported)
		}
		content = append(content, c)
	}
	if len(content) == 0 {
		return nil, nil
	}
	return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)}, nil
}

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
	var reasoning []reasoningOf
	var entries []entry
	strip := map[string]bool{} // the keys of items to send without their IDs
	for k, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartImage && p.Options[optProvider] == Provider && id != "" {
			entries = append(entries, entry{key: id, item: responses.ResponseInputItemUnionParam{OfImageGenerationCall: &responses.ResponseInputItemImageGenerationCallParam{
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
			return nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	for _, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartText && id != "" && !adapt.Blank(p.Content) {
			entries = append(entries, entry{key: id, text: p.Content, content: p.Options[metaContent]})
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
		entries = append(entries, entry{key: id, also: "message", text: strings.Join(rest, ""), content: m.Metadata[metaContent]})
	}
	for _, tc := range m.ToolCalls {
		args, err := tc.ArgumentsObject()
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		id, _ := tc.Metadata[metaItemID].(string)
		if strip[tc.ID] {
			id = ""
		}
		if tc.Metadata[metaCustom] == true {
			var in struct {
				Input *string `json:"input"`
			}
			if json.Unmarshal(args, &in) != nil || in.Input == nil {
				return nil, adapt.CallError{ID: tc.ID, Err: fmt.Errorf(`a custom tool call whose arguments are not {"input": text}: %w`, nous.ErrInvalidArguments)}
			}
			call := responses.ResponseCustomToolCallParam{CallID: tc.ID, Name: tc.Name, Input: *in.Input}
			if id != "" {
				call.ID = openai.String(id)
			}
			if ns, _ := tc.Metadata[metaNamespace].(string); ns != "" {
				call.Namespace = openai.String(ns)
			}
			if caller, ok := callerOf(&tc); ok {
				call.Caller = param.Override[responses.ResponseCustomToolCallCallerUnionParam](caller)
			}
			entries = append(entries, entry{key: tc.ID, item: responses.ResponseInputItemUnionParam{OfCustomToolCall: &call}})
			continue
		}
		call := responses.ResponseFunctionToolCallParam{CallID: tc.ID, Name: tc.Name, Arguments: string(args)}
		if id != "" {
			call.ID = openai.String(id)
		}
		if ns, _ := tc.Metadata[metaNamespace].(string); ns != "" {
			call.Namespace = openai.String(ns)
		}
		if caller, ok := callerOf(&tc); ok {
			call.Caller = param.Override[responses.ResponseFunctionToolCallCallerUnionParam](caller)
		}
		entries = append(entries, entry{key: tc.ID, item: responses.ResponseInputItemUnionParam{OfFunctionCall: &call}})
	}
	if order, ok := m.Metadata[metaOrder].([]any); ok {
		pos := make(map[string]int, len(order))
		for i := len(order) - 1; i >= 0; i-- { // the first place of a key
			if k, ok := order[i].(string); ok && k != "" {
				pos[k] = i
			}
		}
		at := func(key string) int { // what the order does not name comes after
			if i, ok := pos[key]; ok {
				return i
			}
			return len(order)
		}
		slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(at(a.key), at(b.key)) })
	}
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
	return items, nil
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

// customOutput returns the output of a custom_tool_call_output item: the
// output a function_call_output would have, text or a list of its parts.
func customOutput(out responses.ResponseInputItemFunctionCallOutputOutputUnionParam) responses.ResponseCustomToolCallOutputOutputUnionParam {
	if out.OfString.Valid() {
		return responses.ResponseCustomToolCallOutputOutputUnionParam{OfString: out.OfString}
	}
	var list []responses.ResponseCustomToolCallOutputOutputOutputContentListItemUnionParam
	for _, p := range out.OfResponseFunctionCallOutputItemArray {
		var item responses.ResponseCustomToolCallOutputOutputOutputContentListItemUnionParam
		switch {
		case p.OfInputText != nil:
			item.OfInputText = &responses.ResponseInputTextParam{Text: p.OfInputText.Text}
		case p.OfInputImage != nil:
			item.OfInputImage = &responses.ResponseInputImageParam{ImageURL: p.OfInputImage.ImageURL, Detail: responses.ResponseInputImageDetailAuto}
		case p.OfInputFile != nil:
			item.OfInputFile = &responses.ResponseInputFileParam{FileData: p.OfInputFile.FileData, FileURL: p.OfInputFile.FileURL, Filename: p.OfInputFile.Filename}
		}
		list = append(list, item)
	}
	return responses.ResponseCustomToolCallOutputOutputUnionParam{OfOutputContentList: list}
}

// responseToolOutput returns the output of a function_call_output item: the
// text of a tool message, or a list of its text and images.
func responseToolOutput(m *nous.Message) (responses.ResponseInputItemFunctionCallOutputOutputUnionParam, error) {
	var out responses.ResponseInputItemFunctionCallOutputOutputUnionParam
	textOnly := true
	for _, p := range m.Parts {
		textOnly = textOnly && p.Type == nous.PartText
	}
	if textOnly {
		text := m.Content
		for _, p := range m.Parts {
			text += p.Content
		}
		out.OfString = openai.String(text)
		return out, nil
	}
	var list responses.ResponseFunctionCallOutputItemListParam
	if !adapt.Blank(m.Content) {
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: m.Content}})
	}
	for k, p := range m.Parts {
		switch p.Type {
		case nous.PartText:
			if !adapt.Blank(p.Content) {
				list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: p.Content}})
			}
		case nous.PartImage, nous.PartImageURL:
			url := p.Content
			if p.Type == nous.PartImage {
				var err error
				if url, err = dataURL(&p); err != nil {
					return out, fmt.Errorf("part %d: %w", k, err)
				}
			}
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(url)}})
		case nous.PartFile:
			data, err := dataURL(&p)
			if err != nil {
				return out, fmt.Errorf("part %d: %w", k, err)
			}
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: &responses.ResponseInputFileContentParam{
				FileData: openai.String(data), Filename: openai.String(filename(&p))}})
		case nous.PartFileURL:
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: &responses.ResponseInputFileContentParam{
				FileURL: openai.String(p.Content)}})
		default:
			return out, fmt.Errorf("part %d: a %s part in a tool result: %w", k, p.Type, ErrUnsupported)
		}
	}
	out.OfResponseFunctionCallOutputItemArray = list
	return out, nil
}

// ResponseMessage returns the assistant message and the usage of a
// Responses API response: the text of its message items (Content for one
// item, with its ID in Metadata; text parts for several, or with
// reasoning, each with its item's ID in Options), a refusal's text with
// Metadata["refusal"] true, its function calls as tool calls with their
// argument bytes and item IDs, and its reasoning items as thinking parts
// marked as OpenAI's, with their ID, encrypted content, summary parts and
// the item that followed them, so that [FillResponses] sends them back in
// their place; the images its image_generation_call items made as image
// parts marked as OpenAI's, with their item IDs; its custom tool calls as
// tool calls whose arguments are {"input": text} (Metadata["openai_custom"]
// true), which go back as custom tool calls, their results as their
// outputs. The calls of hosted tools (web search, file search, code
// interpreter, MCP) are not kept; the client calls a message has no place
// for (computer, shell, apply patch, MCP approval requests) are kept as
// their JSON in Metadata["openai_client_items"], for the runtime that runs
// them, and are not sent back.
func ResponseMessage(resp *responses.Response) (nous.Message, nous.Usage) {
	m := nous.AssistantMessage("")
	if resp == nil {
		return m, nous.Usage{}
	}
	var texts []nous.ContentPart // one per message item, marked with its ID
	var thinking, images []nous.ContentPart
	var keys []any // the keys of the items kept, in order
	for k, item := range resp.Output {
		switch item.Type {
		case "message":
			var text strings.Builder
			var content []any // its parts, each {"type", "text"}
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
					content = append(content, map[string]any{"type": c.Type, "text": c.Text, "json": c.RawJSON()})
				case "refusal":
					text.WriteString(c.Refusal)
					content = append(content, map[string]any{"type": c.Type, "text": c.Refusal, "json": c.RawJSON()})
					if m.Metadata == nil {
						m.Metadata = map[string]any{}
					}
					m.Metadata["refusal"] = true
				}
			}
			p := nous.ContentPart{Type: nous.PartText, Content: text.String(), Options: map[string]any{metaItemID: item.ID}}
			if len(content) > 1 || len(content) == 1 && (item.Content[0].Type != "output_text" || len(item.Content[0].Annotations) > 0) {
				p.Options[metaContent] = content
			}
			texts = append(texts, p)
			keys = append(keys, item.ID)
		case "function_call":
			args := json.RawMessage(item.Arguments.OfString)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args,
				Metadata: callMetadata(&item)})
			keys = append(keys, item.CallID)
		case "custom_tool_call":
			args, _ := json.Marshal(map[string]string{"input": item.Input})
			meta := callMetadata(&item)
			meta[metaCustom] = true
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args, Metadata: meta})
			keys = append(keys, item.CallID)
		case "computer_call", "local_shell_call", "shell_call", "apply_patch_call", "mcp_approval_request":
			// Calls of the client's that a message has no place for: kept
			// as they came, for the runtime that runs them; never sent back.
			if m.Metadata == nil {
				m.Metadata = map[string]any{}
			}
			kept, _ := m.Metadata[metaClientItems].([]any)
			m.Metadata[metaClientItems] = append(kept, item.RawJSON())
		case "reasoning":
			thinking = append(thinking, reasoningPart(resp.Output, k))
		case "image_generation_call":
			if item.Result != "" {
				images = append(images, imagePart(&item))
				keys = append(keys, item.ID)
			}
		}
	}
	if len(texts) == 1 && len(thinking) == 0 && len(images) == 0 {
		m.Content = texts[0].Content
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata[metaItemID] = texts[0].Options[metaItemID]
		if content, ok := texts[0].Options[metaContent]; ok {
			m.Metadata[metaContent] = content
		}
	} else {
		m.Parts = slices.Concat(thinking, images, texts)
	}
	if !laidOut(resp.Output) {
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata[metaOrder] = keys
	}
	u := ResponseUsage(resp.Usage)
	u.ToolCalls = len(m.ToolCalls)
	return m, u
}

// laidOut reports whether the items of output come as [FillResponses] lays
// them out by default: images, then message items, then function calls.
func laidOut(output []responses.ResponseOutputItemUnion) bool {
	rank := map[string]int{"image_generation_call": 1, "message": 2, "function_call": 3, "custom_tool_call": 3}
	last := 0
	for _, item := range output {
		if r := rank[item.Type]; r > 0 {
			if r < last {
				return false
			}
			last = r
		}
	}
	return true
}

// callMetadata returns the Metadata of the tool call of a function or
// custom tool call item: its item ID, and its namespace and caller (the
// program that made it) when it has them.
func callMetadata(item *responses.ResponseOutputItemUnion) map[string]any {
	meta := map[string]any{metaItemID: item.ID}
	if item.Namespace != "" {
		meta[metaNamespace] = item.Namespace
	}
	if raw := item.JSON.Caller.Raw(); raw != "" && raw != "null" {
		var caller struct{ Type string }
		if json.Unmarshal([]byte(raw), &caller) == nil && caller.Type != "" {
			meta[metaCaller] = raw
		}
	}
	return meta
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

// imagePart returns the image part of an image_generation_call item: its
// base64 result, media type and item ID.
func imagePart(item *responses.ResponseOutputItemUnion) nous.ContentPart {
	format := item.OutputFormat
	if format == "" {
		format = "png"
	}
	return nous.ContentPart{Type: nous.PartImage, Content: item.Result,
		Options: map[string]any{optProvider: Provider, "media_type": "image/" + format, metaItemID: item.ID}}
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
