package nous

import (
	"bytes"
	"maps"
	"slices"
	"time"
)

// The document Serialize writes: its shape, its writer and the estimate
// of its size. A context makes one of itself (serialize.go).

// FormatVersion is the version of the JSON format [Context.Serialize]
// writes. [Deserialize] reads it and version 1, the format of the reference
// library before it persisted the event log. FORMAT.md specifies both.
const FormatVersion = 2

// document is the format as written: writeDocument writes these fields in
// this order, each as encoding/json would (a test checks). Events use the one
// encoding of an [Event]; messages that of a [Message].
type document struct {
	Version       int            `json:"version"`
	Messages      []*Message     `json:"messages"`
	ToolCalls     []ToolCall     `json:"tool_calls"`
	SystemPrompt  string         `json:"system_prompt"`
	Deps          map[string]any `json:"deps"`
	Usage         Usage          `json:"usage"`
	NeedsResponse bool           `json:"needs_response"`
	Iteration     int            `json:"iteration"`
	MaxIterations int            `json:"max_iterations"`
	StartedAt     *time.Time     `json:"started_at"`
	AgentName     string         `json:"agent_name"`
	Log           documentLog    `json:"log"`
}

type documentLog struct {
	ID       string            `json:"id"`
	ParentID string            `json:"parent_id,omitzero"`
	ForkSeq  *int64            `json:"fork_seq,omitzero"`
	Name     string            `json:"name,omitzero"`
	Labels   map[string]string `json:"labels,omitzero"`
	Events   []Event           `json:"events"`
}

// size estimates the length of d's encoding, so that Serialize allocates
// its buffer once. The fixed part (keys, usage, times, the log ID) is about
// 340 bytes.
func (d *document) size() int {
	n := 400 + anySize(d.SystemPrompt) + anySize(d.AgentName) + anySize(d.Deps)
	for i := range d.ToolCalls {
		n += toolCallSize(&d.ToolCalls[i])
	}
	for _, m := range d.Messages {
		n += messageSize(m)
	}
	for i := range d.Log.Events {
		n += eventSize(&d.Log.Events[i])
	}
	return n
}

// eventSize, messageSize, partSize and toolCallSize estimate the length of
// the JSON encoding of their value, sanitized. Text gets a sixteenth more
// for escapes; text full of control characters, each escaped in six bytes,
// may still outgrow it.
func eventSize(e *Event) int {
	n := 96 + len(e.Type) + anySize(e.Data)
	if e.Message != nil {
		n += messageSize(e.Message)
	}
	if e.Call != nil {
		n += toolCallSize(e.Call)
	}
	return n
}

func messageSize(m *Message) int {
	n := 96 + len(m.Role) + len(m.Content) + len(m.ReasoningContent) + len(m.ToolCallID) + len(m.Name)
	n += n / 16
	for i := range m.Parts {
		n += partSize(&m.Parts[i])
	}
	for i := range m.ToolCalls {
		n += toolCallSize(&m.ToolCalls[i])
	}
	return n + anySize(m.Metadata)
}

func partSize(p *ContentPart) int {
	n := 40 + len(p.Type) + len(p.Content)
	return n + n/16 + anySize(p.Options)
}

func toolCallSize(tc *ToolCall) int {
	n := 48 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	return n + n/16 + anySize(tc.Metadata)
}

// anySize estimates the size of the JSON encoding of v, a value of a
// sanitized map; 24 bytes for a number or a value of another type.
func anySize(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return len(v) + 2 + len(v)/16
	case map[string]any:
		n := 2
		for k, x := range v {
			n += len(k) + 4 + anySize(x)
		}
		return n
	case []any:
		n := 2
		for _, x := range v {
			n += 1 + anySize(x)
		}
		return n
	}
	return 24
}

// writeDocument writes d as json.Marshal would, but one message and one event at
// a time: encoding the whole document at once would build it in a buffer of
// the encoder's that grows by doubling and is then copied, twice the memory
// of the output for a long log. A test checks the bytes are the same.
func writeDocument(buf *bytes.Buffer, w *document) error {
	jw := newJSONWriter(buf)
	buf.WriteString(`{"version":`)
	jw.int(int64(w.Version))
	buf.WriteString(`,"messages":`)
	writeList(jw, w.Messages, func(m **Message) { jw.v1Message(*m) })
	w.writeState(jw, true)
	buf.WriteString(`,"log":{"id":`)
	jw.str(w.Log.ID)
	if w.Log.ParentID != "" {
		buf.WriteString(`,"parent_id":`)
		jw.str(w.Log.ParentID)
	}
	if w.Log.ForkSeq != nil {
		buf.WriteString(`,"fork_seq":`)
		jw.int(*w.Log.ForkSeq)
	}
	if w.Log.Name != "" {
		buf.WriteString(`,"name":`)
		jw.str(w.Log.Name)
	}
	if len(w.Log.Labels) > 0 {
		buf.WriteString(`,"labels":{`)
		for i, k := range slices.Sorted(maps.Keys(w.Log.Labels)) {
			if i > 0 {
				buf.WriteByte(',')
			}
			jw.str(k)
			buf.WriteByte(':')
			jw.str(w.Log.Labels[k])
		}
		buf.WriteByte('}')
	}
	buf.WriteString(`,"events":`)
	writeList(jw, w.Log.Events, jw.event)
	buf.WriteString("}}")
	return jw.err
}

// writeState writes the plain state fields of w, each after a comma, the
// tool calls only when toolCalls is true.
func (w *document) writeState(jw *jsonWriter, toolCalls bool) { w.writeStateWith(jw, toolCalls, nil) }

// writeStateWith is writeState with deps, when not nil, writing the deps
// instead of w.Deps.
func (w *document) writeStateWith(jw *jsonWriter, toolCalls bool, deps func(jw *jsonWriter)) {
	if toolCalls {
		jw.buf.WriteString(`,"tool_calls":`)
		jw.value(w.ToolCalls)
	}
	fields := []struct {
		key   string
		value any
	}{
		{"system_prompt", w.SystemPrompt}, {"deps", w.Deps},
		{"usage", w.Usage}, {"needs_response", w.NeedsResponse}, {"iteration", w.Iteration},
		{"max_iterations", w.MaxIterations}, {"started_at", w.StartedAt}, {"agent_name", w.AgentName},
	}
	for _, f := range fields {
		jw.buf.WriteString(`,"` + f.key + `":`)
		if f.key == "deps" && deps != nil {
			deps(jw)
			continue
		}
		jw.value(f.value)
	}
}
