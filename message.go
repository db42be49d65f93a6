package nous

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nous-go/nous/internal/jsonx"
)

// Role says who produced a [Message].
type Role string

// The four roles a message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the four known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// PartType says what a [ContentPart] holds.
type PartType string

// The kinds of content part. What ContentPart.Content holds depends on the
// type: text, a URL, base64 data or a path.
const (
	PartText     PartType = "text"
	PartImageURL PartType = "image_url"
	PartImage    PartType = "image" // base64 data; Options["media_type"] names the type
	PartFile     PartType = "file"
	PartFileURL  PartType = "file_url"
	PartThinking PartType = "thinking" // Options carry the provider's signature, byte for byte
)

// Valid reports whether t is one of the known part types.
func (t PartType) Valid() bool {
	switch t {
	case PartText, PartImageURL, PartImage, PartFile, PartFileURL, PartThinking:
		return true
	}
	return false
}

// ContentPart is one piece of multi-modal content.
//
// Options carry whatever the provider needs back unchanged, such as
// "media_type" for an image or the signature of a thinking block. The log
// stores them as given and the JSON format writes them back byte for byte
// when they are strings.
type ContentPart struct {
	Type    PartType       `json:"type"`             // what Content holds
	Content string         `json:"content"`          // text, a URL, base64 data or a path, by Type
	Options map[string]any `json:"options,omitzero"` // provider data, kept as given
}

// TextPart returns a text content part.
func TextPart(text string) ContentPart { return ContentPart{Type: PartText, Content: text} }

// ImageURLPart returns an image content part that refers to url.
func ImageURLPart(url string) ContentPart { return ContentPart{Type: PartImageURL, Content: url} }

// ThinkingPart returns a thinking part carrying a signature in
// Options[OptionSignature] (omitted when empty), to show a model's thinking
// or to record it from a source of its own. No provider adapter sends such a
// part back: it does not say which provider's model made it
// ([OptionProvider]), and a signature goes only to the provider that can
// check it. The part an adapter reads from its API's reply is the one it
// sends back; provider/anthropic's ThinkingPart makes one from a thinking
// block's text and signature.
func ThinkingPart(text, signature string) ContentPart {
	p := ContentPart{Type: PartThinking, Content: text}
	if signature != "" {
		p.Options = map[string]any{OptionSignature: signature}
	}
	return p
}

// UnmarshalJSON decodes a part; whole numbers in Options decode as int.
func (p *ContentPart) UnmarshalJSON(b []byte) error {
	var w partJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.decode(p)
}

// partJSON is a [ContentPart] as read from JSON, before the number rule is
// applied to its Options. Decoders of many parts decode into it directly, so
// that the JSON decoder does not check each part's bytes a second time, as
// it would for a nested UnmarshalJSON.
type partJSON struct {
	Type    PartType        `json:"type"`
	Content string          `json:"content"`
	Options json.RawMessage `json:"options"`
}

func (w *partJSON) decode(p *ContentPart) error {
	opts, err := jsonx.DecodeMap(w.Options)
	if err != nil {
		return fmt.Errorf("options: %w", err)
	}
	*p = ContentPart{Type: w.Type, Content: w.Content, Options: opts}
	return nil
}

// hasContent reports whether p carries anything: content or options.
func (p ContentPart) hasContent() bool { return p.Content != "" || len(p.Options) > 0 }

// ToolCall is a model's request to run a tool.
//
// Its JSON encoding writes Arguments as the object they are when they are a
// compact JSON object, and otherwise as a string holding their bytes
// exactly: arguments with white space, or that a model sent malformed,
// survive a save and a load byte for byte, so the request after a resume is
// the one before it.
type ToolCall struct {
	ID   string `json:"id"`   // the provider's ID, which the tool's result names
	Name string `json:"name"` // the tool's name
	// Arguments are the call's arguments as the model sent them, a JSON
	// object when the model got it right; nil when the call has none. Read
	// them with [ToolCall.ParseArguments].
	Arguments json.RawMessage `json:"arguments,omitzero"`
	// Metadata holds provider data that must round-trip, such as Gemini's
	// thought signature on a function call.
	Metadata map[string]any `json:"metadata,omitzero"`
}

// MarshalJSON encodes tc as the format has it: Arguments as an object when
// they are a compact JSON object, as a string holding their bytes otherwise.
func (tc ToolCall) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	w := newJSONWriter(&b)
	w.toolCall(&tc)
	return b.Bytes(), w.err
}

// ParseArguments decodes the call's arguments into v, as json.Unmarshal
// would; absent arguments decode as {}. Arguments that are not a JSON object,
// as a model sometimes sends, or that do not fit v, are an error wrapping
// [ErrInvalidArguments] naming the call: a runtime answers such a call with
// an error result (see [ToolErrorMessage]) so that the model tries again.
func (tc ToolCall) ParseArguments(v any) error {
	args, err := tc.ArgumentsObject()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("nous: tool call %q (%s): %v: %w", tc.ID, tc.Name, err, ErrInvalidArguments)
	}
	return nil
}

// ArgumentsObject returns the call's arguments as a tool reads them: a
// JSON object, "{}" when they are empty. Arguments that are not a JSON
// object (a model that stopped halfway, an array, a string) are an error
// wrapping [ErrInvalidArguments], as which object was meant cannot be told:
// the tool answers with an error result, and the model tries again. The
// provider adapters still send such a call, each by a rule its package doc
// gives, and the log keeps the arguments as they came.
func (tc ToolCall) ArgumentsObject() (json.RawMessage, error) {
	if len(tc.Arguments) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !jsonx.IsObject(tc.Arguments) {
		return nil, fmt.Errorf("nous: tool call %q (%s): arguments %.80q are not a JSON object: %w", tc.ID, tc.Name, tc.Arguments, ErrInvalidArguments)
	}
	return tc.Arguments, nil
}

// UnmarshalJSON decodes a tool call; whole numbers in Metadata decode as int.
// Arguments written as a string are its bytes.
func (tc *ToolCall) UnmarshalJSON(b []byte) error {
	var w toolCallJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.decode(tc)
}

// toolCallJSON is a [ToolCall] as read from JSON; see [partJSON].
type toolCallJSON struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Metadata  json.RawMessage `json:"metadata"`
	// Invalid holds the arguments as the model sent them when the reference
	// library could not parse them (its arguments are then {}).
	Invalid *string `json:"_invalid_arguments"`
}

func (w *toolCallJSON) decode(tc *ToolCall) error {
	md, err := jsonx.DecodeMap(w.Metadata)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	*tc = ToolCall{ID: w.ID, Name: w.Name, Metadata: md}
	switch a := w.Arguments; {
	case w.Invalid != nil:
		tc.Arguments = json.RawMessage(*w.Invalid)
	case len(a) > 0 && a[0] == '"':
		var s string
		if err := json.Unmarshal(a, &s); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
		if s != "" {
			tc.Arguments = json.RawMessage(s)
		}
	case len(a) > 0 && !bytes.Equal(a, []byte("null")):
		tc.Arguments = a
	}
	return nil
}

// Message is one entry of the conversation a model sees.
//
// A Message is a plain value. The context copies every message it is given,
// maps and slices included, so changing a message after adding it never
// changes the context.
type Message struct {
	Role             Role           `json:"role"`                       // who produced the message
	Content          string         `json:"content,omitzero"`           // plain text content
	Parts            []ContentPart  `json:"parts,omitzero"`             // multi-modal content, instead of or with Content
	ReasoningContent string         `json:"reasoning_content,omitzero"` // the model's reasoning as plain text
	ToolCalls        []ToolCall     `json:"tool_calls,omitzero"`        // assistant only
	ToolCallID       string         `json:"tool_call_id,omitzero"`      // tool only, required there
	Name             string         `json:"name,omitzero"`              // the tool's name on a tool message, or a participant's
	Metadata         map[string]any `json:"metadata,omitzero"`          // provider and application data, kept as given
	CreatedAt        time.Time      `json:"created_at,omitzero"`        // when the message was made; stamped when added if zero
}

// now is the clock of the package: UTC without a monotonic reading, so that a
// time survives a JSON round trip unchanged.
func now() time.Time { return time.Now().UTC() }

// SystemMessage returns a system message stamped with the current time.
func SystemMessage(text string) Message {
	return Message{Role: RoleSystem, Content: text, CreatedAt: now()}
}

// UserMessage returns a user message stamped with the current time.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Content: text, CreatedAt: now()}
}

// UserMessageParts returns a multi-modal user message stamped with the
// current time. The parts slice is copied.
func UserMessageParts(parts ...ContentPart) Message {
	return Message{Role: RoleUser, Parts: slices.Clone(parts), CreatedAt: now()}
}

// AssistantMessage returns an assistant message, possibly carrying tool
// calls, stamped with the current time. The calls slice is copied.
func AssistantMessage(text string, calls ...ToolCall) Message {
	return Message{Role: RoleAssistant, Content: text, ToolCalls: slices.Clone(calls), CreatedAt: now()}
}

// ToolMessage returns the result of the tool call callID, made by the tool
// name, stamped with the current time.
func ToolMessage(callID, name, content string) Message {
	return Message{Role: RoleTool, Content: content, ToolCallID: callID, Name: name, CreatedAt: now()}
}

// MetadataIsError is the Metadata key, set to true, that marks a tool result
// as an error: the tool failed, or its call could not be run. Provider
// adapters send it as the provider's error flag (Anthropic's is_error).
const MetadataIsError = "is_error"

// ToolErrorMessage returns the result of the tool call callID, made by the
// tool name, that reports an error: a tool message whose content says what
// went wrong, with Metadata[MetadataIsError] = true.
func ToolErrorMessage(callID, name, content string) Message {
	m := ToolMessage(callID, name, content)
	m.Metadata = map[string]any{MetadataIsError: true}
	return m
}

// IsError reports whether m is a tool result marked as an error with
// [MetadataIsError].
func (m Message) IsError() bool { return m.Role == RoleTool && m.Metadata[MetadataIsError] == true }

// Text returns the message's text: Content when it is not empty, otherwise
// the content of its text parts joined together.
func (m Message) Text() string {
	if m.Content != "" {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Content)
		}
	}
	return b.String()
}

// HasToolCalls reports whether the message carries at least one tool call.
func (m Message) HasToolCalls() bool { return len(m.ToolCalls) > 0 }

// Validate reports whether m can enter a conversation. The error wraps
// [ErrInvalidMessage] and says which rule m breaks:
//
//   - the role is one of the four roles;
//   - a tool message carries a ToolCallID, and no other role does;
//   - only an assistant message carries tool calls, each with an ID; its
//     Arguments may be anything the model sent (see [ToolCall.ParseArguments]);
//   - a user or system message has content: Content, or a part with
//     content or options (a redacted thinking block carries only options);
//     an assistant message may carry only tool calls, or nothing while
//     streaming, and a tool message may be empty, as a tool may return
//     nothing;
//   - every part has a known type.
func (m Message) Validate() error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("nous: %w", err)
	}
	return nil
}

// validate is Validate without the package prefix, for callers that wrap
// its error in their own.
func (m Message) validate() error {
	if !m.Role.Valid() {
		return fmt.Errorf("role %q is not system, user, assistant or tool: %w", m.Role, ErrInvalidMessage)
	}
	if m.Role == RoleTool && m.ToolCallID == "" {
		return fmt.Errorf("tool message without a tool call id: %w", ErrInvalidMessage)
	}
	if m.Role != RoleTool && m.ToolCallID != "" {
		return fmt.Errorf("%s message with tool call id %q (only tool messages carry one): %w", m.Role, m.ToolCallID, ErrInvalidMessage)
	}
	if m.Role != RoleAssistant && len(m.ToolCalls) > 0 {
		return fmt.Errorf("%s message with tool calls (only assistant messages carry them): %w", m.Role, ErrInvalidMessage)
	}
	for i, tc := range m.ToolCalls {
		if tc.ID == "" {
			return fmt.Errorf("tool call %d (%q) without an id: %w", i, tc.Name, ErrInvalidMessage)
		}
	}
	for i, p := range m.Parts {
		if !p.Type.Valid() {
			return fmt.Errorf("part %d has unknown type %q: %w", i, p.Type, ErrInvalidMessage)
		}
	}
	if (m.Role == RoleUser || m.Role == RoleSystem) && m.Content == "" && !slices.ContainsFunc(m.Parts, ContentPart.hasContent) {
		return fmt.Errorf("%s message with empty content: %w", m.Role, ErrInvalidMessage)
	}
	if (m.Role == RoleUser || m.Role == RoleSystem) && m.Content == "" && !slices.ContainsFunc(m.Parts, writtenWithContent) {
		return fmt.Errorf("%s message whose only content, its parts' options, holds nothing JSON can: it would be saved empty, and refused when read back: %w", m.Role, ErrInvalidMessage)
	}
	return nil
}

// writtenWithContent reports whether p has content as it is written: text,
// or options that keep a value once what JSON cannot hold is dropped (which
// only a part without text, rarely, pays a sanitizer for).
func writtenWithContent(p ContentPart) bool {
	if p.Content != "" {
		return true
	}
	if len(p.Options) == 0 {
		return false
	}
	opts, _ := newSanitizer(nil).Top(p.Options)
	return len(opts) > 0
}

// UnmarshalJSON decodes a message; whole numbers in Metadata decode as int.
// It does not validate: call [Message.Validate].
func (m *Message) UnmarshalJSON(b []byte) error {
	var w messageJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.decode(m)
}

// messageJSON is a [Message] as read from JSON, its parts and tool calls
// included; see [partJSON]. Its JSON names are Message's (a test checks).
type messageJSON struct {
	Role             Role            `json:"role"`
	Content          string          `json:"content"`
	Parts            []partJSON      `json:"parts"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []toolCallJSON  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
	Metadata         json.RawMessage `json:"metadata"`
	CreatedAt        time.Time       `json:"created_at"`
}

func (w *messageJSON) decode(m *Message) error {
	md, err := jsonx.DecodeMap(w.Metadata)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	out := Message{
		Role: w.Role, Content: w.Content, ReasoningContent: w.ReasoningContent,
		ToolCallID: w.ToolCallID, Name: w.Name, Metadata: md, CreatedAt: w.CreatedAt,
	}
	if w.Parts != nil {
		out.Parts = make([]ContentPart, len(w.Parts))
		for i := range w.Parts {
			if err := w.Parts[i].decode(&out.Parts[i]); err != nil {
				return fmt.Errorf("parts[%d]: %w", i, err)
			}
		}
	}
	if w.ToolCalls != nil {
		out.ToolCalls = make([]ToolCall, len(w.ToolCalls))
		for i := range w.ToolCalls {
			if err := w.ToolCalls[i].decode(&out.ToolCalls[i]); err != nil {
				return fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
		}
	}
	*m = out
	return nil
}

// clone returns a deep copy of m: no map or slice of the copy is shared with
// m. A message without maps or slices is copied without allocating.
func (m Message) clone() Message {
	if m.Parts != nil {
		m.Parts = slices.Clone(m.Parts)
		for i := range m.Parts {
			m.Parts[i].Options = jsonx.CloneMap(m.Parts[i].Options)
		}
	}
	if m.ToolCalls != nil {
		m.ToolCalls = cloneToolCalls(m.ToolCalls)
	}
	m.Metadata = jsonx.CloneMap(m.Metadata)
	return m
}

// clone returns a deep copy of tc.
func (tc ToolCall) clone() ToolCall {
	if len(tc.Arguments) == 0 {
		// Empty arguments are none: nil, as documented. A non-nil empty
		// RawMessage passes Validate but cannot be encoded as JSON.
		tc.Arguments = nil
	} else {
		tc.Arguments = bytes.Clone(tc.Arguments)
	}
	tc.Metadata = jsonx.CloneMap(tc.Metadata)
	return tc
}

func cloneToolCalls(calls []ToolCall) []ToolCall {
	if calls == nil {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, tc := range calls {
		out[i] = tc.clone()
	}
	return out
}

// needsDeepCopy reports whether m holds a map or slice that clone would copy.
func (m *Message) needsDeepCopy() bool {
	return m.Parts != nil || m.ToolCalls != nil || m.Metadata != nil
}
