package nous

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// FormatVersion is the version of the JSON format [Context.Serialize]
// writes. [Deserialize] reads it and version 1, the format of the reference
// library before it persisted the event log. FORMAT.md specifies both.
const FormatVersion = 2

// The shape of the format, as written: writeWire writes these fields in this
// order, each as encoding/json would. Events use the one encoding of an
// [Event]; messages that of a [Message].
type wireContext struct {
	Version       int        `json:"version"`
	Messages      []*Message `json:"messages"`
	ToolCalls     []ToolCall `json:"tool_calls"`
	SystemPrompt  string     `json:"system_prompt"`
	Deps          any        `json:"deps"`
	Usage         Usage      `json:"usage"`
	NeedsResponse bool       `json:"needs_response"`
	Iteration     int        `json:"iteration"`
	MaxIterations int        `json:"max_iterations"`
	StartedAt     *time.Time `json:"started_at"`
	AgentName     string     `json:"agent_name"`
	Log           wireLog    `json:"log"`
}

type wireLog struct {
	ID       string  `json:"id"`
	ParentID string  `json:"parent_id,omitzero"`
	ForkSeq  *int64  `json:"fork_seq,omitzero"`
	Events   []Event `json:"events"`
}

// Serialize returns the context as JSON in format version 2 (see FORMAT.md):
// the session log, every event of it, and the plain state (deps, usage, loop
// control), with the message view written beside the log as a projection for
// readers of version 1.
//
// Never written: the runtime-only fields (CancellationCheck, Callbacks,
// Notify, ApprovalHandler, Stream, Logger) and the system-prompt overlay;
// secrets: deps whose key contains, in any case and at any depth, one of
// api_key, apikey, token, secret, password, passwd, authorization,
// credential, private_key, access_key, auth_token or bearer, and event data
// whose key has one of those as a word (so that "input_tokens" is kept but
// "refreshToken" is not), both dropped silently, by rule; and values JSON
// cannot hold (functions, channels, complex or non-finite numbers, cycles,
// nesting deeper than 1,000 levels, ...), dropped with one warning on the
// context's logger naming them, never an error. The context itself is not
// changed: it keeps every value. Messages are not redacted: they are what the
// model saw, and the provider data in them (signatures, token counts) must
// come back unchanged.
//
// Serialize reads the log in place, copying no message; its cost is that of
// encoding the events and the view.
func (c *Context) Serialize() ([]byte, error) {
	w, size := c.wire()
	var buf bytes.Buffer
	buf.Grow(size)
	if err := writeWire(&buf, &w); err != nil {
		// Every value was checked by wire; this is a bug, not bad input.
		return nil, fmt.Errorf("nous: serialize: %w", err)
	}
	return buf.Bytes(), nil
}

// wire returns what Serialize writes, sanitized, and an estimate of its size
// in bytes. It warns of what it dropped.
func (c *Context) wire() (wireContext, int) {
	c.ready()
	s := sanitizer{}
	w := wireContext{
		Version:       FormatVersion,
		SystemPrompt:  c.SystemPrompt,
		Usage:         c.Usage,
		NeedsResponse: c.NeedsResponse,
		Iteration:     c.Iteration,
		MaxIterations: c.MaxIterations,
		AgentName:     c.AgentName,
		Log:           wireLog{ID: c.log.id.String()},
	}
	if parent, seq, ok := c.log.Parent(); ok {
		w.Log.ParentID, w.Log.ForkSeq = parent.String(), &seq
	}

	// size estimates the output, so that the buffer is allocated once: the
	// events, their messages and the view's messages (the same messages
	// again) as jsonSize and anySize count them, and the deps.
	size := 512
	events := make([]Event, 0, c.log.recs.len())
	for i, r := range c.log.recs.all {
		seq := i + 1
		var m *Message
		if r.typ.IsSurface() {
			m = &c.log.msg(r.mi).msg
		}
		size += 96
		s.root(segment{key: "log.events", index: int(i), isIndex: true})
		e := Event{Seq: seq, Type: r.typ, Data: r.data, CreatedAt: r.at, First: r.first, Last: r.last}
		if !encodableTime(r.at) {
			s.drop("created_at")
			e.CreatedAt = time.Time{}
		}
		if r.data != nil {
			s.redact = isSecretName
			s.push(segment{key: "data"})
			e.Data, _ = s.top(r.data)
			s.pop()
			s.redact = nil
			size += anySize(e.Data)
		}
		if m != nil {
			s.push(segment{key: "message"})
			e.Message = s.message(m)
			s.pop()
			size += jsonSize(e.Message)
		}
		events = append(events, e)
	}
	w.Log.Events = events

	w.Messages = make([]*Message, len(c.view))
	for i, mi := range c.view {
		w.Messages[i] = events[c.log.msg(mi).seq-1].Message
		size += jsonSize(w.Messages[i])
	}

	w.ToolCalls = c.ToolCalls
	if w.ToolCalls == nil {
		w.ToolCalls = []ToolCall{}
	}
	for i := range c.ToolCalls {
		s.root(segment{key: "tool_calls", index: i, isIndex: true})
		if tc, changed := s.toolCall(&c.ToolCalls[i]); changed {
			if &w.ToolCalls[0] == &c.ToolCalls[0] {
				w.ToolCalls = slices.Clone(c.ToolCalls)
			}
			w.ToolCalls[i] = tc
		}
	}

	s.root(segment{key: "deps"})
	s.redact = isSecretKey
	deps, _ := s.top(c.Deps)
	s.redact = nil
	size += anySize(deps)
	if deps == nil {
		w.Deps = map[string]any{}
	} else {
		w.Deps = deps
	}

	if !c.StartedAt.IsZero() {
		if encodableTime(c.StartedAt) {
			t := c.StartedAt.UTC()
			w.StartedAt = &t
		} else {
			s.root(segment{key: "started_at"})
			s.drop("")
		}
	}

	if len(s.dropped) > 0 {
		slices.Sort(s.dropped)
		c.logger().Warn("nous: serialize dropped values JSON cannot hold", "keys", s.dropped)
	}
	return w, size
}

// jsonSize estimates the size of the JSON encoding of m, sanitized. Text
// gets a sixteenth more for escapes; text full of control characters, each
// escaped in six bytes, may still outgrow it.
func jsonSize(m *Message) int {
	n := 96 + len(m.Role) + len(m.Content) + len(m.ReasoningContent) + len(m.ToolCallID) + len(m.Name)
	for i := range m.Parts {
		n += 40 + len(m.Parts[i].Type) + len(m.Parts[i].Content) + anySize(m.Parts[i].Options)
	}
	for i := range m.ToolCalls {
		n += 48 + len(m.ToolCalls[i].ID) + len(m.ToolCalls[i].Name) + len(m.ToolCalls[i].Arguments) + anySize(m.ToolCalls[i].Metadata)
	}
	return n + n/16 + anySize(m.Metadata)
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

// writeWire writes w as json.Marshal would, but one message and one event at
// a time: encoding the whole document at once would build it in a buffer of
// the encoder's that grows by doubling and is then copied, twice the memory
// of the output for a long log. A test checks the bytes are the same.
func writeWire(buf *bytes.Buffer, w *wireContext) error {
	jw := newJSONWriter(buf)
	buf.WriteString(`{"version":`)
	jw.int(int64(w.Version))
	buf.WriteString(`,"messages":`)
	writeList(jw, w.Messages, func(m **Message) { jw.message(*m) })
	fields := []struct {
		key   string
		value any
	}{
		{"tool_calls", w.ToolCalls}, {"system_prompt", w.SystemPrompt}, {"deps", w.Deps},
		{"usage", w.Usage}, {"needs_response", w.NeedsResponse}, {"iteration", w.Iteration},
		{"max_iterations", w.MaxIterations}, {"started_at", w.StartedAt}, {"agent_name", w.AgentName},
	}
	for _, f := range fields {
		buf.WriteString(`,"` + f.key + `":`)
		jw.value(f.value)
	}
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
	buf.WriteString(`,"events":`)
	writeList(jw, w.Log.Events, jw.event)
	buf.WriteString("}}")
	return jw.err
}
