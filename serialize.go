package nous

import (
	"bytes"
	"fmt"

	"github.com/google/uuid"
)

// Serialize returns the context as JSON in format version 2 (see FORMAT.md):
// the session log, every event of it, and the plain state (deps, usage, loop
// control), with the message view written beside the log as a projection for
// readers of version 1.
//
// Never written: the runtime-only fields (CancellationCheck, Callbacks,
// Notify, Observer, ApprovalHandler, Stream, Logger, Redact) and the
// system-prompt overlay; secrets: the keys of deps and of event data, at
// any depth, that [IsSecretKey] (or the context's Redact) names, so that
// "x-api-key" and "refresh_tokens" are dropped but "max_tokens" is kept;
// and values JSON cannot hold (functions, channels, complex or non-finite
// numbers, cycles, nesting deeper than 1,000 levels, ...). Secrets are
// dropped silently, as documented; values JSON cannot hold with one
// warning on the context's logger naming their paths, never their values,
// and never an error. The context itself is not changed: it keeps every
// value. Messages are not redacted by key: they are what the model saw,
// and the provider data in them (signatures, token counts) must come back
// unchanged.
//
// The values of the secrets of the deps (everything under a key the rule
// names) are masked wherever they occur in what is written: in a
// message's text, parts, reasoning and metadata, a tool call's arguments,
// a tool's result, event data, the system prompt and the other deps; each
// stretch that holds one becomes [MaskedSecret], and a string that held a
// JSON object or array stays JSON. A number that is a secret's becomes the
// marker too, but for a step's usage counts. A value shorter than 8 bytes
// is not masked (see MaskedSecret). Finding the secrets costs a walk of
// the deps, and masking a scan of each string written.
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
	s := c.sanitizer()
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
		SystemPrompt:  s.text(c.SystemPrompt),
		Usage:         c.Usage,
		NeedsResponse: c.NeedsResponse,
		Iteration:     c.Iteration,
		MaxIterations: c.MaxIterations,
		StartedAt:     s.startedAt(c.StartedAt),
		AgentName:     s.text(c.AgentName),
	}
}

// AppendEventJSON appends to dst the persisted form of the event with the
// given seq, and returns the extended buffer: its JSON exactly as
// [Context.Serialize] writes it in the log's events, by the same rules.
// Secrets in the event's data are dropped, the deps' secret values masked
// wherever they occur in it, and values JSON cannot hold dropped with a
// warning on the context's logger naming them. A store, or
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
	s := c.sanitizer()
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
