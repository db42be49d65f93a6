package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
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
	if c.SystemPrompt != "" && !adapt.PromptInView(c) {
		items = append(items, responses.ResponseInputItemParamOfMessage(c.SystemPrompt, responses.EasyInputMessageRoleSystem))
	}
	for i, m := range c.All() {
		its, err := responseItems(&m)
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		items = append(items, its...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return nil
}

// responseItems returns the input items of m.
func responseItems(m *nous.Message) ([]responses.ResponseInputItemUnionParam, error) {
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

// responseAssistant returns the items of an assistant message: its text as
// message items (one per text part an output item ID marks, one for the
// rest), then its tool calls as function_call items, each preceded by the
// reasoning items that preceded it in the response.
func responseAssistant(m *nous.Message) ([]responses.ResponseInputItemUnionParam, error) {
	reasoning := map[string][]responses.ResponseInputItemUnionParam{} // by the item they precede
	var marked []nous.ContentPart                                     // text parts with their item's ID
	var images []responses.ResponseInputItemUnionParam                // image_generation_call items
	for k, p := range m.Parts {
		if id, _ := p.Options[metaItemID].(string); p.Type == nous.PartImage && p.Options[optProvider] == Provider && id != "" {
			images = append(images, responses.ResponseInputItemUnionParam{OfImageGenerationCall: &responses.ResponseInputItemImageGenerationCallParam{
				ID: id, Result: openai.String(p.Content), Status: "completed"}})
			continue
		}
		switch p.Type {
		case nous.PartText:
			if id, _ := p.Options[metaItemID].(string); id != "" {
				marked = append(marked, p)
			}
		case nous.PartThinking:
			if p.Options[optProvider] != Provider {
				continue // another provider's, which the API cannot take
			}
			follower, _ := p.Options[optFollowedBy].(string)
			reasoning[follower] = append(reasoning[follower], reasoningItem(&p))
		default:
			if adapt.Foreign(&p, Provider) {
				continue // another model's image or file, which an assistant turn cannot hold here
			}
			return nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	var items []responses.ResponseInputItemUnionParam
	for _, it := range images {
		items = append(items, reasoning[it.OfImageGenerationCall.ID]...)
		items = append(items, it)
	}
	for _, p := range marked {
		id := p.Options[metaItemID].(string)
		items = append(items, reasoning[id]...)
		items = append(items, outputMessage(id, p.Content))
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
		items = append(items, reasoning["message"]...)
		text := strings.Join(rest, "")
		if id, _ := m.Metadata[metaItemID].(string); id != "" {
			items = append(items, reasoning[id]...)
			items = append(items, outputMessage(id, text))
		} else {
			items = append(items, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
		}
	}
	for _, tc := range m.ToolCalls {
		args, err := tc.ArgumentsObject()
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		items = append(items, reasoning[tc.ID]...)
		call := responses.ResponseFunctionToolCallParam{CallID: tc.ID, Name: tc.Name, Arguments: string(args)}
		if id, _ := tc.Metadata[metaItemID].(string); id != "" {
			call.ID = openai.String(id)
		}
		items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &call})
	}
	return items, nil
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

// outputMessage returns an output message item of the model's, with its ID.
func outputMessage(id, text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
		ID: id, Status: responses.ResponseOutputMessageStatusCompleted,
		Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
			Text: text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}}},
	}}
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
// parts marked as OpenAI's, with their item IDs. Other output items (the
// calls of hosted tools) are not kept.
func ResponseMessage(resp *responses.Response) (nous.Message, nous.Usage) {
	m := nous.AssistantMessage("")
	if resp == nil {
		return m, nous.Usage{}
	}
	var texts []nous.ContentPart // one per message item, marked with its ID
	var thinking, images []nous.ContentPart
	for k, item := range resp.Output {
		switch item.Type {
		case "message":
			var text strings.Builder
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
					if m.Metadata == nil {
						m.Metadata = map[string]any{}
					}
					m.Metadata["refusal"] = true
				}
			}
			texts = append(texts, nous.ContentPart{Type: nous.PartText, Content: text.String(), Options: map[string]any{metaItemID: item.ID}})
		case "function_call":
			args := json.RawMessage(item.Arguments.OfString)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: item.CallID, Name: item.Name, Arguments: args,
				Metadata: map[string]any{metaItemID: item.ID}})
		case "reasoning":
			thinking = append(thinking, reasoningPart(resp.Output, k))
		case "image_generation_call":
			if item.Result != "" {
				images = append(images, imagePart(&item))
			}
		}
	}
	if len(texts) == 1 && len(thinking) == 0 && len(images) == 0 {
		m.Content = texts[0].Content
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata[metaItemID] = texts[0].Options[metaItemID]
	} else {
		m.Parts = slices.Concat(thinking, images, texts)
	}
	u := ResponseUsage(resp.Usage)
	u.ToolCalls = len(m.ToolCalls)
	return m, u
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
// reading), ID, encrypted content, and the item that followed it, past any
// other reasoning item: a function call's ID or a message item's.
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
	for _, next := range output[k+1:] {
		if next.Type == "reasoning" {
			continue
		}
		switch next.Type {
		case "message":
			p.Options[optFollowedBy] = next.ID
		case "function_call":
			p.Options[optFollowedBy] = next.CallID
		case "image_generation_call":
			p.Options[optFollowedBy] = next.ID
		}
		break
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
