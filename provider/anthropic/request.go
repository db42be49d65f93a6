package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Fill sets params.System and params.Messages to c's view, with its
// overlay, and its system prompt, by the rules of the package doc; the
// rest of params is the caller's, but for thinking: when the request ends in
// an open tool loop whose last assistant turn began without thinking that
// goes back (its calls came from another provider, or from Anthropic with
// thinking off), Fill turns thinking off for this request, as the API wants
// one thinking mode per turn: it sets params.Thinking to disabled (on
// Claude Sonnet 5.5, to between_tools) and lowers an effort of xhigh or max
// in params.OutputConfig to high. So fill a fresh copy of your base params
// for each request (params := base; Fill(&params, c)): Fill assigns those
// fields and writes through no pointer of params, so base keeps thinking on
// for the next turn. A view the API would refuse is an [*Error], and params
// is left as it was.
func Fill(params *anthropic.MessageNewParams, c *nous.Context) error {
	if err := adapt.Pairing(Provider, c); err != nil {
		return err
	}
	var view []nous.Message
	for _, m := range c.All() {
		view = append(view, m)
	}
	ids := adapt.NewCallIDs(view, toolUseID.MatchString, 0)
	var b builder
	if prompt := adapt.Prompt(c); prompt != "" {
		b.system = append(b.system, anthropic.TextBlockParam{Text: prompt})
	}
	leading := true
	byCode := map[string]bool{} // the IDs sent of the calls code made
	answeringCode := false      // the last user message answers a tool call code made
	for i := range view {
		m := &view[i]
		var err error
		switch m.Role {
		case nous.RoleSystem:
			if err = adapt.SystemOnlyText(m, ErrUnsupported); err != nil {
				err = fmt.Errorf("%w (system blocks hold text only: move the part to a user message)", err)
				break
			}
			if leading {
				b.system = append(b.system, systemBlocks(m)...)
				continue
			}
			b.addSystem(systemBlocks(m))
		case nous.RoleUser:
			var blocks []anthropic.ContentBlockParamUnion
			blocks, err = userBlocks(m)
			if err == nil && answeringCode && b.last == nous.RoleUser && len(blocks) > 0 {
				err = fmt.Errorf("user content in the message that answers a tool call code execution made, which takes tool results only (send the user's text after the model's next reply): %w", ErrUnsupported)
			}
			b.add(nous.RoleUser, blocks...)
		case nous.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			blocks, err = assistantBlocks(m, i, ids)
			b.add(nous.RoleAssistant, blocks...)
			answeringCode = false
			for k, tc := range m.ToolCalls {
				if caller, _ := tc.Metadata[MetadataCaller].(string); caller != "" {
					byCode[ids.Call(i, k, tc.ID)] = true
				}
			}
			b.paused = m.Metadata[MetadataStopReason] == "pause_turn"
		case nous.RoleTool:
			sent := ids.Result(i, m.ToolCallID)
			var block anthropic.ContentBlockParamUnion
			block, err = toolResult(m, sent)
			b.add(nous.RoleUser, block)
			answeringCode = answeringCode || byCode[sent]
		default:
			err = fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
		}
		if err != nil {
			return adapt.Wrap(Provider, i, err)
		}
		leading = false
	}
	b.answeredOnly()
	b.leadWithUser()
	b.endWithUser()
	thinking, output, msgs := thinkingFor(params, b.messages)
	params.System, params.Messages = b.system, msgs
	params.Thinking, params.OutputConfig = thinking, output
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

// leadWithUser puts a user message holding adapt.LeadText first when the
// messages do not begin with a user message (the API wants them to): a
// compacted view whose summary went into the system blocks, or the
// assistant's, so that the assistant's turn comes first; a view of system
// messages only.
func (b *builder) leadWithUser() {
	if len(b.messages) == 0 || b.messages[0].OfUser == nil {
		b.messages = slices.Insert(b.messages, 0, anthropic.NewUserMessage(anthropic.NewTextBlock(adapt.LeadText)))
	}
}

// endWithUser puts a user message holding adapt.LeadText last when the
// messages end with an assistant turn the API did not pause: a runtime
// that sends after the model's answer wants another, and the API refuses a
// final assistant message that ends in white space, and, on recent models,
// any (they take no prefill). A paused turn goes last, as the API goes on
// with it.
func (b *builder) endWithUser() {
	if n := len(b.messages); n > 0 && b.messages[n-1].OfAssistant != nil && !b.paused {
		b.messages = append(b.messages, anthropic.NewUserMessage(anthropic.NewTextBlock(adapt.LeadText)))
	}
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

// toolResult returns the tool_result block of a tool message, sent for the
// call whose ID is sent as id: its text and images as content, none when it
// has none.
func toolResult(m *nous.Message, id string) (anthropic.ContentBlockParamUnion, error) {
	r := anthropic.ToolResultBlockParam{ToolUseID: id}
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
