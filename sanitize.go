package nous

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/jsonx"
)

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
	rule      func(key string) bool // the keys that name secrets
	redacting bool                  // whether rule applies where the sanitizer is: deps and event data
	path      []segment             // where the value being checked is
	stack     []uintptr             // the maps and lists on the path, to find cycles
	dropped   []string              // the paths of the values JSON cannot hold
	secrets   []string              // the paths of the secrets redacted
	scratch   strings.Builder
}

// newSanitizer returns a sanitizer that redacts by rule, or by IsSecretKey
// when rule is nil.
func newSanitizer(rule func(key string) bool) *sanitizer {
	if rule == nil {
		rule = IsSecretKey
	}
	return &sanitizer{rule: rule}
}

func (s *sanitizer) root(seg segment) { s.path = append(s.path[:0], seg) }
func (s *sanitizer) push(seg segment) { s.path = append(s.path, seg) }
func (s *sanitizer) pop()             { s.path = s.path[:len(s.path)-1] }

// drop records that the value at the current path, followed by key when it
// is not empty, is dropped.
func (s *sanitizer) drop(key string) { s.dropped = append(s.dropped, s.where(key)) }

// where returns the current path, followed by key when it is not empty.
func (s *sanitizer) where(key string) string {
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
	return b.String()
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
	if err != nil || depth+jsonx.Depth(b) > jsonx.MaxDepth {
		return nil, false, false
	}
	if !s.redacting {
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
	if depth > jsonx.MaxDepth || slices.Contains(s.stack, p) {
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
	collide := collidingKeys(m)
	for k, v := range m {
		if collide[k] {
			s.drop(k)
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
			continue
		}
		if s.redacting && s.rule(k) {
			s.secrets = append(s.secrets, s.where(k))
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

// collidingKeys returns the keys of m that are not valid UTF-8 and that,
// written with each invalid byte replaced by U+FFFD (as JSON must), equal
// another key of m: a document could hold only one of them, and which one
// would depend on the map's order. It allocates only for a map with such a
// key.
func collidingKeys(m map[string]any) map[string]bool {
	var invalid []string
	for k := range m {
		if !utf8.ValidString(k) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) == 0 {
		return nil
	}
	written := make(map[string]int, len(m))
	for k := range m {
		written[string(validUTF8([]byte(k)))]++
	}
	var out map[string]bool
	for _, k := range invalid {
		if written[string(validUTF8([]byte(k)))] > 1 {
			if out == nil {
				out = map[string]bool{}
			}
			out[k] = true
		}
	}
	return out
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
// tc: without what its metadata cannot hold. Its arguments are written
// whatever they are (see ToolCall).
func (s *sanitizer) toolCall(tc *ToolCall) (ToolCall, bool) {
	out, changed := *tc, false
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

// event returns e, an event the log shares ([eventLog.shared]), as it is
// persisted: its data without secrets and, like its message, without what
// JSON cannot hold. It shares with e what it does not change.
func (s *sanitizer) event(e Event) Event {
	s.root(segment{key: "log.events", index: int(e.Seq - 1), isIndex: true})
	if !encodableTime(e.CreatedAt) {
		s.drop("created_at")
		e.CreatedAt = time.Time{}
	}
	if e.Data != nil {
		s.push(segment{key: "data"})
		e.Data = s.eventData(e.Type, e.Data)
		s.pop()
	}
	if e.Message != nil {
		s.push(segment{key: "message"})
		e.Message = s.message(e.Message)
		s.pop()
	}
	if e.Call != nil {
		s.push(segment{key: "call"})
		tc, _ := s.toolCall(e.Call)
		s.pop()
		e.Call = &tc
	}
	return e
}

// eventData returns an event's data as it is persisted: without secrets,
// but for a step's usage, which holds counts under keys ("input_tokens")
// a rule that names every "token" would drop, so that a loaded log
// counts what its steps cost.
func (s *sanitizer) eventData(t EventType, data map[string]any) map[string]any {
	usage, ok := data[DataUsage].(map[string]any)
	if t != EventStepEnd || !ok {
		out, _ := s.redacted(data)
		return out
	}
	rest := make(map[string]any, len(data)-1)
	for k, v := range data {
		if k != DataUsage {
			rest[k] = v
		}
	}
	out, _ := s.redacted(rest)
	s.push(segment{key: DataUsage})
	kept, _ := s.top(usage)
	s.pop()
	if out == nil {
		out = make(map[string]any, 1)
	}
	out[DataUsage] = kept
	return out
}

// deps returns the deps as they are persisted: without secrets and without
// what JSON cannot hold; an empty map for none.
func (s *sanitizer) deps(deps map[string]any) map[string]any {
	s.root(segment{key: "deps"})
	out, _ := s.redacted(deps)
	if out == nil {
		return map[string]any{}
	}
	return out
}

// redacted is top with the keys the rule names dropped, at any depth.
func (s *sanitizer) redacted(m map[string]any) (map[string]any, bool) {
	s.redacting = true
	defer func() { s.redacting = false }()
	return s.top(m)
}

// toolCalls returns the context's tool calls as they are persisted: a copy
// only when one of them changes, and an empty list for none.
func (s *sanitizer) toolCalls(calls []ToolCall) []ToolCall {
	out := calls
	if out == nil {
		out = []ToolCall{}
	}
	for i := range calls {
		s.root(segment{key: "tool_calls", index: i, isIndex: true})
		if tc, changed := s.toolCall(&calls[i]); changed {
			if &out[0] == &calls[0] {
				out = slices.Clone(calls)
			}
			out[i] = tc
		}
	}
	return out
}

// startedAt returns t in UTC as it is persisted, or nil for a zero time or
// one JSON cannot hold.
func (s *sanitizer) startedAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	if !encodableTime(t) {
		s.root(segment{key: "started_at"})
		s.drop("")
		return nil
	}
	t = t.UTC()
	return &t
}
