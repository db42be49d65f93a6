package nous

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/nous-go/nous/internal/jsonx"
)

// OpKind names what an [Operation] does.
type OpKind string

// The operations of a [ContextUpdate].
const (
	OpSet      OpKind = "set"       // replace the key's value
	OpMerge    OpKind = "merge"     // deep merge a map into the key's value
	OpAppend   OpKind = "append"    // append an item to the list at the key
	OpDelete   OpKind = "delete"    // remove the key
	OpLogEvent OpKind = "log_event" // record a bookkeeping event; touches no deps
)

// Operation is one step of a [ContextUpdate].
type Operation struct {
	Kind  OpKind // what the operation does
	Key   string // the deps key; empty for OpLogEvent
	Value any    // OpSet: the value; OpAppend: the item; OpMerge: the map[string]any

	EventType EventType      // OpLogEvent: the bookkeeping event type
	Data      map[string]any // OpLogEvent: the event's data
}

// clone returns a copy of op that shares no map or []any with it.
func (op Operation) clone() Operation {
	op.Value = jsonx.CloneValue(op.Value)
	op.Data = jsonx.CloneMap(op.Data)
	return op
}

// LoggedEvent is a bookkeeping event carried by a [ContextUpdate].
type LoggedEvent struct {
	Type EventType      // a bookkeeping type, when the update was built with one
	Data map[string]any // the event's data
}

// ContextUpdate is the value a tool returns to change the context's deps, and
// to record bookkeeping events, without touching the context itself. It is an
// immutable list of operations: each builder method returns a new update and
// leaves the receiver unchanged, so two updates built from the same base are
// independent. The zero value is an empty update.
//
//	u := nous.NewContextUpdate().
//		Set("user", "ada").
//		Append("notes", "likes tea").
//		LogEvent(nous.EventToolCall, map[string]any{"name": "remember"})
//
// [ContextUpdate.ToDeps] is the one place an operation's meaning is defined:
// [ContextUpdate.Apply] and [ContextUpdate.ApplyToRunContext] both reduce
// through it. A ContextUpdate may be passed between goroutines freely.
type ContextUpdate struct {
	last *opNode // newest operation; nil for the empty update
	n    int
}

// opNode is one operation in a persistent list. Nodes are never written
// after they are made, so updates share their common prefix safely and a
// builder call costs O(1).
type opNode struct {
	op   Operation
	prev *opNode
}

// NewContextUpdate returns an empty update; so is the zero ContextUpdate.
func NewContextUpdate() ContextUpdate { return ContextUpdate{} }

func (u ContextUpdate) with(op Operation) ContextUpdate {
	return ContextUpdate{last: &opNode{op: op, prev: u.last}, n: u.n + 1}
}

// Set returns u followed by an operation that sets key to value. The maps
// and slices in value are copied.
func (u ContextUpdate) Set(key string, value any) ContextUpdate {
	return u.with(Operation{Kind: OpSet, Key: key, Value: jsonx.CloneValue(value)})
}

// Merge returns u followed by an operation that deep merges m into the map at
// key: nested maps merge recursively, and any other value, on either side,
// is replaced by m's. When key is absent or not a map, m becomes its value. m
// is copied. Maps of every kind merge alike: a typed map or a struct at the
// key, or nested in it, merges as the map[string]any it becomes when the
// context is saved and loaded, and the merged value is that generic map.
func (u ContextUpdate) Merge(key string, m map[string]any) ContextUpdate {
	return u.with(Operation{Kind: OpMerge, Key: key, Value: jsonx.CloneMap(m)})
}

// Append returns u followed by an operation that appends item to the list at
// key. Onto an absent or nil key it makes []any{item}; onto a []any, a new
// []any; onto a slice of another type, a new slice of that type when item is
// assignable to its element type. Anything else fails the reduction with
// [ErrTypeMismatch]. The maps and slices in item are copied.
func (u ContextUpdate) Append(key string, item any) ContextUpdate {
	return u.with(Operation{Kind: OpAppend, Key: key, Value: jsonx.CloneValue(item)})
}

// Delete returns u followed by an operation that removes key.
func (u ContextUpdate) Delete(key string) ContextUpdate {
	return u.with(Operation{Kind: OpDelete, Key: key})
}

// LogEvent returns u followed by an operation that appends a bookkeeping
// event of type t with data to the session log when the update is applied to
// a [Context]. It touches no deps. data is copied.
func (u ContextUpdate) LogEvent(t EventType, data map[string]any) ContextUpdate {
	return u.with(Operation{Kind: OpLogEvent, EventType: t, Data: jsonx.CloneMap(data)})
}

// Combine returns one update made of the operations of updates, in the order
// given. A runner that executed tool calls in parallel combines their updates
// in tool-call order, not completion order, so the result does not depend on
// scheduling.
func Combine(updates ...ContextUpdate) ContextUpdate {
	var out ContextUpdate
	for _, u := range updates {
		if out.n == 0 {
			out = u // share the first update's list: nodes are immutable
			continue
		}
		for _, op := range u.ops() {
			out = out.with(op)
		}
	}
	return out
}

// Empty reports whether u has no operations.
func (u ContextUpdate) Empty() bool { return u.n == 0 }

// Len returns the number of operations in u.
func (u ContextUpdate) Len() int { return u.n }

// ops returns u's operations in order. They share maps with u: read only.
func (u ContextUpdate) ops() []Operation {
	out := make([]Operation, u.n)
	i := u.n
	for node := u.last; node != nil; node = node.prev {
		i--
		out[i] = node.op
	}
	return out
}

// Operations returns u's operations in the order they were added, a copy the
// caller owns.
func (u ContextUpdate) Operations() []Operation {
	out := u.ops()
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

// LogEvents returns the events of u's OpLogEvent operations in the order they
// were added, a copy the caller owns. A caller that holds a session log uses
// it to append them; one that does not, to say exactly what it dropped.
func (u ContextUpdate) LogEvents() []LoggedEvent {
	var out []LoggedEvent
	for _, op := range u.ops() {
		if op.Kind == OpLogEvent {
			out = append(out, LoggedEvent{Type: op.EventType, Data: jsonx.CloneMap(op.Data)})
		}
	}
	return out
}

// ToDeps reduces u's deps operations, in order, onto a copy of initial and
// returns the result; OpLogEvent operations are skipped. It is the one
// definition of what each operation means.
//
// ToDeps never modifies initial or anything reachable from it. The result is
// a new map that shares what u does not change with initial: a merge copies
// the maps along the paths it writes, and the first append to a list copies
// it, with room to grow, so 2,000 appends to one key copy the list once, not
// 2,000 times. The lists u changes have no spare capacity in the result.
// ([ContextUpdate.Apply] does not even copy the top level: it writes the
// changed keys in place.) An append onto a value that is not a list fails
// with an error wrapping [ErrTypeMismatch] that names the key and the types.
func (u ContextUpdate) ToDeps(initial map[string]any) (map[string]any, error) {
	r, err := reduce(initial, nil, u.ops())
	if err != nil {
		return nil, err
	}
	return r.deps(), nil
}

// reduce runs the deps operations of ops over base, which it never writes,
// and returns what they change. spare holds the lists a context keeps with
// their spare capacity (see Context.lists); nil outside Apply.
func reduce(base map[string]any, spare map[string][]any, ops []Operation) (*reducer, error) {
	r := &reducer{base: base, spare: spare}
	for i, op := range ops {
		if err := r.apply(op); err != nil {
			return nil, fmt.Errorf("nous: update operation %d (%s %q): %w", i, op.Kind, op.Key, err)
		}
	}
	return r, nil
}

// deps returns a new map: the base with the changes made.
func (r *reducer) deps() map[string]any {
	out := make(map[string]any, len(r.base)+len(r.changed))
	for k, v := range r.base {
		if _, ok := r.changed[k]; !ok {
			out[k] = v
		}
	}
	for k, c := range r.changed {
		if !c.deleted {
			out[k] = clipped(c.value)
		}
	}
	return out
}

// clipped returns v, a value a reduction made, without spare capacity when
// it is a slice, so that two holders appending to it cannot write into each
// other's elements.
func clipped(v any) any {
	if l, ok := v.([]any); ok {
		return slices.Clip(l)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Cap() > rv.Len() {
		return rv.Slice3(0, rv.Len(), rv.Len()).Interface()
	}
	return v
}

// reducer applies operations over a base map it never writes: the keys they
// change are kept apart, in changed, so that applying an update to a context
// costs the keys it touches, not all of them.
//
// It never writes a map it did not make: a merge copies the maps along the
// paths it writes (see merged). A list in changed is its own (the copy the
// first append into the key made, or a set's copy of its value), so later
// appends write it in place; a list of base is copied before it is written.
type reducer struct {
	base    map[string]any
	changed map[string]change
	spare   map[string][]any // lists the context made, with their spare capacity
}

// change is the new state of one key.
type change struct {
	value   any
	deleted bool
}

func (r *reducer) get(key string) (any, bool) {
	if c, ok := r.changed[key]; ok {
		return c.value, !c.deleted
	}
	v, ok := r.base[key]
	return v, ok
}

// owns reports whether the value at key is this reduction's own.
func (r *reducer) owns(key string) bool {
	_, ok := r.changed[key]
	return ok
}

// put sets the change of key to c.
func (r *reducer) put(key string, c change) {
	if r.changed == nil {
		r.changed = map[string]change{}
	}
	r.changed[key] = c
}

func (r *reducer) apply(op Operation) error {
	switch op.Kind {
	case OpSet:
		r.put(op.Key, change{value: jsonx.CloneValue(op.Value)})
	case OpDelete:
		r.put(op.Key, change{deleted: true})
	case OpMerge:
		// The builders make only the operations they document; this and the
		// default case below guard the reducer against a future one.
		m, ok := op.Value.(map[string]any)
		if !ok && op.Value != nil {
			return fmt.Errorf("merge value is %T, not a map[string]any: %w", op.Value, ErrTypeMismatch)
		}
		cur, _ := r.get(op.Key)
		d, _ := object(cur) // anything else is replaced
		r.put(op.Key, change{value: merged(d, m)})
	case OpAppend:
		return r.append(op.Key, op.Value)
	case OpLogEvent:
	default:
		return fmt.Errorf("unknown operation kind %q: %w", op.Kind, ErrTypeMismatch)
	}
	return nil
}

// merged returns a new map: dst with src deep merged into it. Nested maps
// (of any kind on either side: see object) merge recursively, into new maps
// too; any other value, on either side, is replaced by a copy of src's. The maps along the
// paths it writes are copies, the rest is shared with dst, which it never
// writes, at any depth.
func merged(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	maps.Copy(out, dst)
	for k, v := range src {
		if dv, ok := object(out[k]); ok {
			if sv, ok := object(v); ok {
				out[k] = merged(dv, sv)
				continue
			}
		}
		out[k] = jsonx.CloneValue(v)
	}
	return out
}

// object returns v as a map[string]any when it is a JSON object: a
// map[string]any itself, or a typed map or a struct (or a pointer to one),
// as its JSON decodes, which is what v becomes when the context is saved and
// loaded. So a merge deep-merges every kind of map alike, and gives the same
// result whether or not the context was saved in between. Converting a typed
// value costs a JSON round trip of it, once: the merged value is generic.
func object(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if k := rv.Kind(); k != reflect.Map && k != reflect.Struct {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	m, err := jsonx.DecodeMap(b)
	return m, err == nil && m != nil
}

// append adds item to the list at key. The first append to a list this
// reduction did not make copies it, with room to grow; later ones append in
// place, so n appends cost O(n).
func (r *reducer) append(key string, item any) error {
	cur, present := r.get(key)
	item = jsonx.CloneValue(item)
	if !present || cur == nil {
		r.put(key, change{value: []any{item}})
		return nil
	}
	if l, ok := cur.([]any); ok {
		if !r.owns(key) {
			if sp := r.spare[key]; len(sp) == len(l) && len(l) > 0 && &sp[0] == &l[0] {
				l = sp // the context's own list, still in its deps: its spare capacity is ours
			} else {
				l = append(make([]any, 0, max(2*len(l), 4)), l...)
			}
		}
		r.put(key, change{value: append(l, item)})
		return nil
	}
	v := reflect.ValueOf(cur)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("append %T onto %T: %w", item, cur, ErrTypeMismatch)
	}
	elem := v.Type().Elem()
	iv := reflect.ValueOf(item)
	if item == nil {
		switch elem.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
			iv = reflect.Zero(elem)
		default:
			return fmt.Errorf("append nil onto %T: %w", cur, ErrTypeMismatch)
		}
	} else if !iv.Type().AssignableTo(elem) {
		return fmt.Errorf("append %T onto %T: %w", item, cur, ErrTypeMismatch)
	}
	if !r.owns(key) {
		grown := reflect.MakeSlice(v.Type(), v.Len(), max(2*v.Len(), 4))
		reflect.Copy(grown, v)
		v = grown
	}
	r.put(key, change{value: reflect.Append(v, iv).Interface()})
	return nil
}

// Apply applies u to c: the deps operations first, in order, through
// [ContextUpdate.ToDeps], recorded in c's session log as one deps_update
// event ([EventDepsUpdate]; an operation on a key the redaction rule names
// is left out of it), then the bookkeeping events, in order, appended to
// c's session log. Messages are never touched. An event whose type is not a
// bookkeeping type is dropped with a warning on c's logger, and the rest
// applies.
//
// Apply is all or nothing for the deps: when the reduction fails it returns
// the error and c is unchanged.
func (u ContextUpdate) Apply(c *Context) error {
	if u.n == 0 {
		return nil
	}
	ops := u.ops()
	r, err := reduce(c.Deps, c.lists, ops)
	if err != nil {
		return err
	}
	if c.Deps == nil && len(r.changed) > 0 {
		c.Deps = make(map[string]any, len(r.changed))
	}
	for k, ch := range r.changed {
		delete(c.lists, k)
		switch l, isList := ch.value.([]any); {
		case ch.deleted:
			delete(c.Deps, k)
		case isList && cap(l) > len(l):
			// A list this reduction made: the context keeps it with its
			// spare capacity and shows it clipped, so that no one else can
			// append into that capacity and the next Apply can.
			if c.lists == nil {
				c.lists = map[string][]any{}
			}
			c.lists[k] = l
			c.Deps[k] = slices.Clip(l)
		default:
			c.Deps[k] = clipped(ch.value)
		}
	}
	c.recordOps(ops, r.changed)
	for _, op := range ops {
		if op.Kind != OpLogEvent {
			continue
		}
		if err := c.LogEvent(op.EventType, op.Data); err != nil {
			c.logger().Warn("nous: ContextUpdate.Apply dropped a log event", "type", string(op.EventType), "err", err)
		}
	}
	return nil
}

// ApplyToRunContext returns a copy of rc with u's deps operations applied
// through [ContextUpdate.ToDeps]; rc is unchanged. The copy shares no map or
// slice with rc (down to jsonx's depth bound of 1,000 levels, as
// [NewRunContext]): its deps are a deep copy of rc's with the changed keys
// written in place. A run context has no log, so u's log events are dropped,
// with one warning on rc.Logger (slog's default when nil) naming the types
// lost. On error it returns rc itself and the error.
func (u ContextUpdate) ApplyToRunContext(rc RunContext) (RunContext, error) {
	ops := u.ops()
	deps := jsonx.CloneMap(rc.Deps)
	r, err := reduce(deps, nil, ops)
	if err != nil {
		return rc, err
	}
	if deps == nil {
		deps = make(map[string]any, len(r.changed))
	}
	for k, ch := range r.changed {
		if ch.deleted {
			delete(deps, k)
		} else {
			deps[k] = clipped(ch.value)
		}
	}
	var lost []string
	for _, op := range ops {
		if op.Kind == OpLogEvent {
			lost = append(lost, string(op.EventType))
		}
	}
	if len(lost) > 0 {
		rc.logger().Warn("nous: ContextUpdate.ApplyToRunContext dropped log events: a RunContext has no session log", "types", lost)
	}
	rc.Deps = deps
	rc.Call = rc.Call.clone()
	if rc.Sandbox != nil {
		p := *rc.Sandbox
		p.WritableRoots = slices.Clone(p.WritableRoots)
		rc.Sandbox = &p
	}
	return rc, nil
}
