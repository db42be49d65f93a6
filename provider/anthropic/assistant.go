package anthropic

import (
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

// assistantBlocks returns the blocks of an assistant message, view message
// i: its thinking from Anthropic first, then its text, then its tool calls
// with the IDs ids sends; or in the order the response had them, when
// [Message] recorded it.
func assistantBlocks(m *nous.Message, i int, ids *adapt.CallIDs) ([]anthropic.ContentBlockParamUnion, error) {
	thinking, err := assistantThinking(m)
	if err != nil {
		return nil, err
	}
	text, err := assistantText(m)
	if err != nil {
		return nil, err
	}
	calls, err := toolUses(m, i, ids)
	if err != nil {
		return nil, err
	}
	return inOrder(m, thinking, text, calls)
}

// inOrder returns the blocks of an assistant message, its thinking, text
// and tool use blocks, in the order [Message] recorded, with the blocks it
// kept whole; what the order does not name (the message was changed) comes
// after, in the default layout. Blank text keeps its place in the order but
// is not sent. calls are those of m.ToolCalls, in turn: the order names each
// by the call's own ID, whatever ID it is sent with.
func inOrder(m *nous.Message, thinking, text, calls []anthropic.ContentBlockParamUnion) ([]anthropic.ContentBlockParamUnion, error) {
	slots := make([]adapt.Slot[anthropic.ContentBlockParamUnion], 0, len(thinking)+len(text)+len(calls))
	for _, b := range thinking {
		slots = append(slots, adapt.Slot[anthropic.ContentBlockParamUnion]{Item: b, Key: keyThinking, Kind: true})
	}
	for _, b := range text {
		slots = append(slots, adapt.Slot[anthropic.ContentBlockParamUnion]{Item: b, Key: keyText, Kind: true})
	}
	for k, b := range calls {
		slots = append(slots, adapt.Slot[anthropic.ContentBlockParamUnion]{Item: b, Key: keyToolUse + m.ToolCalls[k].ID})
	}
	out, err := adapt.Replay(adapt.Recorded(m.Metadata[MetadataBlockOrder]), slots, func(entry string) (anthropic.ContentBlockParamUnion, bool, error) {
		if k, ok := strings.CutPrefix(entry, keyKept); ok {
			return keptBlock(m, k)
		}
		return anthropic.ContentBlockParamUnion{}, false, nil
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, blank), nil
}

// assistantThinking returns the thinking blocks of an assistant message's
// parts that came from Anthropic, in order, and an error for a part an
// assistant turn cannot hold (another model's image or file is dropped).
func assistantThinking(m *nous.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var out []anthropic.ContentBlockParamUnion
	for k, p := range m.Parts {
		switch p.Type {
		case nous.PartThinking:
			block, ok, err := thinkingBlock(&p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w (put back the text as received, or remove the part)", k, err)
			}
			if ok {
				out = append(out, block)
			}
		case nous.PartText:
		default:
			if adapt.Foreign(&p, Provider) {
				continue // another model's image or file, which an assistant turn cannot hold here
			}
			return nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	return out, nil
}

// toolUses returns the tool_use blocks of the tool calls of m, view
// message i, with the IDs ids sends.
func toolUses(m *nous.Message, i int, ids *adapt.CallIDs) ([]anthropic.ContentBlockParamUnion, error) {
	var out []anthropic.ContentBlockParamUnion
	for k, tc := range m.ToolCalls {
		block, err := toolUse(&tc, ids.Call(i, k, tc.ID))
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		out = append(out, block)
	}
	return out, nil
}

// toolUse returns the tool_use block of a tool call, sent with ID id: its
// arguments as an object (adapt.Object), with the caller (the code that made
// the call) and the toolset its Metadata keeps.
func toolUse(tc *nous.ToolCall, id string) (anthropic.ContentBlockParamUnion, error) {
	block := anthropic.NewToolUseBlock(id, adapt.Object(tc.Arguments), adapt.Name(tc.Name))
	if caller, _ := tc.Metadata[MetadataCaller].(string); caller != "" {
		var c struct{ Type string }
		if json.Unmarshal([]byte(caller), &c) != nil || c.Type == "" {
			return anthropic.ContentBlockParamUnion{}, fmt.Errorf("a caller (Metadata[%q]) that is not the JSON of an object with a type (remove it, or put back the caller the response had): %w", MetadataCaller, ErrUnsupported)
		}
		block.OfToolUse.Caller = param.Override[anthropic.ToolUseBlockParamCallerUnion](json.RawMessage(caller))
	}
	if toolset, _ := tc.Metadata[MetadataToolset].(string); toolset != "" {
		block.OfToolUse.ToolsetName = anthropic.String(toolset)
	}
	return block, nil
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
		citations, _ := p.Options[OptionCitations].(string)
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
// message's Metadata[MetadataBlocks]; ok is false when there is none
// (the message was changed since).
func keptBlock(m *nous.Message, k string) (block anthropic.ContentBlockParamUnion, ok bool, err error) {
	blocks, _ := m.Metadata[MetadataBlocks].([]any)
	i, err := strconv.Atoi(k)
	if err != nil || i < 0 || i >= len(blocks) {
		return block, false, nil
	}
	raw, _ := blocks[i].(string)
	if block, err = sendBack([]byte(raw)); err != nil {
		return block, false, fmt.Errorf("metadata %q[%d]: %w", MetadataBlocks, i, err)
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
