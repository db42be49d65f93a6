package nous

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
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
	Kind  OpKind
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
	Type EventType
	Data map[string]any
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
// is copied.
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
// ToDeps never modifies initial or anything reachable from it: it copies the
// maps and lists along the path it changes, and the result shares the rest
// with initial. Beyond one copy of initial's top level, its cost is linear
// in the number of operations plus the keys they touch: 2,000 appends to one
// key copy the list once, not 2,000 times. ([ContextUpdate.Apply] does not
// even copy the top level: it writes the changed keys in place.)
// An append onto a value that is not a list fails with an error wrapping
// [ErrTypeMismatch] that names the key and the types.
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
			out[k] = c.value
		}
	}
	return out
}

// reducer applies operations over a base map it never writes: the keys they
// change are kept apart, in changed, so that applying an update to a context
// costs the keys it touches, not all of them. It remembers which maps and
// lists it made itself: those it may change in place, everything else it
// copies first.
type reducer struct {
	base    map[string]any
	changed map[string]change
	owned   map[uintptr]bool // maps this reduction made, by address
	lists   map[string]bool  // keys whose list this reduction made
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

func (r *reducer) put(key string, v any) {
	if r.changed == nil {
		r.changed = map[string]change{}
	}
	r.changed[key] = change{value: v}
}

func (r *reducer) apply(op Operation) error {
	switch op.Kind {
	case OpSet:
		delete(r.lists, op.Key)
		r.put(op.Key, jsonx.CloneValue(op.Value))
	case OpDelete:
		delete(r.lists, op.Key)
		if r.changed == nil {
			r.changed = map[string]change{}
		}
		r.changed[op.Key] = change{deleted: true}
	case OpMerge:
		// The builders make only the operations they document; this and the
		// default case below guard the reducer against a future one.
		m, ok := op.Value.(map[string]any)
		if !ok && op.Value != nil {
			return fmt.Errorf("merge value is %T, not a map[string]any: %w", op.Value, ErrTypeMismatch)
		}
		delete(r.lists, op.Key)
		cur, _ := r.get(op.Key)
		r.put(op.Key, r.merge(cur, m))
	case OpAppend:
		return r.append(op.Key, op.Value)
	case OpLogEvent:
	default:
		return fmt.Errorf("unknown operation kind %q: %w", op.Kind, ErrTypeMismatch)
	}
	return nil
}

// merge returns dst with src deep merged into it, copying any map of dst it
// has not made itself before writing to it.
func (r *reducer) merge(dst any, src map[string]any) any {
	d, ok := dst.(map[string]any)
	if !ok || d == nil {
		return r.own(jsonx.CloneMap(src))
	}
	if !r.owned[mapAddr(d)] {
		d = r.own(maps.Clone(d))
	}
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if _, isMap := d[k].(map[string]any); isMap {
				d[k] = r.merge(d[k], sv)
				continue
			}
		}
		d[k] = jsonx.CloneValue(v)
	}
	return d
}

func (r *reducer) own(m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	if r.owned == nil {
		r.owned = map[uintptr]bool{}
	}
	r.owned[mapAddr(m)] = true
	return m
}

func mapAddr(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// append adds item to the list at key. The first append to a list this
// reduction did not make copies it, with room to grow; later ones append in
// place, so n appends cost O(n).
func (r *reducer) append(key string, item any) error {
	cur, present := r.get(key)
	item = jsonx.CloneValue(item)
	if !present || cur == nil {
		r.put(key, []any{item})
		r.markList(key)
		return nil
	}
	if l, ok := cur.([]any); ok {
		if !r.lists[key] {
			if sp := r.spare[key]; len(sp) == len(l) && len(l) > 0 && &sp[0] == &l[0] {
				l = sp // the context's own list: its spare capacity is ours
			} else {
				l = append(make([]any, 0, max(2*len(l), 4)), l...)
			}
			r.markList(key)
		}
		r.put(key, append(l, item))
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
	if !r.lists[key] {
		grown := reflect.MakeSlice(v.Type(), v.Len(), max(2*v.Len(), 4))
		reflect.Copy(grown, v)
		v = grown
		r.markList(key)
	}
	r.put(key, reflect.Append(v, iv).Interface())
	return nil
}

func (r *reducer) markList(key string) {
	if r.lists == nil {
		r.lists = map[string]bool{}
	}
	r.lists[key] = true
}

// Apply applies u to c: the deps operations first, in order, through
// [ContextUpdate.ToDeps], then the bookkeeping events, in order, appended to
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
		case isList && r.lists[k] && cap(l) > len(l):
			// A list this reduction made: the context keeps it with its
			// spare capacity and shows it clipped, so that no one else can
			// append into that capacity and the next Apply can.
			if c.lists == nil {
				c.lists = map[string][]any{}
			}
			c.lists[k] = l
			c.Deps[k] = slices.Clip(l)
		default:
			c.Deps[k] = ch.value
		}
	}
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
// through [ContextUpdate.ToDeps]; rc is unchanged, and the copy shares no map
// or slice with it. A run context has no log, so u's log events are dropped,
// with one warning on slog's default logger naming the types lost. On error
// it returns rc itself and the error.
func (u ContextUpdate) ApplyToRunContext(rc RunContext) (RunContext, error) {
	ops := u.ops()
	r, err := reduce(rc.Deps, nil, ops)
	if err != nil {
		return rc, err
	}
	var lost []string
	for _, op := range ops {
		if op.Kind == OpLogEvent {
			lost = append(lost, string(op.EventType))
		}
	}
	if len(lost) > 0 {
		slog.Warn("nous: ContextUpdate.ApplyToRunContext dropped log events: a RunContext has no session log", "types", lost)
	}
	rc.Deps = r.deps()
	for k, v := range rc.Deps { // deps shares what it did not change with the input
		rc.Deps[k] = jsonx.CloneValue(v)
	}
	if rc.Sandbox != nil {
		p := *rc.Sandbox
		p.WritableRoots = slices.Clone(p.WritableRoots)
		rc.Sandbox = &p
	}
	return rc, nil
}

// Dep returns the value at key in deps as a T, and whether it is there and
// is one. Numbers convert when no information is lost, so Dep[int] reads a
// float64 2 or a json.Number "2" (what a value looks like after a trip
// through JSON elsewhere) but not 2.5; and a []any converts to a []E when
// every element does, so Dep[[]string] reads a list decoded from JSON.
func Dep[T any](deps map[string]any, key string) (T, bool) {
	var zero T
	v, ok := deps[key]
	if !ok {
		return zero, false
	}
	if t, ok := v.(T); ok {
		return t, true
	}
	out, ok := convert(v, reflect.TypeFor[T]())
	if !ok {
		return zero, false
	}
	return out.Interface().(T), true
}

// convert returns v as a value of type t when it is a number that t holds
// exactly, or a []any whose elements all convert to t's element type.
func convert(v any, t reflect.Type) (reflect.Value, bool) {
	if v == nil {
		return reflect.Value{}, false
	}
	rv := reflect.ValueOf(v)
	if rv.Type().AssignableTo(t) {
		out := reflect.New(t).Elem()
		out.Set(rv)
		return out, true
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			rv = reflect.ValueOf(i)
		} else if f, err := n.Float64(); err == nil {
			rv = reflect.ValueOf(f)
		} else {
			return reflect.Value{}, false
		}
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := exactInt(rv)
		if !ok || out.OverflowInt(i) {
			return reflect.Value{}, false
		}
		out.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u, ok := exactUint(rv)
		if !ok || out.OverflowUint(u) {
			return reflect.Value{}, false
		}
		out.SetUint(u)
	case reflect.Float32, reflect.Float64:
		f, ok := exactFloat(rv)
		if !ok || (t.Kind() == reflect.Float32 && float64(float32(f)) != f) {
			return reflect.Value{}, false
		}
		out.SetFloat(f)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return reflect.Value{}, false
		}
		out = reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			ev, ok := convert(e, t.Elem())
			if !ok {
				return reflect.Value{}, false
			}
			out.Index(i).Set(ev)
		}
	default:
		return reflect.Value{}, false
	}
	return out, true
}

// exactInt returns v, a number, as an int64 when it is a whole number that
// fits.
func exactInt(v reflect.Value) (int64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// exactUint returns v, a number, as a uint64 when it is a whole number that
// fits.
func exactUint(v reflect.Value) (uint64, bool) {
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := v.Int()
		return uint64(i), i >= 0
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if f != math.Trunc(f) || f < 0 || f >= 1<<64 {
			return 0, false
		}
		return uint64(f), true
	}
	return 0, false
}

// exactFloat returns v, a number, as a float64 when that loses nothing.
func exactFloat(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := v.Int()
		f := float64(i)
		return f, f >= -(1<<63) && f < 1<<63 && int64(f) == i
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		f := float64(u)
		return f, f < 1<<64 && uint64(f) == u
	}
	return 0, false
}
