package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// FillChat sets params.Messages to c's system prompt and view, with its
// overlay, by the rules of the package doc; the rest of params is the
// caller's. A view the API would refuse is an [*Error], and params is left
// as it was.
func FillChat(params *openai.ChatCompletionNewParams, c *nous.Context) error {
	if err := adapt.Pairing(Provider, c); err != nil {
		return err
	}
	msgs := view(c)
	ids := callIDs(msgs, chatCallIDMax)
	var out []openai.ChatCompletionMessageParamUnion
	if prompt := adapt.Prompt(c); prompt != "" {
		out = append(out, openai.SystemMessage(prompt))
	}
	for i := range msgs {
		msg, ok, err := chatMessage(&msgs[i], i, ids)
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		if ok {
			out = append(out, msg)
		}
	}
	if len(out) == 0 { // nothing to send: an empty view, or one of blank text only
		out = append(out, openai.UserMessage(adapt.LeadText))
	}
	params.Messages = out
	return nil
}

// chatMessage returns the Chat message of m, view message i, its calls and
// results under the IDs ids gives them, and ok false when m has nothing to
// send.
func chatMessage(m *nous.Message, i int, ids *adapt.CallIDs) (msg openai.ChatCompletionMessageParamUnion, ok bool, err error) {
	switch m.Role {
	case nous.RoleSystem:
		if err := adapt.SystemOnlyText(m, ErrUnsupported); err != nil {
			return msg, false, err
		}
		t := adapt.Texts(m)
		if len(t) == 0 {
			return msg, false, nil
		}
		parts := make([]openai.ChatCompletionContentPartTextParam, len(t))
		for k, s := range t {
			parts[k] = openai.ChatCompletionContentPartTextParam{Text: s}
		}
		if len(parts) == 1 {
			return openai.SystemMessage(t[0]), true, nil
		}
		return openai.SystemMessage(parts), true, nil
	case nous.RoleUser:
		return chatUser(m)
	case nous.RoleAssistant:
		return chatAssistant(m, i, ids)
	case nous.RoleTool:
		for k, p := range m.Parts {
			if p.Type != nous.PartText {
				return msg, false, adapt.CallError{ID: m.ToolCallID, Err: fmt.Errorf("part %d: a %s part in a tool result (Chat takes text there: "+
					"send it in a user message after the turn's results, or use FillResponses): %w", k, p.Type, ErrUnsupported)}
			}
		}
		return openai.ToolMessage(resultText(m), ids.Result(i, m.ToolCallID)), true, nil
	}
	return msg, false, fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
}

func chatUser(m *nous.Message) (msg openai.ChatCompletionMessageParamUnion, ok bool, err error) {
	if len(m.Parts) == 0 {
		if adapt.Blank(m.Content) {
			return msg, false, nil
		}
		return openai.UserMessage(m.Content), true, nil
	}
	var parts []openai.ChatCompletionContentPartUnionParam
	if !adapt.Blank(m.Content) {
		parts = append(parts, openai.TextContentPart(m.Content))
	}
	for k, p := range m.Parts {
		part, ok, err := chatPart(&p)
		if err != nil {
			return msg, false, fmt.Errorf("part %d: %w", k, err)
		}
		if ok {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return msg, false, nil
	}
	return openai.UserMessage(parts), true, nil
}

// chatPart returns the Chat content part of a user part.
func chatPart(p *nous.ContentPart) (part openai.ChatCompletionContentPartUnionParam, ok bool, err error) {
	switch p.Type {
	case nous.PartText:
		return openai.TextContentPart(p.Content), !adapt.Blank(p.Content), nil
	case nous.PartImage, nous.PartImageURL:
		url := p.Content
		if p.Type == nous.PartImage {
			if url, err = dataURL(p); err != nil {
				return part, false, err
			}
		}
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}), true, nil
	case nous.PartFile:
		data, err := dataURL(p)
		if err != nil {
			return part, false, err
		}
		return openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
			FileData: openai.String(data), Filename: openai.String(filename(p)),
		}), true, nil
	case nous.PartFileURL:
		return part, false, fmt.Errorf("a file URL (Chat takes a file's data: send it as a %s part, its base64 data in Content, "+
			"or use FillResponses, which takes a URL): %w", nous.PartFile, ErrUnsupported)
	}
	return part, false, fmt.Errorf("a %s part in a user message: %w", p.Type, ErrUnsupported)
}

func chatAssistant(m *nous.Message, i int, ids *adapt.CallIDs) (msg openai.ChatCompletionMessageParamUnion, ok bool, err error) {
	var a openai.ChatCompletionAssistantMessageParam
	switch t := adapt.Texts(m); len(t) {
	case 0:
	case 1:
		a.Content.OfString = openai.String(t[0])
	default:
		for _, s := range t {
			a.Content.OfArrayOfContentParts = append(a.Content.OfArrayOfContentParts,
				openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{OfText: &openai.ChatCompletionContentPartTextParam{Text: s}})
		}
	}
	for k, p := range m.Parts {
		// An image or file a model made (another's, or one of OpenAI's own
		// image generation calls): a Chat assistant turn cannot hold it.
		if made, _ := p.Options[nous.OptionProvider].(string); p.Type != nous.PartText && p.Type != nous.PartThinking && made == "" {
			return msg, false, fmt.Errorf("part %d: a %s part in an assistant message (Chat takes text and calls there; "+
				"mark an image a model made with Options[%q], or move it to a user message): %w", k, p.Type, nous.OptionProvider, ErrUnsupported)
		}
	}
	for k, tc := range m.ToolCalls {
		id := ids.Call(i, k, tc.ID)
		if isCustom(&tc) {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfCustom: &openai.ChatCompletionMessageCustomToolCallParam{
				ID: id, Custom: openai.ChatCompletionMessageCustomToolCallCustomParam{Name: adapt.Name(tc.Name), Input: customInput(&tc)},
			}})
			continue
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: adapt.Name(tc.Name), Arguments: arguments(&tc)},
		}})
	}
	if a.Content.OfString.Valid() || len(a.Content.OfArrayOfContentParts) > 0 || len(a.ToolCalls) > 0 {
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true, nil
	}
	return msg, false, nil
}

// ChatMessage returns the assistant message and the usage of a Chat
// Completions response's first choice: its text as Content (a refusal's
// text, with Metadata["refusal"] true, when it refused), its function calls
// as tool calls with their argument bytes ({} for none), its custom tool
// calls as tool calls whose arguments are {"input": text}
// (Metadata[MetadataCustom] true), Metadata["finish_reason"] and ["model"].
// A call the server gave no ID, or one another call of the response has
// (OpenAI-compatible servers that do), gets an ID of its own, its own ID or
// "call" with _2, _3, ... after it, so that the context takes the reply and
// its results pair. A nil response is an error wrapping [ErrNoResponse]; a response without a
// choice, one wrapping [ErrNoChoice], returned with the response's usage,
// which is billed all the same; one with a tool call of another type, one
// wrapping [ErrUnsupported], with the usage.
func ChatMessage(resp *openai.ChatCompletion) (nous.Message, nous.Usage, error) {
	if resp == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: a nil Chat Completions response: %w", ErrNoResponse)
	}
	u := ChatUsage(resp.Usage)
	if len(resp.Choices) == 0 {
		return nous.Message{}, u, fmt.Errorf("openai: Chat Completions response %q: %w", resp.ID, ErrNoChoice)
	}
	choice := resp.Choices[0]
	m := nous.AssistantMessage(choice.Message.Content)
	m.Metadata = map[string]any{"finish_reason": choice.FinishReason, "model": resp.Model}
	if choice.Message.Content == "" && choice.Message.Refusal != "" {
		m.Content, m.Metadata["refusal"] = choice.Message.Refusal, true
	}
	for _, tc := range choice.Message.ToolCalls {
		switch tc.Type {
		case "function", "": // a server that speaks the API may leave the type out
		case "custom":
			args, _ := json.Marshal(map[string]string{"input": tc.Custom.Input}) // a map of strings always encodes
			m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: tc.ID, Name: tc.Custom.Name, Arguments: args, Metadata: map[string]any{MetadataCustom: true}})
			continue
		default:
			return nous.Message{}, u, fmt.Errorf("openai: a %s tool call %q (a context keeps function and custom tool calls): %w", tc.Type, tc.ID, ErrUnsupported)
		}
		args := json.RawMessage(tc.Function.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		m.ToolCalls = append(m.ToolCalls, nous.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	adapt.DistinctIDs(m.ToolCalls) // a server that gives no ID, or one to several calls
	u.ToolCalls = len(m.ToolCalls)
	return m, u, nil
}

// ChatUsage returns the usage of one Chat Completions response: Requests
// 1, InputTokens the prompt tokens (cached ones included), OutputTokens
// the completion tokens (reasoning included), the cache and reasoning
// counts as their breakdowns.
func ChatUsage(u openai.CompletionUsage) nous.Usage {
	in, out := int(u.PromptTokens), int(u.CompletionTokens)
	return nous.Usage{
		Requests: 1, InputTokens: in, OutputTokens: out, TotalTokens: in + out,
		CacheReadInputTokens:     int(u.PromptTokensDetails.CachedTokens),
		CacheCreationInputTokens: int(u.PromptTokensDetails.CacheWriteTokens),
		ReasoningTokens:          int(u.CompletionTokensDetails.ReasoningTokens),
	}
}
