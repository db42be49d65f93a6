package nous

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
)

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

// Serialize returns the context as JSON in format version 2 (see FORMAT.md):
// the session log, every event of it, and the plain state (deps, usage, loop
// control), with the message view written beside the log as a projection for
// readers of version 1.
//
// Never written: the runtime-only fields (CancellationCheck, Callbacks,
// Notify, ApprovalHandler, Stream, Logger, Redact) and the system-prompt
// overlay; secrets: the keys of deps and of event data, at any depth, that
// [IsSecretKey] (or the context's Redact) names, so that "x-api-key" and
// "refresh_tokens" are dropped but "max_tokens" is kept; and values JSON
// cannot hold (functions, channels, complex or non-finite numbers, cycles,
// nesting deeper than 1,000 levels, ...). Both are dropped with one warning
// on the context's logger naming their paths, never their values, and never
// an error. The context itself is not changed: it keeps every value.
// Messages are not redacted: they are what the model saw, and the provider
// data in them (signatures, token counts) must come back unchanged.
//
// The tool calls are in the log, each in the tool_call event that recorded
// it; the document's tool_calls is their projection for readers of version
// 1. Calls appended to ToolCalls directly are recorded first, and a list
// that is no longer the log's record is an error wrapping
// [ErrToolCallsEdited] (see [Context.AddToolCall]).
//
// Serialize reads the log in place, copying no message; its cost is that of
// encoding the events and the view.
func (c *Context) Serialize() ([]byte, error) {
	c.ready()
	if err := c.recordToolCalls(true); err != nil {
		return nil, fmt.Errorf("nous: serialize: %w", err)
	}
	s := newSanitizer(c.Redact)
	d := c.document(s)
	c.warnDropped(s, "Serialize")
	var buf bytes.Buffer
	buf.Grow(d.size())
	if err := writeDocument(&buf, &d); err != nil {
		// Every value was sanitized; this is a bug, not bad input.
		return nil, fmt.Errorf("nous: serialize: %w", err)
	}
	return buf.Bytes(), nil
}

// document returns what Serialize writes, sanitized by s. It shares with
// the context every value s did not change.
func (c *Context) document(s *sanitizer) document {
	calls := s.toolCalls(c.ToolCalls) // first, as the document holds them; the log's, as recordToolCalls checked
	d := c.state(s)
	d.ToolCalls = calls
	d.Log = documentLog{ID: c.log.id.String(), Name: c.log.name, Labels: c.log.labels, Events: make([]Event, c.log.len())}
	if c.log.parent != uuid.Nil {
		d.Log.ParentID, d.Log.ForkSeq = c.log.parent.String(), &c.log.forkSeq
	}
	for i := range d.Log.Events {
		d.Log.Events[i] = s.event(c.log.shared(int64(i + 1)))
	}
	// The view's messages are its events' messages, sanitized once.
	d.Messages = make([]*Message, len(c.view.entries))
	for i, mi := range c.view.entries {
		d.Messages[i] = d.Log.Events[c.log.msg(mi).seq-1].Message
	}
	return d
}

// state returns the document without its log, messages and tool calls:
// the plain state of the context, sanitized by s, as stores keep it beside
// the events and the tool calls.
func (c *Context) state(s *sanitizer) document {
	d := c.stateWithoutDeps(s)
	d.Deps = s.deps(c.Deps)
	return d
}

// stateWithoutDeps is state with no deps.
func (c *Context) stateWithoutDeps(s *sanitizer) document {
	return document{
		Version:       FormatVersion,
		SystemPrompt:  c.SystemPrompt,
		Usage:         c.Usage,
		NeedsResponse: c.NeedsResponse,
		Iteration:     c.Iteration,
		MaxIterations: c.MaxIterations,
		StartedAt:     s.startedAt(c.StartedAt),
		AgentName:     c.AgentName,
	}
}

// AppendEventJSON appends to dst the persisted form of the event with the
// given seq, and returns the extended buffer: its JSON exactly as
// [Context.Serialize] writes it in the log's events, by the same rules.
// Secrets in the event's data are dropped, and so are values JSON cannot
// hold, with a warning on the context's logger naming them. A store, or
// anything else that keeps events one by one, writes them with it: the
// [Event]'s own JSON encoding writes whatever the event holds, secrets
// included, and fails on a value such as a function.
//
// A seq that is not in the log is an error wrapping [ErrOutOfRange], and dst
// is returned unchanged.
func (c *Context) AppendEventJSON(dst []byte, seq int64) ([]byte, error) {
	if seq < 1 || seq > c.log.len() {
		return dst, fmt.Errorf("nous: event %d of a log of %d: %w", seq, c.log.len(), ErrOutOfRange)
	}
	s := newSanitizer(c.Redact)
	e := s.event(c.log.shared(seq))
	c.warnDropped(s, "AppendEventJSON")
	buf := bytes.NewBuffer(dst)
	jw := newJSONWriter(buf)
	jw.event(&e)
	if jw.err != nil {
		return dst, fmt.Errorf("nous: event %d: %w", seq, jw.err) // a bug, as in Serialize
	}
	return buf.Bytes(), nil
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
