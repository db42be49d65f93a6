package openai

import (
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// FillResponses sets params.Input to the items of c's system prompt and
// view, with its overlay, by the rules of the package doc; the rest of
// params is the caller's, and params.Store is read: with it false, no
// reasoning item goes by reference. A view the API would refuse is an
// [*Error], and params is left as it was.
func FillResponses(params *responses.ResponseNewParams, c *nous.Context) error {
	if err := adapt.Pairing(Provider, c); err != nil {
		return err
	}
	msgs := view(c)
	f := &responsesFill{
		store:   !params.Store.Valid() || params.Store.Value,
		ids:     callIDs(msgs, responsesCallIDMax),
		itemIDs: map[string]bool{},
		custom:  map[string]bool{},
	}
	var items responses.ResponseInputParam
	if prompt := adapt.Prompt(c); prompt != "" {
		items = append(items, responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleSystem))
	}
	for i := range msgs {
		its, err := f.items(&msgs[i], i)
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		items = append(items, its...)
	}
	if len(items) == 0 { // nothing to send: an empty view, or one of blank text only
		items = append(items, responses.ResponseInputItemParamOfMessage(adapt.LeadText, responses.EasyInputMessageRoleUser))
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return nil
}

// responsesFill is what one [FillResponses] has sent so far.
type responsesFill struct {
	store   bool            // params.Store is not false: the API keeps the items it made
	ids     *adapt.CallIDs  // the call IDs to send
	itemIDs map[string]bool // the item IDs sent: the API refuses an item ID twice
	custom  map[string]bool // the call IDs sent of custom tools' calls
}

// items returns the input items of m, view message i.
func (f *responsesFill) items(m *nous.Message, i int) ([]responses.ResponseInputItemUnionParam, error) {
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
		return f.assistant(m, i)
	case nous.RoleTool:
		out, err := responseToolOutput(m)
		if err != nil {
			return nil, adapt.CallError{ID: m.ToolCallID, Err: err}
		}
		id := f.ids.Result(i, m.ToolCallID)
		if f.custom[id] {
			item := responses.ResponseCustomToolCallOutputParam{CallID: id, Output: customOutput(out)}
			return []responses.ResponseInputItemUnionParam{{OfCustomToolCallOutput: &item}}, nil
		}
		item := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(id), Output: out}
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
		out.OfString = openai.String(resultText(m))
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
