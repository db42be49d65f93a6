package nous

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

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

// sanitizer is a [jsonx.Sanitizer] that knows the values of a context:
// messages, tool calls, events, deps.
type sanitizer struct{ jsonx.Sanitizer }

// newSanitizer returns a sanitizer that redacts by rule, or by IsSecretKey
// when rule is nil, and masks no value.
func newSanitizer(rule func(key string) bool) *sanitizer {
	if rule == nil {
		rule = IsSecretKey
	}
	return &sanitizer{jsonx.Sanitizer{Rule: rule}}
}

// text returns t with the secrets of s's mask masked.
func (s *sanitizer) text(t string) string {
	if s.Mask == nil {
		return t
	}
	out, _ := s.Text(t)
	return out
}

// message returns m, or a sanitized copy of it when something in it cannot
// be written, or holds a secret value of the mask. Secrets are not dropped
// by key from messages: a message is what the model saw, and provider data
// in it must come back unchanged; a secret value is masked in its text,
// parts, tool calls and metadata.
func (s *sanitizer) message(m *Message) *Message {
	out := m
	cp := func() {
		if out == m {
			c := *m
			out = &c
		}
	}
	if !encodableTime(m.CreatedAt) {
		s.Drop("created_at")
		cp()
		out.CreatedAt = time.Time{}
	}
	if s.Mask != nil {
		if t, changed := s.Text(m.Content); changed {
			cp()
			out.Content = t
		}
		if t, changed := s.Text(m.ReasoningContent); changed {
			cp()
			out.ReasoningContent = t
		}
		for i := range m.Parts {
			if t, changed := s.Text(m.Parts[i].Content); changed {
				cp()
				if &out.Parts[0] == &m.Parts[0] {
					out.Parts = slices.Clone(m.Parts)
				}
				out.Parts[i].Content = t
			}
		}
	}
	for i := range m.Parts {
		if m.Parts[i].Options == nil {
			continue
		}
		s.Push(jsonx.Segment{Key: "parts", Index: i, IsIndex: true})
		s.Push(jsonx.Segment{Key: "options"})
		opts, changed := s.Top(m.Parts[i].Options)
		s.Pop()
		s.Pop()
		if changed {
			cp()
			if &out.Parts[0] == &m.Parts[0] {
				out.Parts = slices.Clone(m.Parts)
			}
			out.Parts[i].Options = opts
		}
	}
	for i := range m.ToolCalls {
		s.Push(jsonx.Segment{Key: "tool_calls", Index: i, IsIndex: true})
		tc, changed := s.toolCall(&m.ToolCalls[i])
		s.Pop()
		if changed {
			cp()
			if &out.ToolCalls[0] == &m.ToolCalls[0] {
				out.ToolCalls = slices.Clone(m.ToolCalls)
			}
			out.ToolCalls[i] = tc
		}
	}
	if m.Metadata != nil {
		s.Push(jsonx.Segment{Key: "metadata"})
		md, changed := s.Top(m.Metadata)
		s.Pop()
		if changed {
			cp()
			out.Metadata = md
		}
	}
	return out
}

// toolCall returns tc as it may be written and whether that differs from
// tc: without what its metadata cannot hold, the mask's secrets masked in
// its arguments and metadata. Its arguments are written whatever they are
// (see ToolCall).
func (s *sanitizer) toolCall(tc *ToolCall) (ToolCall, bool) {
	out, changed := *tc, false
	if s.Mask != nil && len(tc.Arguments) > 0 {
		if t, c := s.Text(string(tc.Arguments)); c {
			out.Arguments, changed = json.RawMessage(t), true
		}
	}
	if tc.Metadata != nil {
		s.Push(jsonx.Segment{Key: "metadata"})
		md, c := s.Top(tc.Metadata)
		s.Pop()
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
	s.Root(jsonx.Segment{Key: "log.events", Index: int(e.Seq - 1), IsIndex: true})
	if !encodableTime(e.CreatedAt) {
		s.Drop("created_at")
		e.CreatedAt = time.Time{}
	}
	if e.Data != nil {
		s.Push(jsonx.Segment{Key: "data"})
		e.Data = s.eventData(e.Type, e.Data)
		s.Pop()
	}
	if e.Message != nil {
		s.Push(jsonx.Segment{Key: "message"})
		e.Message = s.message(e.Message)
		s.Pop()
	}
	if e.Call != nil {
		s.Push(jsonx.Segment{Key: "call"})
		tc, _ := s.toolCall(e.Call)
		s.Pop()
		e.Call = &tc
	}
	return e
}

// eventData returns an event's data as it is persisted: without secrets,
// but for a step's usage, which holds counts under keys ("input_tokens")
// a rule that names every "token" would drop, so that a loaded log
// counts what its steps cost (and whose counts are never masked), and the
// data of the events only this package writes (a batch's keys, a call's
// start, an approval), whose fields a rule that names "keys" or "reason"
// must not drop; an approval's arguments and reason, what its decider
// said, have the mask's secrets masked.
func (s *sanitizer) eventData(t EventType, data map[string]any) map[string]any {
	if ops, ok := data[DataOps].([]any); ok && t == EventDepsUpdate {
		return s.depsOps(ops)
	}
	if keys, err := batchKeys(t, data); err == nil && keys != nil {
		return data
	}
	if (t == EventToolStart || t == EventApprovalRequest || t == EventApprovalDecision) && checkTurnEvent(t, data) == nil {
		return s.turnData(data)
	}
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
	s.Push(jsonx.Segment{Key: DataUsage})
	s.KeepNumbers = true
	kept, _ := s.Top(usage)
	s.KeepNumbers = false
	s.Pop()
	if out == nil {
		out = make(map[string]any, 1)
	}
	out[DataUsage] = kept
	return out
}

// turnData returns the data of a call's start or an approval as it is
// persisted: its free text (the arguments an approval gives, its reason,
// who decided, the runner) with the mask's secrets masked; arguments that
// were JSON stay JSON. The call's ID and digest, which bind it, are kept.
func (s *sanitizer) turnData(data map[string]any) map[string]any {
	if s.Mask == nil {
		return data
	}
	var out map[string]any
	for _, k := range []string{DataArguments, DataReason, DataBy, DataOwner} {
		str, ok := data[k].(string)
		if !ok {
			continue
		}
		if t, changed := s.Text(str); changed {
			if out == nil {
				out = maps.Clone(data)
			}
			out[k] = t
		}
	}
	if out == nil {
		return data
	}
	return out
}

// depsOps returns a deps_update event's data, its operations ops, as it is
// persisted: the operations' own fields kept whatever the rule says of
// their names ("key", "value"), an operation on a key the rule names
// dropped, as the deps drop the key, and each value without secrets at
// any depth, nor what JSON cannot hold, as deps are written. A dropped
// secret is not warned of: a secret is kept in deps, as documented.
func (s *sanitizer) depsOps(ops []any) map[string]any {
	s.Redacting = true
	defer func() { s.Redacting = false }()
	s.Push(jsonx.Segment{Key: DataOps})
	defer s.Pop()
	out := make([]any, 0, len(ops))
	for i, item := range ops {
		op, ok := item.(map[string]any)
		key, _ := op["key"].(string)
		if ok && (s.Rule(key) || s.Mask != nil && s.masksKey(key)) {
			continue
		}
		if v, has := op["value"]; ok && has {
			s.Push(jsonx.Segment{Index: i, IsIndex: true})
			s.Stack = s.Stack[:0]
			nv, keep, changed := s.Value(v, 3)
			s.Pop()
			if !keep {
				s.Drop(fmt.Sprintf("[%d]", i))
				continue
			}
			if changed {
				op = maps.Clone(op)
				op["value"] = nv
			}
		}
		out = append(out, op)
	}
	return map[string]any{DataOps: out}
}

// deps returns the deps as they are persisted: without secrets and without
// what JSON cannot hold, the mask's secrets masked; an empty map for
// none.
func (s *sanitizer) deps(deps map[string]any) map[string]any {
	s.Root(jsonx.Segment{Key: "deps"})
	out, _ := s.redacted(deps)
	if out == nil {
		return map[string]any{}
	}
	return out
}

// redacted is top with the keys the rule names dropped, at any depth.
func (s *sanitizer) redacted(m map[string]any) (map[string]any, bool) {
	s.Redacting = true
	defer func() { s.Redacting = false }()
	return s.Top(m)
}

// masksKey reports whether the key k holds a secret of the mask, and is
// dropped with its value.
func (s *sanitizer) masksKey(k string) bool {
	_, secret := s.Mask.String(k)
	return secret
}

// toolCalls returns the context's tool calls as they are persisted: a copy
// only when one of them changes, and an empty list for none.
func (s *sanitizer) toolCalls(calls []ToolCall) []ToolCall {
	out := calls
	if out == nil {
		out = []ToolCall{}
	}
	for i := range calls {
		s.Root(jsonx.Segment{Key: "tool_calls", Index: i, IsIndex: true})
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
		s.Root(jsonx.Segment{Key: "started_at"})
		s.Drop("")
		return nil
	}
	t = t.UTC()
	return &t
}
