package nousotel

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/nous-go/nous"
)

// Redacted is what content carries in place of a value its key names a
// secret, and of a secret of the context's deps wherever it appears.
const Redacted = "[REDACTED]"

// minSecret is the length under which a secret of the deps is not looked
// for in text: a shorter one would mask ordinary words.
const minSecret = 4

// content makes the content attributes of a context's spans, redacted.
type content struct {
	c       *nous.Context
	rule    func(key string) bool
	secrets []string // the deps' secret strings, longest first
}

func newContent(t *Tracer, c *nous.Context) *content {
	k := &content{c: c, rule: c.Redact}
	if k.rule == nil {
		k.rule = t.rule
	}
	if k.rule == nil {
		k.rule = nous.IsSecretKey
	}
	k.refresh()
	return k
}

// refresh collects the strings of the deps the rule names secrets, at
// any depth, as they are now.
func (k *content) refresh() {
	k.secrets = k.secrets[:0]
	k.collect(k.c.Deps, false)
	slices.SortFunc(k.secrets, func(a, b string) int { return len(b) - len(a) })
	k.secrets = slices.Compact(k.secrets)
}

func (k *content) collect(v any, secret bool) {
	switch v := v.(type) {
	case string:
		if secret && len(v) >= minSecret {
			k.secrets = append(k.secrets, v)
		}
	case map[string]any:
		for key, x := range v {
			k.collect(x, secret || k.rule(key))
		}
	case []any:
		for _, x := range v {
			k.collect(x, secret)
		}
	case nil, bool, int, int64, float64:
	default:
		// A typed value (a struct, a map of strings, a pointer to one),
		// walked by reflection: a value JSON cannot hold (a func field)
		// still has its strings looked at.
		k.walk(reflect.ValueOf(v), secret, 0)
	}
}

// maxDepth bounds the walk of a typed value, which may hold itself.
const maxDepth = 32

// walk collects the secret strings of a typed value: those under a key,
// a field's JSON name or its Go name, that the rule names.
func (k *content) walk(v reflect.Value, secret bool, depth int) {
	if depth > maxDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if secret && v.Len() >= minSecret {
			k.secrets = append(k.secrets, v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			k.walk(v.Elem(), secret, depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			key := it.Key()
			named := secret
			if key.Kind() == reflect.String {
				named = named || k.rule(key.String())
			}
			k.walk(it.Value(), named, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes: no text a secret is looked for in
		}
		for i := range v.Len() {
			k.walk(v.Index(i), secret, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			k.walk(v.Field(i), secret || k.rule(f.Name) || name != "" && k.rule(name), depth+1)
		}
	}
}

// mask replaces every secret of the deps in s.
func (k *content) mask(s string) string {
	for _, secret := range k.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}

// value returns the JSON value raw redacted: the values of the keys the
// rule names replaced, and secrets masked in every string; raw that is
// not JSON is text, masked.
func (k *content) value(raw string) any {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return k.mask(k.broken(raw))
	}
	return k.redact(v)
}

// text returns raw as a status description may hold it: a JSON value
// redacted and written again, other text masked.
func (k *content) text(raw string) string {
	switch v := k.value(raw).(type) {
	case string:
		return v
	default:
		return encode(v)
	}
}

// quotedKey matches a quoted string followed by a colon: a key, in JSON
// or in what a model sent for JSON.
var quotedKey = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*`)

// broken returns text that is not JSON (a model's arguments cut short,
// say) with the value after each key the rule names replaced: a quoted
// value to its closing quote or the text's end, another to the next
// comma or bracket.
func (k *content) broken(raw string) string {
	var b strings.Builder
	last := 0
	for _, m := range quotedKey.FindAllStringSubmatchIndex(raw, -1) {
		if m[0] < last || !k.rule(raw[m[2]:m[3]]) {
			continue
		}
		start, end := m[1], len(raw)
		if start < len(raw) && raw[start] == '"' {
			for i := start + 1; i < len(raw); i++ {
				if raw[i] == '\\' {
					i++
				} else if raw[i] == '"' {
					end = i + 1
					break
				}
			}
		} else if i := strings.IndexAny(raw[start:], ",}]"); i >= 0 {
			end = start + i
		}
		b.WriteString(raw[last:start])
		b.WriteString(`"` + Redacted + `"`)
		last = end
	}
	if last == 0 {
		return raw
	}
	b.WriteString(raw[last:])
	return b.String()
}

func (k *content) redact(v any) any {
	switch v := v.(type) {
	case string:
		return k.mask(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, x := range v {
			if k.rule(key) {
				x = Redacted
			} else {
				x = k.redact(x)
			}
			out[k.mask(key)] = x // a secret may be a key too
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = k.redact(x)
		}
	}
	return v
}

// part is one part of a message in the conventions' JSON schemas of
// input and output messages.
type part struct {
	Type     string `json:"type"`
	Content  any    `json:"content,omitempty"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	Args     any    `json:"arguments,omitempty"`
	Response *any   `json:"response,omitempty"` // set on a tool_call_response part, even to null
	Modality string `json:"modality,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// message is a message in the conventions' JSON schemas.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	Name         string `json:"name,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// message returns m as the conventions write it, redacted.
func (k *content) message(m *nous.Message) message {
	out := message{Role: string(m.Role), Parts: []part{}}
	if m.Role == nous.RoleTool {
		r := k.value(m.Text())
		out.Parts = append(out.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: &r})
		return out
	}
	if m.Role != nous.RoleAssistant {
		out.Name = m.Name
	}
	if m.ReasoningContent != "" {
		out.Parts = append(out.Parts, part{Type: "reasoning", Content: k.mask(m.ReasoningContent)})
	}
	if m.Content != "" {
		out.Parts = append(out.Parts, part{Type: "text", Content: k.mask(m.Content)})
	}
	for _, p := range m.Parts {
		out.Parts = append(out.Parts, k.part(p))
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		out.Parts = append(out.Parts, part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Args: k.arguments(tc)})
	}
	return out
}

// part returns p as the conventions write it: a text, a reasoning, a URI
// or a blob part, or a part of its own type holding its content.
func (k *content) part(p nous.ContentPart) part {
	media, _ := p.Options["media_type"].(string)
	switch p.Type {
	case nous.PartText:
		return part{Type: "text", Content: k.mask(p.Content)}
	case nous.PartThinking:
		return part{Type: "reasoning", Content: k.mask(p.Content)}
	case nous.PartImageURL:
		return part{Type: "uri", Modality: "image", URI: k.mask(p.Content), MIMEType: media}
	case nous.PartImage:
		return part{Type: "blob", Modality: "image", Content: p.Content, MIMEType: media}
	}
	return part{Type: string(p.Type), Content: k.mask(p.Content), MIMEType: media}
}

// arguments returns a call's arguments redacted: an object when they are
// one, their text otherwise.
func (k *content) arguments(tc *nous.ToolCall) any {
	if len(tc.Arguments) == 0 {
		return map[string]any{}
	}
	return k.value(string(tc.Arguments))
}

// chat returns the content attributes of a model call: the system
// prompt, the messages the view gained since the previous call, and the
// reply.
func (k *content) chat(input []nous.Message, reply *nous.Message) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if p := k.c.SystemPrompt; p != "" {
		attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(encode([]part{{Type: "text", Content: k.mask(p)}})))
	}
	msgs := make([]message, len(input))
	for i := range input {
		msgs[i] = k.message(&input[i])
	}
	attrs = append(attrs, semconv.GenAIInputMessagesKey.String(encode(msgs)))
	if reply != nil {
		out := k.message(reply)
		out.FinishReason = finishReason(reply)
		if out.FinishReason == "" {
			out.FinishReason = "stop"
			if reply.HasToolCalls() {
				out.FinishReason = "tool_call"
			}
		}
		attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(encode([]message{out})))
	}
	return attrs
}

// tool returns the content attributes of a tool call: its arguments and
// its result.
func (k *content) tool(call *nous.ToolCall, result *nous.Message) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GenAIToolCallArgumentsKey.String(encode(k.arguments(call))),
		semconv.GenAIToolCallResultKey.String(encode(k.value(result.Text()))),
	}
}

// encode returns v's JSON, with <, > and & as they are.
func encode(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
