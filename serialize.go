package nous

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// FormatVersion is the version of the JSON format [Context.Serialize]
// writes. [Deserialize] reads it and version 1, the format of the reference
// library before it persisted the event log. FORMAT.md specifies both.
const FormatVersion = 2

// redactedKeys are the fragments that mark a deps key as a secret: a key
// that contains one of them, in any case, is never written (the reference's
// rule, FACTS.md).
var redactedKeys = []string{
	"api_key", "apikey", "token", "secret", "password", "passwd",
	"authorization", "credential", "private_key", "access_key", "auth_token", "bearer",
}

// isSecretKey reports whether k contains, case-insensitively, a fragment of
// redactedKeys.
func isSecretKey(k string) bool {
	k = strings.ToLower(k) // no allocation when k has no upper-case letter
	for _, s := range redactedKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// isSecretName reports whether an event-data key names a secret. Event data
// records what happened, usage counts among it, so the rule goes by words
// rather than fragments: "Authorization", "x-api-key", "refreshToken" and
// "db_password" are secrets, "input_tokens" and "max_tokens" are not.
func isSecretName(k string) bool {
	// Every word the rule looks for contains one of these fragments; a key
	// without any, most keys, is decided without splitting it into words.
	lower := strings.ToLower(k) // no allocation when k has no upper-case letter
	if !strings.Contains(lower, "key") && !strings.Contains(lower, "token") &&
		!strings.Contains(lower, "secret") && !strings.Contains(lower, "passw") &&
		!strings.Contains(lower, "authorization") && !strings.Contains(lower, "credential") &&
		!strings.Contains(lower, "bearer") {
		return false
	}
	words := keyWords(k)
	for i, w := range words {
		switch w {
		case "apikey", "token", "secret", "secrets", "password", "passwords", "passwd",
			"authorization", "credential", "credentials", "bearer":
			return true
		case "api", "private", "access":
			if i+1 < len(words) && words[i+1] == "key" {
				return true
			}
		}
	}
	return false
}

// keyWords splits k into lower-case words at anything but a letter or a
// digit and at camel-case humps: "XApiKey" gives x, api, key.
func keyWords(k string) []string {
	var words []string
	r := []rune(k)
	start := -1
	for i, c := range r {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		hump := i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) ||
			(unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])))
		if start >= 0 && (!alnum || hump) {
			words = append(words, strings.ToLower(string(r[start:i])))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, strings.ToLower(string(r[start:])))
	}
	return words
}

// maxValueDepth bounds how deeply the maps and lists of a value may nest to
// be written. Deeper values, cyclic ones included, are dropped, so that what
// Serialize writes always reads back (the JSON decoder stops at 10,000).
const maxValueDepth = jsonx.MaxDepth

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

// encodableTime reports whether t has a JSON encoding: its year is in
// 0..9999 and its zone offset under a day.
func encodableTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off > -24*60*60 && off < 24*60*60
}

// segment is one step of the path of a value being sanitized: a map key or
// a list index.
type segment struct {
	key     string
	index   int
	isIndex bool
}

// sanitizer finds what JSON cannot hold, and secrets, in the values of a
// context, and makes copies without them. It never modifies a value it is
// given: a map or list with something to drop is copied, shallowly, along
// the path to it.
type sanitizer struct {
	redact  func(key string) bool // drops the keys that name secrets (deps and event data); nil: none
	path    []segment             // where the value being checked is
	stack   []uintptr             // the maps and lists on the path, to find cycles
	dropped []string              // the paths of the values dropped
	scratch strings.Builder
}

func (s *sanitizer) root(seg segment) { s.path = append(s.path[:0], seg) }
func (s *sanitizer) push(seg segment) { s.path = append(s.path, seg) }
func (s *sanitizer) pop()             { s.path = s.path[:len(s.path)-1] }

// drop records that the value at the current path, followed by key when it
// is not empty, is dropped.
func (s *sanitizer) drop(key string) {
	b := &s.scratch
	b.Reset()
	for i, seg := range s.path {
		switch {
		case seg.isIndex && seg.key != "":
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprintf(b, "%s[%d]", seg.key, seg.index)
		case seg.isIndex:
			fmt.Fprintf(b, "[%d]", seg.index)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg.key)
		}
	}
	if key != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(key)
	}
	s.dropped = append(s.dropped, b.String())
}

// value returns v as it may be written, whether to keep it at all, and
// whether the returned value differs from v.
func (s *sanitizer) value(v any, depth int) (out any, keep, changed bool) {
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, uintptr:
		return v, true, false
	case float64:
		return v, !math.IsNaN(x) && !math.IsInf(x, 0), false
	case json.Number:
		_, err := json.Marshal(x) // it checks the number's syntax
		return v, err == nil, false
	case float32:
		f := float64(x)
		return v, !math.IsNaN(f) && !math.IsInf(f, 0), false
	case map[string]any:
		if x == nil {
			return v, true, false
		}
		if !s.enter(reflect.ValueOf(x).Pointer(), depth) {
			return nil, false, false
		}
		m, changed := s.mapValue(x, depth+1)
		s.leave()
		return m, true, changed
	case []any:
		if len(x) == 0 {
			return v, true, false
		}
		if !s.enter(reflect.ValueOf(x).Pointer(), depth) {
			return nil, false, false
		}
		l, changed := s.listValue(x, depth+1)
		s.leave()
		return l, true, changed
	}
	// Anything else (a typed slice, map or struct, a json.Number, ...) is
	// kept when encoding/json can write it. Where secrets are dropped it is
	// written in its generic form, so that a secret key inside it is found
	// too.
	b, err := json.Marshal(v)
	if err != nil || depth+jsonx.Depth(b) > maxValueDepth {
		return nil, false, false
	}
	if s.redact == nil {
		return v, true, false
	}
	g, err := jsonx.Decode(b)
	if err != nil {
		return nil, false, false
	}
	g, keep, _ = s.value(g, depth)
	return g, keep, true
}

// enter pushes the map or list at p on the path, and reports false, having
// pushed nothing, when it is already there (a cycle) or the path is too deep.
func (s *sanitizer) enter(p uintptr, depth int) bool {
	if depth > maxValueDepth || slices.Contains(s.stack, p) {
		return false
	}
	s.stack = append(s.stack, p)
	return true
}

func (s *sanitizer) leave() { s.stack = s.stack[:len(s.stack)-1] }

// top returns the map m, the root of a value such as the deps, as it may be
// written, and whether that is a copy.
func (s *sanitizer) top(m map[string]any) (map[string]any, bool) {
	if m == nil {
		return nil, false
	}
	s.stack = append(s.stack[:0], reflect.ValueOf(m).Pointer())
	out, changed := s.mapValue(m, 1)
	s.stack = s.stack[:0]
	return out, changed
}

// mapValue returns m without what cannot be written, and whether that is a
// copy. m itself is never modified.
func (s *sanitizer) mapValue(m map[string]any, depth int) (map[string]any, bool) {
	var out map[string]any // a copy, made at the first change
	for k, v := range m {
		if s.redact != nil && s.redact(k) {
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
			continue
		}
		s.push(segment{key: k})
		nv, keep, changed := s.value(v, depth)
		if !keep {
			s.drop("")
		}
		s.pop()
		if !keep || changed {
			if out == nil {
				out = maps.Clone(m)
			}
			if keep {
				out[k] = nv
			} else {
				delete(out, k)
			}
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// listValue returns l without what cannot be written (those elements are
// removed), and whether that is a copy. l itself is never modified.
func (s *sanitizer) listValue(l []any, depth int) ([]any, bool) {
	var out []any // a copy, made at the first change
	copied := false
	for i, v := range l {
		s.push(segment{index: i, isIndex: true})
		nv, keep, changed := s.value(v, depth)
		if !keep {
			s.drop("")
		}
		s.pop()
		if (!keep || changed) && !copied {
			out = make([]any, i, len(l))
			copy(out, l[:i])
			copied = true
		}
		if copied && keep {
			out = append(out, nv)
		}
	}
	if !copied {
		return l, false
	}
	return out, true
}

// message returns m, or a sanitized copy of it when something in it cannot
// be written. Secrets are not dropped from messages: a message is what the
// model saw, and provider data in it must come back unchanged.
func (s *sanitizer) message(m *Message) *Message {
	out := m
	cp := func() {
		if out == m {
			c := *m
			out = &c
		}
	}
	if !encodableTime(m.CreatedAt) {
		s.drop("created_at")
		cp()
		out.CreatedAt = time.Time{}
	}
	for i := range m.Parts {
		if m.Parts[i].Options == nil {
			continue
		}
		s.push(segment{key: "parts", index: i, isIndex: true})
		s.push(segment{key: "options"})
		opts, changed := s.top(m.Parts[i].Options)
		s.pop()
		s.pop()
		if changed {
			cp()
			if &out.Parts[0] == &m.Parts[0] {
				out.Parts = slices.Clone(m.Parts)
			}
			out.Parts[i].Options = opts
		}
	}
	for i := range m.ToolCalls {
		s.push(segment{key: "tool_calls", index: i, isIndex: true})
		tc, changed := s.toolCall(&m.ToolCalls[i])
		s.pop()
		if changed {
			cp()
			if &out.ToolCalls[0] == &m.ToolCalls[0] {
				out.ToolCalls = slices.Clone(m.ToolCalls)
			}
			out.ToolCalls[i] = tc
		}
	}
	if m.Metadata != nil {
		s.push(segment{key: "metadata"})
		md, changed := s.top(m.Metadata)
		s.pop()
		if changed {
			cp()
			out.Metadata = md
		}
	}
	return out
}

// toolCall returns tc as it may be written and whether that differs from
// tc: arguments that are not JSON are dropped (an empty, non-nil slice means
// none), and so is what its metadata cannot hold.
func (s *sanitizer) toolCall(tc *ToolCall) (ToolCall, bool) {
	out, changed := *tc, false
	if tc.Arguments != nil && (len(tc.Arguments) == 0 || !json.Valid(tc.Arguments) || jsonx.Depth(tc.Arguments) > jsonx.MaxDepth) {
		if len(tc.Arguments) > 0 {
			s.drop("arguments")
		}
		out.Arguments, changed = nil, true
	}
	if tc.Metadata != nil {
		s.push(segment{key: "metadata"})
		md, c := s.top(tc.Metadata)
		s.pop()
		if c {
			out.Metadata, changed = md, true
		}
	}
	return out, changed
}

// The shape of the format, as read: one type for both versions, so that a
// version 2 blob is decoded in one pass. Fields whose meaning depends on the
// version are kept raw.
type wireInput struct {
	Version       json.RawMessage `json:"version"`
	Messages      jsonArray       `json:"messages"` // version 1 reads it again
	ToolCalls     json.RawMessage `json:"tool_calls"`
	SystemPrompt  string          `json:"system_prompt"`
	Deps          json.RawMessage `json:"deps"`
	Usage         Usage           `json:"usage"`
	NeedsResponse bool            `json:"needs_response"`
	Iteration     int             `json:"iteration"`
	MaxIterations *int            `json:"max_iterations"`
	StartedAt     json.RawMessage `json:"started_at"`
	AgentName     string          `json:"agent_name"`
	Log           *wireLogInput   `json:"log"`
}

type wireLogInput struct {
	ID       string       `json:"id"`
	ParentID *string      `json:"parent_id"`
	ForkSeq  *int64       `json:"fork_seq"`
	Events   *[]eventJSON `json:"events"`
}

// jsonArray accepts a JSON array or null without decoding or copying it:
// version 2 readers check the messages projection's type and ignore the rest.
type jsonArray struct{}

func (jsonArray) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && (b[0] == '[' || string(b) == "null") {
		return nil
	}
	return errors.New("not an array")
}

// Deserialize reads a context written by [Context.Serialize] (format version
// 2) or by the reference library's version 1; FORMAT.md says how.
//
// A version 2 blob rebuilds the session log, its ID, parent and fork seq
// included, folds it once and gets back the same view: the restored
// context's next event has the next seq. A version 1 blob has no log: each
// of its messages becomes one event in a new log with a new ID, stamped, like
// the message, with the time of the restore; an unknown role is read as user,
// with a warning on slog.Default(). Deps, event data and metadata decode
// whole numbers as int. The runtime-only fields are unset and there is no
// overlay.
//
// Deserialize fails closed: anything it cannot trust is an error that names
// the place, and no context. Not JSON, not an object or an unexpected type in
// a field wraps [ErrMalformed]; a missing or non-integer version
// [ErrMissingVersion]; another version [ErrUnsupportedVersion]; events whose
// seqs are not 1, 2, 3, ..., that break the rules of their type or that do
// not fold [ErrInvalidLog], [ErrUnknownEventType] or [ErrInvalidMessage].
// It never panics, whatever data holds.
func Deserialize(data []byte) (*Context, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		if !json.Valid(data) {
			return nil, fmt.Errorf("nous: deserialize: not valid JSON: %w", ErrMalformed)
		}
		return nil, fmt.Errorf("nous: deserialize: not a JSON object: %w", ErrMalformed)
	}
	var w wireInput
	err := json.Unmarshal(data, &w)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return nil, fmt.Errorf("nous: deserialize: not valid JSON: %v: %w", err, ErrMalformed)
	}
	raw := w.Version
	if err != nil {
		// The fast decode failed on some field; the version decides what
		// that means, so read it alone first.
		var head struct {
			Version json.RawMessage `json:"version"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, malformed("", err)
		}
		raw = head.Version
	}
	version, err2 := parseVersion(raw)
	if err2 != nil {
		return nil, err2
	}
	if version == 1 {
		return deserializeV1(data)
	}
	if err != nil {
		return nil, locateError(data, err)
	}
	return restoreV2(&w)
}

// parseVersion reads the version field: a JSON integer this package knows.
func parseVersion(raw json.RawMessage) (int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, fmt.Errorf("nous: deserialize: no version: %w", ErrMissingVersion)
	}
	digits := t
	if digits[0] == '-' {
		digits = digits[1:]
	}
	integer := len(digits) > 0
	for _, b := range digits {
		if b < '0' || b > '9' {
			integer = false
			break
		}
	}
	if !integer {
		return 0, fmt.Errorf("nous: deserialize: version %.40s is not an integer: %w", t, ErrMissingVersion)
	}
	n, err := strconv.Atoi(string(t))
	if err != nil || (n != 1 && n != FormatVersion) {
		return 0, fmt.Errorf("nous: deserialize: version %.40s (this package reads 1 and %d): %w", t, FormatVersion, ErrUnsupportedVersion)
	}
	return n, nil
}

// malformed returns the error of a value at place that is not of the shape
// the format says.
func malformed(place string, err error) error {
	if place == "" {
		return fmt.Errorf("nous: deserialize: %s: %w", describe(err), ErrMalformed)
	}
	return fmt.Errorf("nous: deserialize: %s: %s: %w", place, describe(err), ErrMalformed)
}

// describe says what err found wrong in JSON terms, rather than Go's.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msg := "got " + te.Value + ", want " + jsonKind(te.Type)
	// plainEvent and plain are the method-free copies of Event and Message
	// that their UnmarshalJSON decode into.
	field := strings.ReplaceAll(strings.ReplaceAll(te.Field, "plainEvent.", ""), "plain.", "")
	if field == "plain" || field == "" {
		return msg
	}
	return field + ": " + msg
}

// jsonKind names the JSON kind that decodes into a value of type t.
func jsonKind(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 time"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// restoreV2 builds the context of a version 2 blob decoded into w.
func restoreV2(w *wireInput) (*Context, error) {
	if w.Log == nil {
		return nil, malformed("log", errors.New("missing"))
	}
	id, err := parseLogID(w.Log.ID)
	if err != nil {
		return nil, malformed("log.id", err)
	}
	var parent uuid.UUID
	var forkSeq int64
	switch {
	case w.Log.ParentID != nil && w.Log.ForkSeq == nil:
		return nil, malformed("log.fork_seq", errors.New("missing in a fork"))
	case w.Log.ParentID == nil && w.Log.ForkSeq != nil:
		return nil, malformed("log.fork_seq", errors.New("without log.parent_id"))
	case w.Log.ParentID != nil:
		if parent, err = parseLogID(*w.Log.ParentID); err != nil {
			return nil, malformed("log.parent_id", err)
		}
		forkSeq = *w.Log.ForkSeq
	}
	if w.Log.Events == nil {
		return nil, malformed("log.events", errors.New("missing"))
	}
	events := make([]Event, len(*w.Log.Events))
	for i := range events {
		e := &events[i]
		if err := (*w.Log.Events)[i].decode(e); err != nil {
			return nil, malformed(fmt.Sprintf("log.events[%d]", i), err)
		}
		if e.Message != nil {
			for j := range e.Message.ToolCalls {
				compactArguments(&e.Message.ToolCalls[j])
			}
		}
	}
	l, view, err := restoreLog(id, parent, forkSeq, events, true)
	if err != nil {
		return nil, fmt.Errorf("nous: deserialize: log.%w", err)
	}
	c, err := restoreState(w, false)
	if err != nil {
		return nil, err
	}
	c.log, c.view = l, view
	return c, nil
}

// parseLogID reads a log ID: a UUID in its canonical 36-character form, not
// the nil UUID.
func parseLogID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	switch {
	case err != nil || len(s) != 36:
		return uuid.Nil, fmt.Errorf("%q is not a UUID", s)
	case id == uuid.Nil:
		return uuid.Nil, errors.New("the nil UUID")
	}
	return id, nil
}

// restoreState returns a context holding the plain state of w (everything
// but the messages and the log), by the rules of version 1 when v1 is true.
func restoreState(w *wireInput, v1 bool) (*Context, error) {
	c := &Context{
		SystemPrompt:  w.SystemPrompt,
		Usage:         w.Usage,
		NeedsResponse: w.NeedsResponse,
		Iteration:     w.Iteration,
		MaxIterations: 10,
		AgentName:     w.AgentName,
	}
	if w.MaxIterations != nil {
		c.MaxIterations = *w.MaxIterations
	}
	deps, err := jsonx.DecodeMap(w.Deps)
	if err != nil {
		return nil, malformed("deps", err)
	}
	if deps == nil {
		deps = map[string]any{}
	}
	c.Deps = deps
	if c.ToolCalls, err = decodeToolCalls(w.ToolCalls, "tool_calls", v1); err != nil {
		return nil, err
	}
	if len(c.ToolCalls) == 0 {
		c.ToolCalls = nil
	}
	if t := bytes.TrimSpace(w.StartedAt); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &c.StartedAt); err != nil {
			if !v1 {
				return nil, malformed("started_at", err)
			}
			c.StartedAt = time.Time{} // version 1: unparsable reads as null
		}
	}
	return c, nil
}

// decodeToolCalls reads a list of tool calls at place. Arguments must be a
// JSON object; version 1 may also hold one as a JSON string.
func decodeToolCalls(raw json.RawMessage, place string, v1 bool) ([]ToolCall, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, malformed(place, err)
	}
	calls := make([]ToolCall, len(items))
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", place, i)
		if err := json.Unmarshal(item, &calls[i]); err != nil {
			return nil, malformed(at, err)
		}
		args := calls[i].Arguments
		if v1 && len(args) > 0 && args[0] == '"' {
			var s string
			if err := json.Unmarshal(args, &s); err != nil {
				return nil, malformed(at+".arguments", err)
			}
			args = nil
			if s != "" {
				args = json.RawMessage(s)
			}
			calls[i].Arguments = args
		}
		if len(args) > 0 && !jsonx.IsObject(args) {
			return nil, malformed(at+".arguments", errors.New("not a JSON object"))
		}
		compactArguments(&calls[i])
	}
	return calls, nil
}

// wireRaw is the top level of either version, each field kept raw, for the
// readers that decode field by field: version 1, and locateError.
type wireRaw struct {
	Messages      json.RawMessage `json:"messages"`
	ToolCalls     json.RawMessage `json:"tool_calls"`
	SystemPrompt  json.RawMessage `json:"system_prompt"`
	Deps          json.RawMessage `json:"deps"`
	Usage         json.RawMessage `json:"usage"`
	NeedsResponse json.RawMessage `json:"needs_response"`
	Iteration     json.RawMessage `json:"iteration"`
	MaxIterations json.RawMessage `json:"max_iterations"`
	StartedAt     json.RawMessage `json:"started_at"`
	AgentName     json.RawMessage `json:"agent_name"`
	Log           json.RawMessage `json:"log"` // version 2 only; version 1 ignores it
}

// rawField is one field to decode on its own: its place in the document, its
// raw JSON (absent when empty) and where to decode it.
type rawField struct {
	place string
	raw   json.RawMessage
	into  any
}

// decodeFields decodes each present field, failing with the place of the
// first that does not fit.
func decodeFields(fields ...rawField) error {
	for _, f := range fields {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return malformed(f.place, err)
		}
	}
	return nil
}

// plainFields are the fields of w that both versions decode the same way,
// to be decoded into in.
func (w *wireRaw) plainFields(in *wireInput) []rawField {
	return []rawField{
		{"system_prompt", w.SystemPrompt, &in.SystemPrompt},
		{"usage", w.Usage, &in.Usage},
		{"needs_response", w.NeedsResponse, &in.NeedsResponse},
		{"iteration", w.Iteration, &in.Iteration},
		{"max_iterations", w.MaxIterations, &in.MaxIterations},
		{"agent_name", w.AgentName, &in.AgentName},
	}
}

// locateError returns the error of a version 2 blob that the one-pass
// decode refused with cause, naming the field: it decodes the fields one by
// one, the events too.
func locateError(data []byte, cause error) error {
	var raw wireRaw
	if err := json.Unmarshal(data, &raw); err != nil {
		return malformed("", err)
	}
	var array jsonArray
	if err := decodeFields(append(raw.plainFields(new(wireInput)), rawField{"messages", raw.Messages, &array})...); err != nil {
		return err
	}
	var log struct {
		ID       json.RawMessage `json:"id"`
		ParentID json.RawMessage `json:"parent_id"`
		ForkSeq  json.RawMessage `json:"fork_seq"`
		Events   json.RawMessage `json:"events"`
	}
	if len(raw.Log) == 0 {
		return malformed("", cause)
	}
	if err := json.Unmarshal(raw.Log, &log); err != nil {
		return malformed("log", err)
	}
	err := decodeFields(
		rawField{"log.id", log.ID, new(string)},
		rawField{"log.parent_id", log.ParentID, new(string)},
		rawField{"log.fork_seq", log.ForkSeq, new(int64)},
	)
	if err != nil {
		return err
	}
	var events []json.RawMessage
	if len(log.Events) == 0 {
		return malformed("", cause)
	}
	if err := json.Unmarshal(log.Events, &events); err != nil {
		return malformed("log.events", errors.New("not a list"))
	}
	for i, raw := range events {
		var e Event
		if err := json.Unmarshal(raw, &e); err != nil {
			return malformed(fmt.Sprintf("log.events[%d]", i), err)
		}
	}
	return malformed("", cause)
}

// The shape of a version 1 message and tool call. Content may be a string,
// a list of content parts or null; arguments an object or a string holding
// one.
type v1Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Metadata   json.RawMessage `json:"metadata"`
}

// deserializeV1 reads a version 1 blob.
func deserializeV1(data []byte) (*Context, error) {
	var raw wireRaw // its "log", unknown to version 1, is ignored like any other key
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, malformed("", err)
	}
	w := wireInput{Deps: raw.Deps, ToolCalls: raw.ToolCalls, StartedAt: raw.StartedAt}
	if err := decodeFields(raw.plainFields(&w)...); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if t := bytes.TrimSpace(raw.Messages); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &items); err != nil {
			return nil, malformed("messages", errors.New("not a list"))
		}
	}
	at := now()
	events := make([]Event, len(items))
	msgs := make([]Message, len(items))
	for i, item := range items {
		place := fmt.Sprintf("messages[%d]", i)
		m, err := decodeV1Message(item, place)
		if err != nil {
			return nil, err
		}
		m.CreatedAt = at
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("nous: deserialize: %s: %w", place, err)
		}
		msgs[i] = m
		events[i] = Event{Seq: int64(i + 1), Type: messageEventType(m.Role), Message: &msgs[i], CreatedAt: at}
	}
	l, view, err := restoreLog(newLogID(), uuid.Nil, 0, events, true)
	if err != nil {
		return nil, fmt.Errorf("nous: deserialize: messages: %w", err)
	}
	c, err := restoreState(&w, true)
	if err != nil {
		return nil, err
	}
	c.log, c.view = l, view
	return c, nil
}

// decodeV1Message reads one version 1 message at place.
func decodeV1Message(item json.RawMessage, place string) (Message, error) {
	var v v1Message
	if err := json.Unmarshal(item, &v); err != nil {
		return Message{}, malformed(place, err)
	}
	m := Message{Role: Role(v.Role), ToolCallID: v.ToolCallID, Name: v.Name}
	if !m.Role.Valid() {
		// slog.Default: a context restored from data has no logger of its own yet.
		slog.Default().Warn("nous: deserialize: unknown role read as user", "place", place, "role", v.Role)
		m.Role = RoleUser
	}
	switch t := bytes.TrimSpace(v.Content); {
	case len(t) == 0 || string(t) == "null":
	case t[0] == '"':
		if err := json.Unmarshal(t, &m.Content); err != nil {
			return Message{}, malformed(place+".content", err)
		}
	case t[0] == '[':
		if err := json.Unmarshal(t, &m.Parts); err != nil {
			return Message{}, malformed(place+".content", err)
		}
	default:
		return Message{}, malformed(place+".content", errors.New("not a string, a list of parts or null"))
	}
	md, err := jsonx.DecodeMap(v.Metadata)
	if err != nil {
		return Message{}, malformed(place+".metadata", err)
	}
	m.Metadata = md
	if m.ToolCalls, err = decodeToolCalls(v.ToolCalls, place+".tool_calls", true); err != nil {
		return Message{}, err
	}
	return m, nil
}

// compactArguments removes the insignificant white space of tc's arguments,
// which are valid JSON: Serialize writes them compact, so a context read from
// indented JSON is the one it reads back after writing.
func compactArguments(tc *ToolCall) {
	if !bytes.ContainsAny(tc.Arguments, " \t\r\n") {
		return
	}
	var b bytes.Buffer
	if json.Compact(&b, tc.Arguments) == nil {
		tc.Arguments = b.Bytes()
	}
}
