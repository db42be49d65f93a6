package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Contents returns the contents of c's view, with its overlay, and sets
// config.SystemInstruction to its system prompt and leading system
// messages, by the rules of the package doc; the rest of config is the
// caller's. A view the API would refuse is an [*Error], and config is left
// as it was.
func Contents(c *nous.Context, config *genai.GenerateContentConfig) ([]*genai.Content, error) {
	if err := adapt.Pairing(Provider, c); err != nil {
		return nil, err
	}
	var system []*genai.Part
	if prompt := adapt.Prompt(c); prompt != "" {
		system = append(system, &genai.Part{Text: prompt})
	}
	var b builder
	names := map[string]string{} // the name of each call, by ID
	order := map[string]int{}    // the place of each call in the view
	calls := 0
	leading := true
	for i, m := range c.All() {
		var err error
		switch m.Role {
		case nous.RoleSystem:
			if err = adapt.SystemOnlyText(&m, ErrUnsupported); err != nil {
				break
			}
			if leading {
				system = append(system, textParts(&m)...)
				continue
			}
			b.add(genai.RoleUser, textParts(&m)...)
		case nous.RoleUser:
			var parts []*genai.Part
			parts, err = userParts(&m)
			b.add(genai.RoleUser, parts...)
		case nous.RoleAssistant:
			var parts []*genai.Part
			parts, err = modelParts(&m, names)
			for _, tc := range m.ToolCalls {
				order[tc.ID] = calls // an ID used again, in a later turn, takes its new place
				calls++
			}
			if err == nil && len(m.ToolCalls) > 0 && !b.hasUser() {
				err = adapt.CallError{ID: m.ToolCalls[0].ID, Err: fmt.Errorf("a function call turn before any user turn: %w", ErrUnsupported)}
			}
			b.add(genai.RoleModel, parts...)
		case nous.RoleTool:
			var part *genai.Part
			if part, err = functionResponse(&m, names); err == nil {
				b.add(genai.RoleUser, part)
				b.inCallOrder(order)
			}
		default:
			err = fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
		}
		if err != nil {
			return nil, adapt.Wrap(Provider, i, err)
		}
		leading = false
	}
	if config == nil && len(system) > 0 {
		return nil, fmt.Errorf("gemini: the view has a system instruction and config is nil: %w", ErrUnsupported)
	}
	if config != nil {
		config.SystemInstruction = nil
		if len(system) > 0 {
			config.SystemInstruction = &genai.Content{Parts: system}
		}
	}
	return b.contents, nil
}

// builder collects contents, consecutive parts of one role in one content.
type builder struct {
	contents []*genai.Content
}

// hasUser reports whether a user content was added.
func (b *builder) hasUser() bool {
	for _, c := range b.contents {
		if c.Role == genai.RoleUser {
			return true
		}
	}
	return false
}

func (b *builder) add(role string, parts ...*genai.Part) {
	if len(parts) == 0 {
		return
	}
	if n := len(b.contents); n > 0 && b.contents[n-1].Role == role {
		b.contents[n-1].Parts = append(b.contents[n-1].Parts, parts...)
		return
	}
	b.contents = append(b.contents, &genai.Content{Role: role, Parts: parts})
}

// inCallOrder moves the functionResponse part just added before those of
// later calls: the API matches responses to calls by their order too (the
// IDs of calls it gave none are this package's).
func (b *builder) inCallOrder(order map[string]int) {
	parts := b.contents[len(b.contents)-1].Parts
	for i := len(parts) - 1; i > 0; i-- {
		prev, cur := parts[i-1].FunctionResponse, parts[i].FunctionResponse
		if prev == nil || order[prev.ID] <= order[cur.ID] {
			break
		}
		parts[i-1], parts[i] = parts[i], parts[i-1]
	}
}

// textParts returns the text parts of m, its Content then its text parts,
// each that is not blank, with the thought signature a text part carries.
func textParts(m *nous.Message) []*genai.Part {
	return slices.DeleteFunc(textSlots(m), isNil)
}

// userParts returns the parts of a user message: its text, then its parts
// in order.
func userParts(m *nous.Message) ([]*genai.Part, error) {
	var out []*genai.Part
	if !adapt.Blank(m.Content) {
		out = append(out, &genai.Part{Text: m.Content})
	}
	for k, p := range m.Parts {
		part, err := mediaPart(&p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", k, err)
		}
		if part != nil {
			out = append(out, part)
		}
	}
	return out, nil
}

// mediaPart returns the part of a user part, nil for blank text.
func mediaPart(p *nous.ContentPart) (*genai.Part, error) {
	media, _ := p.Options["media_type"].(string)
	switch p.Type {
	case nous.PartText:
		if adapt.Blank(p.Content) {
			return nil, nil
		}
		return &genai.Part{Text: p.Content}, nil
	case nous.PartImage, nous.PartFile, nous.PartImageURL, nous.PartFileURL:
		data, isURL := p.Content, p.Type == nous.PartImageURL || p.Type == nous.PartFileURL
		if isURL && !strings.HasPrefix(data, "data:") {
			if media == "" {
				return nil, fmt.Errorf("a %s part without Options[\"media_type\"], which the API needs for a URL: %w", p.Type, ErrUnsupported)
			}
			return &genai.Part{FileData: &genai.FileData{FileURI: data, MIMEType: media}}, nil
		}
		if rest, ok := strings.CutPrefix(data, "data:"); ok {
			head, body, _ := strings.Cut(rest, ",")
			media, data = strings.TrimSuffix(head, ";base64"), body
		}
		if media == "" {
			return nil, fmt.Errorf("a %s part without Options[\"media_type\"]: %w", p.Type, ErrUnsupported)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("a %s part whose data is not base64: %v: %w", p.Type, err, ErrUnsupported)
		}
		return &genai.Part{InlineData: &genai.Blob{MIMEType: media, Data: raw}}, nil
	}
	return nil, fmt.Errorf("a %s part in a user message: %w", p.Type, ErrUnsupported)
}

// functionResponse returns the functionResponse part of a tool message:
// its text when that is a JSON object, {"output": text} otherwise, or
// {"error": text} for an error result; named after its call; its images and
// files as the response's parts.
func functionResponse(m *nous.Message, names map[string]string) (*genai.Part, error) {
	text := m.Content
	var media []*genai.FunctionResponsePart
	for k, p := range m.Parts {
		if p.Type == nous.PartText {
			text += p.Content
			continue
		}
		part, err := mediaPart(&p)
		if err != nil {
			return nil, adapt.CallError{ID: m.ToolCallID, Err: fmt.Errorf("part %d: %w", k, err)}
		}
		if part.InlineData != nil {
			media = append(media, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: part.InlineData.MIMEType, Data: part.InlineData.Data}})
		} else {
			media = append(media, &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: part.FileData.FileURI, MIMEType: part.FileData.MIMEType}})
		}
	}
	var response map[string]any
	key := "output"
	if m.IsError() {
		key = "error"
	} else if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
		d := json.NewDecoder(strings.NewReader(t))
		d.UseNumber()
		if d.Decode(&response) != nil || d.More() {
			response = nil
		}
	}
	if response == nil {
		response = map[string]any{key: text}
	}
	name := names[m.ToolCallID] // the call's name: the API matches the two
	if name == "" {
		name = m.Name
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: name, Response: response, Parts: media}}, nil
}
