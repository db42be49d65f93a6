package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Params is a GenerateContent request, as client.Models.GenerateContent
// takes it: Fill fills Contents and the system instruction of Config; Model
// and the rest of Config are the caller's.
type Params struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}

// Fill sets params.Contents to the contents of c's view, with its overlay,
// and the system instruction of params.Config to its system prompt and
// leading system messages, by the rules of the package doc. Config becomes
// a copy of the caller's config with that system instruction (the config
// the caller gave is not written to, so one can serve many requests at
// once), or a new one when there is a system instruction and Config is nil.
// A view the API would refuse is an [*Error], and params is left as it
// was.
func Fill(params *Params, c *nous.Context) error {
	if params == nil || c == nil {
		return errors.New("gemini: Fill needs params and a context")
	}
	contents, system, err := build(c)
	if err != nil {
		return err
	}
	if params.Config != nil || system != nil {
		var config genai.GenerateContentConfig
		if params.Config != nil {
			config = *params.Config
		}
		config.SystemInstruction = system
		params.Config = &config
	}
	params.Contents = contents
	return nil
}

// Contents returns the contents of c's view and sets
// config.SystemInstruction, as [Fill] does; a system instruction to send
// with a nil config is an error wrapping [ErrUnsupported].
//
// Deprecated: use Fill.
func Contents(c *nous.Context, config *genai.GenerateContentConfig) ([]*genai.Content, error) {
	p := Params{Config: config}
	if err := Fill(&p, c); err != nil {
		return nil, err
	}
	if config == nil && p.Config != nil {
		return nil, fmt.Errorf("gemini: the view has a system instruction and config is nil (Fill makes a config): %w", ErrUnsupported)
	}
	if config != nil {
		config.SystemInstruction = p.Config.SystemInstruction
	}
	return p.Contents, nil
}

// build returns the contents of c's view and its system instruction (nil
// for none), or the [*Error] of a view the API would refuse.
func build(c *nous.Context) ([]*genai.Content, *genai.Content, error) {
	if err := adapt.Pairing(Provider, c); err != nil {
		return nil, nil, err
	}
	var system []*genai.Part
	if prompt := adapt.Prompt(c); prompt != "" {
		system = append(system, &genai.Part{Text: prompt})
	}
	b := builder{calls: map[string]sentCall{}}
	leading := true
	for i, m := range c.All() {
		var err error
		if m.Role != nous.RoleTool {
			b.flush()
		}
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
			if parts, err = modelParts(&m); err == nil {
				b.calls.add(&m, &b.made)
				b.add(genai.RoleModel, parts...)
			}
		case nous.RoleTool:
			var part *genai.Part
			if part, err = functionResponse(&m, b.calls[m.ToolCallID]); err == nil {
				b.results = append(b.results, result{place: b.calls[m.ToolCallID].place, part: part})
			}
		default:
			err = fmt.Errorf("role %q: %w", m.Role, ErrUnsupported)
		}
		if err != nil {
			return nil, nil, adapt.Wrap(Provider, i, err)
		}
		leading = false
	}
	b.flush()
	contents := b.contents
	if len(contents) == 0 || contents[0].Role != genai.RoleUser {
		lead := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: adapt.LeadText}}}
		contents = append([]*genai.Content{lead}, contents...)
	}
	if contents[len(contents)-1].Role == genai.RoleModel {
		// a runtime that asks again after the model's answer: recent models
		// refuse a request that ends with a model turn (they take no prefill)
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: adapt.LeadText}}})
	}
	signCurrentTurn(contents)
	if len(system) == 0 {
		return contents, nil, nil
	}
	return contents, &genai.Content{Parts: system}, nil
}

// builder collects contents: consecutive parts of one role in one content,
// except that the function responses that answer a model turn are a user
// content of their own, in the order of the calls.
type builder struct {
	contents []*genai.Content
	calls    sentCalls
	made     int      // the calls of the view so far
	results  []result // the responses of the tool messages since the model turn
}

// A sentCall is a call of the view as a request sends it.
type sentCall struct {
	name  string // its name, which its response takes
	id    string // the ID it is sent with: Gemini's, or none
	place int    // its place among the view's calls
}

// sentCalls are the calls of the view so far, by ID: for an ID used again
// in a later turn, the later call, which the results that follow answer.
type sentCalls map[string]sentCall

// add records the calls of m, an assistant message, counting them in made.
func (s sentCalls) add(m *nous.Message, made *int) {
	for _, tc := range m.ToolCalls {
		s[tc.ID] = sentCall{name: adapt.Name(tc.Name), id: geminiID(&tc), place: *made}
		*made++
	}
}

// geminiID returns the ID Gemini gave tc, as [Message] recorded it, or ""
// for a call whose ID is not Gemini's.
func geminiID(tc *nous.ToolCall) string {
	if id, _ := tc.Metadata[MetadataCallID].(string); id != "" && id == tc.ID {
		return id
	}
	return ""
}

// A result is the function response of a tool message and the place of
// its call.
type result struct {
	place int
	part  *genai.Part
}

// add adds parts of role: to the last content when it is of role and not
// function responses, else as a content of their own.
func (b *builder) add(role string, parts ...*genai.Part) {
	if len(parts) == 0 {
		return
	}
	if n := len(b.contents); n > 0 && b.contents[n-1].Role == role && !responses(b.contents[n-1]) {
		b.contents[n-1].Parts = append(b.contents[n-1].Parts, parts...)
		return
	}
	b.contents = append(b.contents, &genai.Content{Role: role, Parts: parts})
}

// flush adds the function responses of the tool messages since the model
// turn as a user content, in the order of their calls: the API matches
// responses to calls by their order (and names) when the calls carry no
// ID.
func (b *builder) flush() {
	if len(b.results) == 0 {
		return
	}
	slices.SortStableFunc(b.results, func(x, y result) int { return x.place - y.place })
	parts := make([]*genai.Part, len(b.results))
	for i, r := range b.results {
		parts[i] = r.part
	}
	b.contents = append(b.contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
	b.results = b.results[:0]
}

// responses reports whether c is a content of function responses.
func responses(c *genai.Content) bool {
	return slices.ContainsFunc(c.Parts, func(p *genai.Part) bool { return p.FunctionResponse != nil })
}

// turnStart reports whether c begins a turn, as the API reads turns when it
// checks signatures: a user content with text (not function responses
// alone). A user content of images alone is taken for none, so that a
// turn this package signs is never shorter than the API's.
func turnStart(c *genai.Content) bool {
	return c.Role == genai.RoleUser && slices.ContainsFunc(c.Parts, func(p *genai.Part) bool {
		return p.FunctionResponse == nil && p.Text != ""
	})
}

// signCurrentTurn gives the first function call of each model step of the
// current turn (the model contents after the last content that begins a
// turn) that carries no thought signature the one Google documents for
// calls the API did not make: Gemini 3 refuses the request without it.
func signCurrentTurn(contents []*genai.Content) {
	start := 0
	for i := len(contents) - 1; i >= 0; i-- {
		if turnStart(contents[i]) {
			start = i
			break
		}
	}
	for _, c := range contents[start:] {
		if c.Role != genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				if len(p.ThoughtSignature) == 0 {
					p.ThoughtSignature = bytes.Clone(skipSignature)
				}
				break
			}
		}
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
				return nil, fmt.Errorf("a %s part without Options[\"media_type\"], which the API needs for a URL: set it, or send the data inline: %w", p.Type, ErrUnsupported)
			}
			return &genai.Part{FileData: &genai.FileData{FileURI: data, MIMEType: media}}, nil
		}
		if rest, ok := strings.CutPrefix(data, "data:"); ok {
			head, body, _ := strings.Cut(rest, ",")
			media, data = strings.TrimSuffix(head, ";base64"), body
		}
		if media == "" {
			return nil, fmt.Errorf("a %s part without Options[\"media_type\"], which the API needs: set it: %w", p.Type, ErrUnsupported)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("a %s part whose data is not base64 (%v): give the data in standard base64: %w", p.Type, err, ErrUnsupported)
		}
		return &genai.Part{InlineData: &genai.Blob{MIMEType: media, Data: raw}}, nil
	}
	return nil, fmt.Errorf("a %s part, which a user content cannot hold: %w", p.Type, ErrUnsupported)
}

// functionResponse returns the functionResponse part of a tool message that
// answers call: its text (its texts joined by adapt.ResultSeparator, each on a line) when that is a
// JSON object, {"output": text} otherwise, or {"error": text} for an error
// result; named after its call, with the call's ID as sent; its images and
// files as the response's parts.
func functionResponse(m *nous.Message, call sentCall) (*genai.Part, error) {
	var texts []string
	if m.Content != "" {
		texts = append(texts, m.Content)
	}
	var media []*genai.FunctionResponsePart
	for k, p := range m.Parts {
		if p.Type == nous.PartText {
			if p.Content != "" {
				texts = append(texts, p.Content)
			}
			continue
		}
		part, err := mediaPart(&p)
		if err != nil {
			return nil, adapt.CallError{ID: m.ToolCallID, Err: fmt.Errorf("part %d of the tool result: %w", k, err)}
		}
		if part.InlineData != nil {
			media = append(media, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: part.InlineData.MIMEType, Data: part.InlineData.Data}})
		} else {
			media = append(media, &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: part.FileData.FileURI, MIMEType: part.FileData.MIMEType}})
		}
	}
	text := strings.Join(texts, adapt.ResultSeparator)
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
	name := call.name // the call's name: the API matches the two
	if name == "" {
		name = m.Name
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: call.id, Name: name, Response: response, Parts: media}}, nil
}
