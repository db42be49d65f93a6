package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Fill sets params.System and params.Messages to c's view, with its
// overlay, and its system prompt, by the rules of the package doc; the
// rest of params is the caller's. A view the API would refuse is an
// [*Error], and params is left as it was.
func Fill(params *anthropic.MessageNewParams, c *nous.Context) error {
	if err := adapt.Pairing(Provider, c); err != nil {
		return err
	}
	var b builder
	if prompt := adapt.Prompt(c); prompt != "" {
		b.system = append(b.system, anthropic.TextBlockParam{Text: prompt})
	}
	leading := true
	seen := map[string]bool{} // the tool_use IDs so far
	byCode := map[string]bool{}
	answeringCode := false // the last user message answers a tool call code made
	for i, m := range c.All() {
		var err error
		switch m.Role {
		case nous.RoleSystem:
			if err = adapt.SystemOnlyText(&m, ErrUnsupported); err != nil {
				break
			}
			if leading {
				b.system = append(b.system, systemBlocks(&m)...)
				continue
			}
			b.addSystem(systemBlocks(&m))
		case nous.RoleUser:
			var blocks []anthropic.ContentBlockParamUnion
			blocks, err = userBlocks(&m)
			if err == nil && answeringCode && b.last == nous.RoleUser && len(blocks) > 0 {
				err = fmt.Errorf("user content in the message that answers a tool call code execution made, which takes tool results only: %w", ErrUnsupported)
			}
			b.add(nous.RoleUser, blocks...)
		case nous.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			blocks, err = assistantBlocks(&m, seen)
			b.add(nous.RoleAssistant, blocks...)
			answeringCode = false
			for _, tc := range m.ToolCalls {
				if caller, _ := tc.Metadata[metaCaller].(string); caller != "" {
					byCode[tc.ID] = true
				}
			}
			b.paused = m.Metadata["stop_reason"] == "pause_turn"
		case nous.RoleTool:
			var block anthropic.ContentBlockParamUnion
			block, err = toolResult(&m)
			b.add(nous.RoleUser, block)
			answeringCode = answeringCode || byCode[m.ToolCallID]
		default:
			err = fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
		}
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		leading = false
	}
	b.answeredOnly()
	if len(b.messages) == 0 {
		return adapt.Wrap(Provider, 0, fmt.Errorf("the view has no message to send (the API needs one): %w", ErrUnsupported))
	}
	params.System, params.Messages = b.system, b.messages
	return nil
}

// builder collects the request: system blocks, and messages whose
// consecutive turns of one role are merged into one.
type builder struct {
	system   []anthropic.TextBlockParam
	messages []anthropic.MessageParam
	last     nous.Role // the role of the last message
	paused   bool      // the last message is an assistant turn the API paused
}

// add appends blocks to the last message when it has the role (user or
// assistant), and as a new message otherwise; no blocks, no message.
func (b *builder) add(role nous.Role, blocks ...anthropic.ContentBlockParamUnion) {
	if len(blocks) == 0 {
		return
	}
	n := len(b.messages)
	switch {
	case n > 0 && b.last == role && role == nous.RoleUser:
		b.messages[n-1].OfUser.Content = append(b.messages[n-1].OfUser.Content, blocks...)
	case n > 0 && b.last == role && role == nous.RoleAssistant:
		b.messages[n-1].OfAssistant.Content = mergeAssistant(b.messages[n-1].OfAssistant.Content, blocks, b.paused)
	case role == nous.RoleUser:
		b.messages = append(b.messages, anthropic.NewUserMessage(blocks...))
	default:
		b.messages = append(b.messages, anthropic.NewAssistantMessage(blocks...))
	}
	b.last = role
}

// mergeAssistant returns the blocks of two assistant messages in a row as
// one turn: the API wants a turn's thinking first, so the second's thinking
// blocks go after the first's, before its text and tool use. After a turn
// the API paused, the second is the rest of that turn, whose blocks follow
// as they are: the API wants its blocks back in their order.
func mergeAssistant(have, more []anthropic.ContentBlockParamUnion, paused bool) []anthropic.ContentBlockParamUnion {
	if paused {
		return append(have, more...)
	}
	thinking := func(b anthropic.ContentBlockParamUnion) bool {
		return b.OfThinking != nil || b.OfRedactedThinking != nil
	}
	lead := 0
	for lead < len(have) && thinking(have[lead]) {
		lead++
	}
	var think, rest []anthropic.ContentBlockParamUnion
	for _, b := range more {
		if thinking(b) {
			think = append(think, b)
		} else {
			rest = append(rest, b)
		}
	}
	out := make([]anthropic.ContentBlockParamUnion, 0, len(have)+len(more))
	out = append(append(append(out, have[:lead]...), think...), have[lead:]...)
	return append(out, rest...)
}

// answeredOnly drops from every assistant message but the last message the
// server tool uses without their results: a turn the API paused ends with
// one, which the API goes on with when the turn is sent back last, and
// refuses anywhere else. A message left with no block goes.
func (b *builder) answeredOnly() {
	referred := map[string]bool{} // the server tool uses a result, or a call their code made, names
	for _, m := range b.messages {
		if a := m.OfAssistant; a != nil {
			for _, block := range a.Content {
				for _, id := range refers(block) {
					referred[id] = true
				}
			}
		}
	}
	msgs := b.messages[:0]
	for k, m := range b.messages {
		if a := m.OfAssistant; a != nil && k < len(b.messages)-1 {
			a.Content = slices.DeleteFunc(a.Content, func(block anthropic.ContentBlockParamUnion) bool {
				return block.OfServerToolUse != nil && !referred[block.OfServerToolUse.ID]
			})
			if len(a.Content) == 0 {
				continue
			}
		}
		msgs = append(msgs, m)
	}
	b.messages = msgs
}

// refers returns the server tool uses block names: the one a result block
// answers (also one of a type newer than the SDK, sent as its JSON), or the
// code execution that made a tool use.
func refers(block anthropic.ContentBlockParamUnion) []string {
	var v struct {
		ToolID string `json:"tool_id"`
	}
	if block.OfToolUse != nil {
		if raw, ok := block.OfToolUse.Caller.Overrides(); ok {
			if b, ok := raw.(json.RawMessage); ok && json.Unmarshal(b, &v) == nil && v.ToolID != "" {
				return []string{v.ToolID}
			}
		}
		return nil
	}
	// A server tool's block, or one of a type newer than the SDK: the
	// server tool use it answers, and the code execution that made it.
	var b []byte
	if raw, ok := block.Overrides(); ok {
		b, _ = raw.(json.RawMessage)
	} else if block.OfServerToolUse != nil || block.GetToolUseID() != nil {
		b, _ = json.Marshal(block)
	}
	var w struct {
		ToolUseID string `json:"tool_use_id"`
		Caller    struct {
			ToolID string `json:"tool_id"`
		} `json:"caller"`
	}
	var ids []string
	if json.Unmarshal(b, &w) == nil {
		for _, id := range []string{w.ToolUseID, w.Caller.ToolID} {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// addSystem appends a system message in the conversation.
func (b *builder) addSystem(blocks []anthropic.TextBlockParam) {
	if len(blocks) == 0 {
		return
	}
	b.messages = append(b.messages, anthropic.MessageParam{OfSystem: &anthropic.SystemMessageParam{Content: blocks}})
	b.last = nous.RoleSystem
}

func systemBlocks(m *nous.Message) []anthropic.TextBlockParam {
	var out []anthropic.TextBlockParam
	for _, t := range adapt.Texts(m) {
		out = append(out, anthropic.TextBlockParam{Text: t})
	}
	return out
}

// userBlocks returns the blocks of a user message: its text, then its
// parts in order.
func userBlocks(m *nous.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var out []anthropic.ContentBlockParamUnion
	if !adapt.Blank(m.Content) {
		out = append(out, anthropic.NewTextBlock(m.Content))
	}
	for k, p := range m.Parts {
		block, ok, err := partBlock(&p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", k, err)
		}
		if ok {
			out = append(out, block)
		}
	}
	return out, nil
}

// partBlock returns the block of a user part; ok is false for a part that
// is sent as nothing (blank text).
func partBlock(p *nous.ContentPart) (block anthropic.ContentBlockParamUnion, ok bool, err error) {
	switch p.Type {
	case nous.PartText:
		return anthropic.NewTextBlock(p.Content), !adapt.Blank(p.Content), nil
	case nous.PartImage:
		media, data, err := inline(p)
		if err != nil {
			return block, false, err
		}
		return anthropic.NewImageBlockBase64(media, data), true, nil
	case nous.PartImageURL:
		if media, data, ok := dataURL(p.Content); ok {
			return anthropic.NewImageBlockBase64(media, data), true, nil
		}
		return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: p.Content}), true, nil
	case nous.PartFile:
		media, data, err := inline(p)
		if err != nil {
			return block, false, err
		}
		switch media {
		case "application/pdf":
			return anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: data}), true, nil
		case "text/plain":
			text, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				return block, false, fmt.Errorf("a text file whose content is not base64: %v: %w", err, ErrUnsupported)
			}
			return anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: string(text)}), true, nil
		}
		return block, false, fmt.Errorf("a file of type %q (documents are PDF or plain text): %w", media, ErrUnsupported)
	case nous.PartFileURL:
		return anthropic.NewDocumentBlock(anthropic.URLPDFSourceParam{URL: p.Content}), true, nil
	}
	return block, false, fmt.Errorf("a %s part in a user message: %w", p.Type, ErrUnsupported)
}

// inline returns the media type and base64 data of an image or file part:
// Options["media_type"] and Content, or what a data URL in Content says.
func inline(p *nous.ContentPart) (media, data string, err error) {
	if media, data, ok := dataURL(p.Content); ok {
		return media, data, nil
	}
	media, _ = p.Options["media_type"].(string)
	if media == "" {
		return "", "", fmt.Errorf("a %s part without Options[\"media_type\"]: %w", p.Type, ErrUnsupported)
	}
	return media, p.Content, nil
}

// dataURL splits a base64 data URL into its media type and data.
func dataURL(s string) (media, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	media, isBase64 := strings.CutSuffix(head, ";base64")
	return media, data, ok && isBase64
}

// assistantBlocks returns the blocks of an assistant message: its thinking
// from Anthropic first, then its text, then its tool calls; or in the order
// the response had them, when [Message] recorded it. seen holds the tool_use
// IDs of the request so far.
func assistantBlocks(m *nous.Message, seen map[string]bool) ([]anthropic.ContentBlockParamUnion, error) {
	var thinking, text, calls []anthropic.ContentBlockParamUnion
	callAt := map[string]int{}
	for k, p := range m.Parts {
		switch p.Type {
		case nous.PartThinking:
			block, ok, err := thinkingBlock(&p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", k, err)
			}
			if ok {
				thinking = append(thinking, block)
			}
		case nous.PartText:
		default:
			if adapt.Foreign(&p, Provider) {
				continue // another model's image or file, which an assistant turn cannot hold here
			}
			return nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	text, err := assistantText(m)
	if err != nil {
		return nil, err
	}
	for _, tc := range m.ToolCalls {
		switch {
		case !toolUseID.MatchString(tc.ID):
			return nil, adapt.CallError{ID: tc.ID, Err: fmt.Errorf("a tool call ID of other characters than letters, digits, _ and -: %w", ErrUnsupported)}
		case seen[tc.ID]:
			return nil, adapt.CallError{ID: tc.ID, Err: fmt.Errorf("a tool call ID used twice in the conversation: %w", ErrUnsupported)}
		}
		seen[tc.ID] = true
		args, err := tc.ArgumentsObject()
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		callAt[tc.ID] = len(calls)
		block := anthropic.NewToolUseBlock(tc.ID, json.RawMessage(args), tc.Name)
		if caller, _ := tc.Metadata[metaCaller].(string); caller != "" {
			var c struct{ Type string }
			if json.Unmarshal([]byte(caller), &c) != nil || c.Type == "" {
				return nil, adapt.CallError{ID: tc.ID, Err: fmt.Errorf("a caller that is not an object with a type: %w", ErrUnsupported)}
			}
			block.OfToolUse.Caller = param.Override[anthropic.ToolUseBlockParamCallerUnion](json.RawMessage(caller))
		}
		if toolset, _ := tc.Metadata[metaToolset].(string); toolset != "" {
			block.OfToolUse.ToolsetName = anthropic.String(toolset)
		}
		calls = append(calls, block)
	}
	order, _ := m.Metadata[metaOrder].([]any)
	if order == nil {
		return slices.Concat(thinking, slices.DeleteFunc(text, blank), calls), nil
	}
	// The order the response had: each kind takes the next of its blocks;
	// what the order does not name (the message was changed) comes after.
	var out []anthropic.ContentBlockParamUnion
	used := make([]bool, len(calls))
	for _, k := range order {
		switch s, _ := k.(string); {
		case s == "thinking" && len(thinking) > 0:
			out, thinking = append(out, thinking[0]), thinking[1:]
		case s == "text" && len(text) > 0:
			if !blank(text[0]) {
				out = append(out, text[0])
			}
			text = text[1:]
		case strings.HasPrefix(s, "tool_use:"):
			if i, ok := callAt[strings.TrimPrefix(s, "tool_use:")]; ok && !used[i] {
				out, used[i] = append(out, calls[i]), true
			}
		case strings.HasPrefix(s, "block:"):
			block, ok, err := keptBlock(m, strings.TrimPrefix(s, "block:"))
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, block)
			}
		}
	}
	out = append(append(out, thinking...), slices.DeleteFunc(text, blank)...)
	for i, b := range calls {
		if !used[i] {
			out = append(out, b)
		}
	}
	return out, nil
}

// assistantText returns a text block for its Content, when it has one, and
// for each text part of an assistant message, in order, with the citations
// [Message] kept: the zero block (see blank) for blank text, which is not
// sent, so that the order Message recorded still names each by its place.
func assistantText(m *nous.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var out []anthropic.ContentBlockParamUnion
	if m.Content != "" {
		var block anthropic.ContentBlockParamUnion
		if !adapt.Blank(m.Content) {
			block = anthropic.NewTextBlock(m.Content)
		}
		out = append(out, block)
	}
	for k, p := range m.Parts {
		if p.Type != nous.PartText {
			continue
		}
		if adapt.Blank(p.Content) {
			out = append(out, anthropic.ContentBlockParamUnion{})
			continue
		}
		citations, _ := p.Options[optCitations].(string)
		if citations == "" || p.Options[optProvider] != Provider {
			out = append(out, anthropic.NewTextBlock(p.Content))
			continue
		}
		raw, err := json.Marshal(struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Citations json.RawMessage `json:"citations"`
		}{"text", p.Content, json.RawMessage(citations)})
		if err != nil {
			return nil, fmt.Errorf("part %d: citations that are not JSON: %w", k, ErrUnsupported)
		}
		block, err := sendBack(raw)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", k, err)
		}
		out = append(out, block)
	}
	return out, nil
}

// blank reports whether b is the zero block assistantText gives blank text.
func blank(b anthropic.ContentBlockParamUnion) bool { return param.IsOmitted(b) }

// keptBlock returns the block [Message] kept whole at index k of the
// message's Metadata["anthropic_blocks"]; ok is false when there is none
// (the message was changed since).
func keptBlock(m *nous.Message, k string) (block anthropic.ContentBlockParamUnion, ok bool, err error) {
	blocks, _ := m.Metadata[metaBlocks].([]any)
	i, err := strconv.Atoi(k)
	if err != nil || i < 0 || i >= len(blocks) {
		return block, false, nil
	}
	raw, _ := blocks[i].(string)
	if block, err = sendBack([]byte(raw)); err != nil {
		return block, false, fmt.Errorf("metadata %q[%d]: %w", metaBlocks, i, err)
	}
	return block, true, nil
}

// sendBack returns the block to send for a block of a response, given as
// its JSON: the SDK's own conversion, which keeps what the API wants back.
func sendBack(raw []byte) (anthropic.ContentBlockParamUnion, error) {
	var b anthropic.ContentBlockUnion
	if err := json.Unmarshal(raw, &b); err != nil || b.Type == "" {
		return anthropic.ContentBlockParamUnion{}, fmt.Errorf("not the JSON of a content block: %w", ErrUnsupported)
	}
	return b.ToParam(), nil
}

// thinkingBlock returns the block of a thinking part that came from
// Anthropic, and ok false for one that did not.
func thinkingBlock(p *nous.ContentPart) (block anthropic.ContentBlockParamUnion, ok bool, err error) {
	if p.Options[optProvider] != Provider {
		return block, false, nil
	}
	if data, _ := p.Options[optRedacted].(string); data != "" {
		return anthropic.NewRedactedThinkingBlock(data), true, nil
	}
	signature, _ := p.Options[optSignature].(string)
	if signature == "" {
		return block, false, nil
	}
	if d, _ := p.Options[optDigest].(string); d != "" && d != digest(p.Content) {
		return block, false, ErrEditedThinking
	}
	return anthropic.NewThinkingBlock(signature, p.Content), true, nil
}

// toolResult returns the tool_result block of a tool message: its text and
// images as content, none when it has none.
func toolResult(m *nous.Message) (anthropic.ContentBlockParamUnion, error) {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.IsError() {
		r.IsError = anthropic.Bool(true)
	}
	if !adapt.Blank(m.Content) {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: m.Content}})
	}
	for k, p := range m.Parts {
		block, ok, err := partBlock(&p)
		if err != nil {
			return anthropic.ContentBlockParamUnion{}, adapt.CallError{ID: m.ToolCallID, Err: fmt.Errorf("part %d: %w", k, err)}
		}
		switch {
		case !ok:
		case block.OfText != nil:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: block.OfText})
		case block.OfImage != nil:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: block.OfImage})
		case block.OfDocument != nil:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfDocument: block.OfDocument})
		}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}, nil
}
