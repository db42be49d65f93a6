package nous

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/jsonx"
)

// The deps in the log: every change of the deps is a deps_update event, so
// that the deps as of any seq are a fold of the log. An applied
// ContextUpdate records its operations when it applies; a change made to
// Context.Deps directly is recorded by the next save, as the difference
// between the deps and what the log says they are. The state document a
// store keeps is the snapshot Load reads without folding.

// depsRecord is what a context knows of the deps its log records: base,
// the fold of the log's deps_update events up to seq at. The events after
// at are folded onto it when a save compares the deps with the log. base
// holds values as they are written (sanitized, of the JSON types), never
// written in place: a clone shares it.
type depsRecord struct {
	base map[string]any
	at   int64
	// lists holds, by key, the lists of base a fold appended to, with
	// their spare capacity (base holds them clipped), so that the next
	// appends to them cost the items, not the list: as Context.lists does
	// for Deps. A clone starts without: the capacity is the original's.
	lists map[string][]any
	// rule is the redaction rule (its code) base was last compared with
	// the deps by: a save under another compares every value.
	rule uintptr
}

// recordOps appends a deps_update event recording ops, the deps operations
// of an update just applied, whose changed keys are changed: sanitized as
// deps are written, an operation on a key the redaction rule names left
// out. The record's fold takes them at once, so that an update costs its
// operations. When they do not fold onto what the log records (a key was
// changed directly since, to something an append or a merge does not fit,
// or its value is written as another kind, as a []byte is as a string),
// the event records the changed keys' new values instead, as sets and
// deletes: what the log folds to is what the deps hold. A key an update
// merges into is recorded so too, after the other keys' operations: a
// merge's value read back from JSON may merge otherwise than the value
// given (a nil map merges nothing, its null replaces). Nothing is
// appended when no operation is left.
func (c *Context) recordOps(ops []Operation, changed map[string]change) {
	s := sanitizer{jsonx.Sanitizer{Rule: c.Redact, Redacting: true}}
	if s.Rule == nil {
		s.Rule = IsSecretKey
	}
	merged := map[string]change{} // the keys a merge changed: recorded by their values
	for _, op := range ops {
		if op.Kind == OpMerge {
			merged[op.Key] = changed[op.Key]
		}
	}
	var out []any
	var kept []Operation
	for _, op := range ops {
		if _, m := merged[op.Key]; m || op.Kind == OpLogEvent || s.Rule(op.Key) {
			continue
		}
		rec := map[string]any{"op": opName(op.Kind), "key": op.Key}
		if op.Kind != OpDelete {
			v, keep, _ := s.Value(op.Value, 1)
			if keep {
				v, keep = asWritten(v)
			}
			if !keep {
				continue // nothing JSON can hold: the save's comparison records what it did
			}
			rec["value"] = v
			op.Value = v
		}
		out = append(out, rec)
		kept = append(kept, op)
	}
	if len(out) == 0 && len(merged) == 0 {
		return
	}
	logged, err := c.depsRec.fold(&c.log, c.log.len())
	if err != nil {
		return // a log whose record does not fold: the save that reads it says so
	}
	next, err := foldOps(logged, c.depsRec.lists, kept)
	switch {
	case err != nil:
		out, next = c.recordValues(&s, logged, changed)
	case len(merged) > 0: // the other keys' operations, then the merged keys' values
		var vals []any
		vals, next = c.recordValues(&s, next, merged)
		out = append(out, vals...)
	}
	if len(out) == 0 {
		return
	}
	r := record{typ: EventDepsUpdate, at: now(), data: map[string]any{DataOps: out}}
	c.mustAdd(&r, nil, nil, slot{})
	c.depsRec.base, c.depsRec.at = next, c.log.len()
}

// opName returns k's name as the log writes it: a constant for each kind,
// which an interface holds without allocating.
func opName(k OpKind) any {
	switch k {
	case OpSet:
		return string(OpSet)
	case OpMerge:
		return string(OpMerge)
	case OpAppend:
		return string(OpAppend)
	case OpDelete:
		return string(OpDelete)
	}
	return string(k)
}

// recordValues returns the operations that set each key of changed to the
// value the deps hold now, as written, or delete it, and logged with them
// applied.
func (c *Context) recordValues(s *sanitizer, logged map[string]any, changed map[string]change) ([]any, map[string]any) {
	var out []any
	next := maps.Clone(logged)
	if next == nil {
		next = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(changed)) {
		if s.Rule(k) {
			continue
		}
		v, present := c.Deps[k]
		keep := false
		if present {
			s.Stack = s.Stack[:0]
			v, keep, _ = s.Value(v, 1)
			if keep {
				v, keep = asWritten(v)
			}
		}
		if keep {
			out = append(out, map[string]any{"op": string(OpSet), "key": k, "value": v})
			next[k] = v
		} else { // gone, or nothing JSON can hold: a delete, whether or not the log had it
			out = append(out, map[string]any{"op": string(OpDelete), "key": k})
			delete(next, k)
		}
	}
	return out, next
}

// depsChanges returns how the deps, as a save writes them, differ from
// what the log says they are (the changes made to Context.Deps directly):
// the operations of the deps_update event that records them (none when
// they agree), and the deps the log records once it is appended. It
// changes nothing: [Context.recordDeps] appends the event.
func (c *Context) depsChanges() (ops []any, next map[string]any, err error) {
	logged, err := c.depsRec.fold(&c.log, c.log.len())
	// A rule other than the one the record was made with may name a key
	// inside a value: every value is compared as now written.
	ruleChanged := reflect.ValueOf(c.Redact).Pointer() != c.depsRec.rule
	if err != nil || !ruleChanged && !c.depsDiffer(logged) {
		return nil, logged, err
	}
	s := newSanitizer(c.Redact)
	s.Redacting = true
	next, copied := logged, false // logged may be the record's base: written only once copied
	set := func(k string, v any, deleted bool) {
		if !copied {
			next, copied = maps.Clone(logged), true
			if next == nil {
				next = map[string]any{}
			}
		}
		if deleted {
			delete(next, k)
			ops = append(ops, map[string]any{"op": string(OpDelete), "key": k})
			return
		}
		next[k] = v
		ops = append(ops, map[string]any{"op": string(OpSet), "key": k, "value": v})
	}
	collide := jsonx.CollidingKeys(c.Deps) // written as one key: the state holds neither
	for _, k := range slices.Sorted(maps.Keys(c.Deps)) {
		v := c.Deps[k]
		was, logs := logged[k]
		if s.Rule(k) || collide[k] || logs && jsonx.Equal(v, was) && !ruleChanged {
			continue
		}
		s.Stack = s.Stack[:0]
		nv, keep, _ := s.Value(v, 1)
		if keep {
			nv, keep = asWritten(nv)
		}
		switch {
		case !keep && logs:
			set(k, nil, true)
		case keep && !(logs && jsonx.Equal(nv, was)):
			set(k, nv, false)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(logged)) {
		if _, ok := c.Deps[k]; !ok || s.Rule(k) || collide[k] {
			set(k, nil, true)
		}
	}
	return ops, next, nil
}

// recordDeps appends the deps_update event of ops, what depsChanges
// found, when there are any, and makes next the deps the log records.
// Save calls it once it knows it stores something, as an event of its
// batch ([Context.addQuiet]).
func (c *Context) recordDeps(ops []any, next map[string]any) {
	if len(ops) > 0 {
		c.addQuiet(&record{typ: EventDepsUpdate, at: now(), data: map[string]any{DataOps: ops}})
	}
	c.depsRec.base, c.depsRec.at = next, c.log.len()
	c.depsRec.rule = reflect.ValueOf(c.Redact).Pointer()
}

// depsDiffer reports whether c's deps may differ from logged, the deps the
// log records: a key the rule does not name whose value is not logged's,
// or one logged that the deps lack. It allocates nothing, so that a save
// whose deps did not change costs a comparison.
func (c *Context) depsDiffer(logged map[string]any) bool {
	rule := c.Redact
	if rule == nil {
		rule = IsSecretKey
	}
	for k, v := range c.Deps {
		if was, ok := logged[k]; !rule(k) && (!ok || !jsonx.Equal(v, was)) {
			return true
		}
	}
	for k := range logged {
		if _, ok := c.Deps[k]; !ok || rule(k) {
			return true
		}
	}
	return false
}

// asWritten returns v, a sanitized value, as the log reads it back once
// written: a copy of the JSON types, whole numbers int, a nil map or list
// null. So an event holds in memory what it holds once loaded, and false
// when v cannot be written after all.
func asWritten(v any) (any, bool) {
	if out, ok := copyWritten(v, 0); ok {
		return out, true
	}
	b, err := encodeValue(v)
	if err != nil {
		return nil, false
	}
	out, err := jsonx.Decode(b)
	return out, err == nil
}

// fold returns the deps l records as of seq to: the record's base with the
// deps_update events after it folded onto it, appending into the record's
// lists where it can. It changes nothing else of the record.
func (r *depsRecord) fold(l *eventLog, to int64) (map[string]any, error) {
	if r.lists == nil {
		r.lists = map[string][]any{}
	}
	return foldDeps(r.base, r.lists, l, r.at, to)
}

// copyWritten returns a copy of v when v is made only of values that read
// back as they are (nil, booleans, valid UTF-8, ints, maps and lists of
// them, not nil, at most jsonx.MaxDepth deep), and false for anything
// else, which asWritten writes and reads back instead.
func copyWritten(v any, depth int) (any, bool) {
	switch x := v.(type) {
	case nil, bool, int:
		return v, true
	case string:
		return v, utf8.ValidString(x)
	case map[string]any:
		if x == nil || depth >= jsonx.MaxDepth {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyWritten(e, depth+1)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil || depth >= jsonx.MaxDepth {
			return nil, false
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := copyWritten(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// foldDeps returns base with the deps_update events of l with seqs in
// (from, to] folded onto it, in order; base itself when there are none.
// It never writes base. lists, when not nil, holds lists it may append to
// in place (see depsRecord) and gets the lists it grew. A deps_update
// event whose data does not hold operations is an error wrapping
// [ErrInvalidLog] naming it.
func foldDeps(base map[string]any, lists map[string][]any, l *eventLog, from, to int64) (map[string]any, error) {
	out := base
	for seq := from + 1; seq <= to; seq++ {
		r := l.rec(seq)
		if r.typ != EventDepsUpdate {
			continue
		}
		ops, err := decodeOps(r.data)
		if err != nil {
			return nil, fmt.Errorf("events[%d]: %w", seq-1, err)
		}
		if out, err = foldOps(out, lists, ops); err != nil {
			return nil, fmt.Errorf("events[%d]: %v: %w", seq-1, err, ErrInvalidLog)
		}
	}
	return out, nil
}

// foldOps returns base with ops applied, appending into lists where it
// can and keeping there the lists it grew (see depsRecord); base itself is
// never written.
func foldOps(base map[string]any, lists map[string][]any, ops []Operation) (map[string]any, error) {
	red, err := reduce(base, lists, ops)
	if err != nil {
		return nil, err
	}
	for k, ch := range red.changed {
		if list, ok := ch.value.([]any); ok && lists != nil && cap(list) > len(list) {
			lists[k] = list
		} else if lists != nil {
			delete(lists, k)
		}
	}
	return red.deps(), nil
}

// decodeOps reads the operations of a deps_update event's data.
func decodeOps(data map[string]any) ([]Operation, error) {
	list, ok := data[DataOps].([]any)
	if !ok {
		return nil, fmt.Errorf("deps_update without a list of %q: %w", DataOps, ErrInvalidLog)
	}
	ops := make([]Operation, len(list))
	for i, item := range list {
		m, _ := item.(map[string]any)
		kind, _ := m["op"].(string)
		key, okKey := m["key"].(string)
		value, hasValue := m["value"]
		op := Operation{Kind: OpKind(kind), Key: key, Value: value}
		switch {
		case m == nil || !okKey:
			return nil, fmt.Errorf("%s[%d]: not an operation with a key: %w", DataOps, i, ErrInvalidLog)
		case op.Kind == OpDelete && !hasValue, (op.Kind == OpSet || op.Kind == OpAppend) && hasValue:
		case op.Kind == OpMerge && hasValue:
			if _, isMap := value.(map[string]any); !isMap && value != nil {
				return nil, fmt.Errorf("%s[%d]: a merge of %T: %w", DataOps, i, value, ErrInvalidLog)
			}
		default:
			return nil, fmt.Errorf("%s[%d]: operation %q (with a value: %v): %w", DataOps, i, kind, hasValue, ErrInvalidLog)
		}
		ops[i] = op
	}
	return ops, nil
}

// Deps returns the deps as of the event with the given seq: the fold of
// the log's deps_update events up to it, as they were written (secrets
// never were; whole numbers are int). A seq of 0 gives the deps before
// any event. The map is a copy the caller owns. A seq past the log's end
// is an error wrapping [ErrOutOfRange]; a deps_update event that does not
// hold operations one wrapping [ErrInvalidLog] that names it. A log that
// an earlier version of this package wrote has no deps_update events
// before its first save by this one, which records the deps it had then.
func (h *SessionLog) Deps(seq int64) (map[string]any, error) {
	l := h.log()
	if seq < 0 || seq > l.len() {
		return nil, fmt.Errorf("nous: deps as of event %d of a log of %d: %w", seq, l.len(), ErrOutOfRange)
	}
	deps, err := foldDeps(nil, map[string][]any{}, l, 0, seq)
	if err != nil {
		return nil, fmt.Errorf("nous: deps as of event %d: %w", seq, err)
	}
	if deps == nil {
		return map[string]any{}, nil
	}
	return jsonx.CloneMap(deps), nil
}
