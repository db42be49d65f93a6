package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// modelParts returns the parts of an assistant message: Gemini's thoughts,
// its text, its images and files, then its function calls, each with the
// signature it came with; or in the order the response had them, with the
// parts [Message] kept whole, when it recorded it.
func modelParts(m *nous.Message) ([]*genai.Part, error) {
	thoughts, media, err := thoughtsAndMedia(m)
	if err != nil {
		return nil, err
	}
	calls, err := functionCalls(m)
	if err != nil {
		return nil, err
	}
	return inOrder(m, thoughts, textSlots(m), media, calls)
}

// inOrder returns the parts of an assistant message, its thoughts, text,
// media and function calls (each keyed "call:ID" by the call's own ID), in
// the order [Message] recorded, with the parts it kept whole; what the
// order does not name (the message was changed) comes after, in the default
// layout. A nil part (blank text or a blank thought, without a signature)
// keeps its place in the order but is not sent.
func inOrder(m *nous.Message, thoughts, texts, media []*genai.Part, calls []adapt.Slot[*genai.Part]) ([]*genai.Part, error) {
	slots := make([]adapt.Slot[*genai.Part], 0, len(thoughts)+len(texts)+len(media)+len(calls))
	for _, kind := range []struct {
		key   string
		parts []*genai.Part
	}{{kindThought, thoughts}, {kindText, texts}, {kindMedia, media}} {
		for _, p := range kind.parts {
			slots = append(slots, adapt.Slot[*genai.Part]{Item: p, Key: kind.key, Kind: true})
		}
	}
	slots = append(slots, calls...)
	kept, _ := m.Metadata[MetadataParts].([]any)
	out, err := adapt.Replay(recorded(m.Metadata[MetadataPartOrder]), slots, func(entry string) (*genai.Part, bool, error) {
		if k, ok := strings.CutPrefix(entry, kindKept+":"); ok {
			p, err := keptPart(kept, k)
			return p, p != nil, err
		}
		return nil, false, nil
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, isNil), nil
}

// recorded returns the entries of the order a message's Metadata holds (v)
// as keys, each read as text up to its first ":", its kind, and after it:
// a thought's, a text's or a media part's key is its kind, whatever
// follows; a call's and a kept part's, "kind:" and what follows.
func recorded(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = fmt.Sprint(e)
		switch kind, arg, _ := strings.Cut(out[i], ":"); kind {
		case kindThought, kindText, kindMedia:
			out[i] = kind
		case kindCall, kindKept:
			out[i] = kind + ":" + arg
		}
	}
	return out
}

// thoughtsAndMedia returns the thought parts (Gemini's) and the media parts
// of an assistant message's parts, in order, each with its signature, and
// an error for a part a model turn cannot hold. A blank thought without a
// signature is a nil part, which keeps its place in a recorded order.
func thoughtsAndMedia(m *nous.Message) (thoughts, media []*genai.Part, err error) {
	for k, p := range m.Parts {
		switch p.Type {
		case nous.PartText:
		case nous.PartThinking:
			if p.Options[nous.OptionProvider] != Provider {
				continue
			}
			sig, err := signature(p.Options)
			if err != nil {
				return nil, nil, fmt.Errorf("part %d: %w", k, err)
			}
			var part *genai.Part
			if !adapt.Blank(p.Content) || sig != nil {
				part = &genai.Part{Text: p.Content, Thought: true, ThoughtSignature: sig}
			}
			thoughts = append(thoughts, part)
		case nous.PartImage, nous.PartFile, nous.PartImageURL, nous.PartFileURL:
			part, err := mediaPart(&p)
			if err == nil {
				part.ThoughtSignature, err = signature(p.Options)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("part %d: %w", k, err)
			}
			media = append(media, part)
		default:
			return nil, nil, fmt.Errorf("part %d: a %s part in an assistant message: %w", k, p.Type, ErrUnsupported)
		}
	}
	return thoughts, media, nil
}

// functionCalls returns the functionCall parts of an assistant message's
// tool calls, each with its signature, keyed by the call's ID.
func functionCalls(m *nous.Message) ([]adapt.Slot[*genai.Part], error) {
	var out []adapt.Slot[*genai.Part]
	for _, tc := range m.ToolCalls {
		part, err := functionCall(&tc)
		if err != nil {
			return nil, adapt.CallError{ID: tc.ID, Err: err}
		}
		out = append(out, adapt.Slot[*genai.Part]{Item: part, Key: kindCall + ":" + tc.ID})
	}
	return out, nil
}

// functionCall returns the functionCall part of a tool call: its arguments
// as an object (adapt.Object: the log keeps them as they came), their
// numbers as written; the ID Gemini gave it, if any; and its signature.
func functionCall(tc *nous.ToolCall) (*genai.Part, error) {
	var args map[string]any
	d := json.NewDecoder(bytes.NewReader(adapt.Object(tc.Arguments)))
	d.UseNumber() // as written; the SDK may still round what it sends
	if err := d.Decode(&args); err != nil {
		return nil, fmt.Errorf("arguments that do not decode as an object (%v): %w", err, nous.ErrInvalidArguments)
	}
	sig, err := signature(tc.Metadata)
	if err != nil {
		return nil, err
	}
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: geminiID(tc), Name: adapt.Name(tc.Name), Args: args}, ThoughtSignature: sig}, nil
}

func isNil(p *genai.Part) bool { return p == nil }

// textSlots returns a part for its Content, when it has one, and for each
// text part of an assistant message, in order: the part to send, with its
// signature, or nil for blank text without one, so that the order
// [Message] recorded still names each by its place.
func textSlots(m *nous.Message) []*genai.Part {
	var out []*genai.Part
	if m.Content != "" {
		var p *genai.Part
		if !adapt.Blank(m.Content) {
			p = &genai.Part{Text: m.Content}
		}
		out = append(out, p)
	}
	for _, p := range m.Parts {
		if p.Type == nous.PartText {
			var part *genai.Part
			if sig, _ := signature(p.Options); !adapt.Blank(p.Content) || sig != nil {
				part = &genai.Part{Text: p.Content, ThoughtSignature: sig}
			}
			out = append(out, part)
		}
	}
	return out
}

// keptPart returns the part [Message] kept whole at index k of kept, nil
// when there is none (the message was changed since).
func keptPart(kept []any, k string) (*genai.Part, error) {
	i, err := strconv.Atoi(k)
	if err != nil || i < 0 || i >= len(kept) {
		return nil, nil
	}
	raw, _ := kept[i].(string)
	var p genai.Part
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, fmt.Errorf("the message's Metadata[%q][%d] is not the JSON of a part (%v): put back what Message recorded, or delete the message's %q and %q: %w",
			MetadataParts, i, err, MetadataParts, MetadataPartOrder, ErrUnsupported)
	}
	return &p, nil
}
