package nous

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/nous-go/nous/internal/jsonx"
)

// jsonWriter writes events and messages as JSON by hand: the very bytes
// encoding/json writes for them with SetEscapeHTML(false), which
// TestJSONWriterMatchesEncodingJSON and FuzzJSONWriter check, without its
// reflection, and without re-scanning what a MarshalJSON method returns
// (times and tool-call arguments). Values of type any, the maps of data,
// metadata and options, still go through encoding/json.
//
// The values written must be encodable, as the serializer's sanitizer leaves
// them: times with a four-digit year, arguments that are valid JSON.
type jsonWriter struct {
	buf     *bytes.Buffer
	enc     *json.Encoder // for values of type any
	scratch []byte
	err     error // the first error; once set, nothing more is written
}

func newJSONWriter(buf *bytes.Buffer) *jsonWriter {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false) // strings, and tool-call arguments, are written as they are
	return &jsonWriter{buf: buf, enc: enc}
}

// value writes v with encoding/json.
func (w *jsonWriter) value(v any) {
	if w.err != nil {
		return
	}
	if w.err = w.enc.Encode(v); w.err == nil {
		w.buf.Truncate(w.buf.Len() - 1) // Encode ends each value with a newline
	}
}

// key writes the key of a field after the first: a comma, the key, which
// needs no escaping, quoted, and a colon.
func (w *jsonWriter) key(k string) {
	w.buf.WriteString(`,"`)
	w.buf.WriteString(k)
	w.buf.WriteString(`":`)
}

func (w *jsonWriter) int(n int64) {
	w.scratch = strconv.AppendInt(w.scratch[:0], n, 10)
	w.buf.Write(w.scratch)
}

// time writes t as time.Time.MarshalJSON does for a time it can encode.
func (w *jsonWriter) time(t time.Time) {
	w.scratch = append(w.scratch[:0], '"')
	w.scratch = t.AppendFormat(w.scratch, time.RFC3339Nano)
	w.scratch = append(w.scratch, '"')
	w.buf.Write(w.scratch)
}

// compactObject reports whether b is a JSON object a document may hold as
// it is (see [jsonx.CompactObject]).
func (w *jsonWriter) compactObject(b []byte) bool {
	var ok bool
	w.scratch, ok = jsonx.CompactObject(w.scratch, b)
	return ok
}

// str writes s as a JSON string (see [jsonx.WriteString]).
func (w *jsonWriter) str(s string) { jsonx.WriteString(w.buf, s) }

// optStr writes the field k with the string s, unless s is empty: an
// omitzero string field.
func (w *jsonWriter) optStr(k, s string) {
	if s != "" {
		w.key(k)
		w.str(s)
	}
}

// optMap writes the field k with the map m, unless m is nil: an omitzero
// map field.
func (w *jsonWriter) optMap(k string, m map[string]any) {
	if m != nil {
		w.key(k)
		w.value(m)
	}
}

// optInt writes the field k with n, unless n is 0: an omitzero integer.
func (w *jsonWriter) optInt(k string, n int64) {
	if n != 0 {
		w.key(k)
		w.int(n)
	}
}

// writeList writes items as a JSON array, each with write.
func writeList[T any](w *jsonWriter, items []T, write func(*T)) {
	w.buf.WriteByte('[')
	for i := range items {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		write(&items[i])
	}
	w.buf.WriteByte(']')
}

// event writes e as encoding/json writes an Event.
func (w *jsonWriter) event(e *Event) {
	w.buf.WriteString(`{"seq":`)
	w.int(e.Seq)
	w.key("type")
	w.str(string(e.Type))
	w.optMap("data", e.Data)
	if e.Message != nil {
		w.key("message")
		w.message(e.Message)
	}
	w.key("created_at")
	w.time(e.CreatedAt)
	w.optInt("first", e.First)
	w.optInt("last", e.Last)
	w.optInt("after", e.After)
	if e.Call != nil {
		w.key("call")
		w.toolCall(e.Call)
	}
	w.buf.WriteByte('}')
}

// message writes m as encoding/json writes a Message.
func (w *jsonWriter) message(m *Message) {
	w.buf.WriteString(`{"role":`)
	w.str(string(m.Role))
	w.optStr("content", m.Content)
	if m.Parts != nil {
		w.key("parts")
		writeList(w, m.Parts, w.part)
	}
	w.optStr("reasoning_content", m.ReasoningContent)
	if m.ToolCalls != nil {
		w.key("tool_calls")
		writeList(w, m.ToolCalls, w.toolCall)
	}
	w.optStr("tool_call_id", m.ToolCallID)
	w.optStr("name", m.Name)
	w.optMap("metadata", m.Metadata)
	if !m.CreatedAt.IsZero() {
		w.key("created_at")
		w.time(m.CreatedAt)
	}
	w.buf.WriteByte('}')
}

// v1Message writes m in the shape of a version 1 message, as the messages
// projection holds it: role, content, tool_calls, tool_call_id, name and
// metadata, always. Content is a string, or, for a message with parts, the
// list of its parts, its Content first as a text part; null when empty.
// Version 1 has no reasoning content and no times.
func (w *jsonWriter) v1Message(m *Message) {
	w.buf.WriteString(`{"role":`)
	w.str(string(m.Role))
	w.key("content")
	switch {
	case len(m.Parts) > 0:
		w.buf.WriteByte('[')
		if m.Content != "" {
			text := TextPart(m.Content)
			w.part(&text)
		}
		for i := range m.Parts {
			if i > 0 || m.Content != "" {
				w.buf.WriteByte(',')
			}
			w.part(&m.Parts[i])
		}
		w.buf.WriteByte(']')
	case m.Content != "":
		w.str(m.Content)
	default:
		w.buf.WriteString("null")
	}
	w.key("tool_calls")
	writeList(w, m.ToolCalls, w.toolCall)
	w.key("tool_call_id")
	w.optNull(m.ToolCallID)
	w.key("name")
	w.optNull(m.Name)
	w.key("metadata")
	if m.Metadata == nil {
		w.buf.WriteString("{}")
	} else {
		w.value(m.Metadata)
	}
	w.buf.WriteByte('}')
}

// optNull writes s, or null when it is empty.
func (w *jsonWriter) optNull(s string) {
	if s == "" {
		w.buf.WriteString("null")
		return
	}
	w.str(s)
}

func (w *jsonWriter) part(p *ContentPart) {
	w.buf.WriteString(`{"type":`)
	w.str(string(p.Type))
	w.key("content")
	w.str(p.Content)
	w.optMap("options", p.Options)
	w.buf.WriteByte('}')
}

func (w *jsonWriter) toolCall(tc *ToolCall) {
	w.buf.WriteString(`{"id":`)
	w.str(tc.ID)
	w.key("name")
	w.str(tc.Name)
	if args := jsonx.ValidUTF8(tc.Arguments); len(args) > 0 {
		w.key("arguments")
		if w.compactObject(args) {
			w.buf.Write(args)
		} else {
			w.str(string(args))
		}
	}
	w.optMap("metadata", tc.Metadata)
	w.buf.WriteByte('}')
}

// encodeValue returns v's JSON as the state document and event data write
// it.
func encodeValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	jw := newJSONWriter(&buf)
	jw.value(v)
	return buf.Bytes(), jw.err
}
