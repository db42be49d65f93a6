// Package reftest holds the reference models the tests of nous check the
// package against: a reducer written to be obviously right rather than fast,
// the rule for the deps keys a saved context never holds, one deep copy, one
// scribbler and one generator of random deps and operations.
//
// It never imports nous, so that the tests of both package nous and
// package nous_test can use it; the tests adapt its values to nous types.
package reftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// The kinds of an [Op]: the names of nous.OpKind, written again.
const (
	Set    = "set"
	Merge  = "merge"
	Append = "append"
	Delete = "delete"
	Log    = "log_event"
)

// Op is one operation of an update, as the reference knows it.
type Op struct {
	Kind  string
	Key   string
	Value any // Set: the value; Append: the item; Merge: a map[string]any, or nil

	Event string         // Log: the event type
	Data  map[string]any // Log: the event's data
}

func (o Op) String() string {
	switch o.Kind {
	case Log:
		return fmt.Sprintf("log_event(%s, %v)", o.Event, o.Data)
	case Delete:
		return fmt.Sprintf("delete(%q)", o.Key)
	}
	return fmt.Sprintf("%s(%q, %#v)", o.Kind, o.Key, o.Value)
}

// Bookkeeping are the event types a log event of an update may have; any
// other is dropped with a warning. The list of the spec, not the package's,
// and runtime_event, the one this port adds.
var Bookkeeping = map[string]bool{
	"turn_start": true, "turn_end": true, "step_start": true,
	"step_end": true, "tool_call": true, "request_header": true,
	"runtime_event": true,
}

// Reduce returns the deps after ops, or nil and the index of the operation
// that fails: an append onto a value that is not a list, or an item the
// list's element type does not take. It never writes initial, and it works
// on a fresh deep copy at every step. Log events change nothing.
func Reduce(initial map[string]any, ops []Op) (map[string]any, int) {
	deps, _ := Copy(initial).(map[string]any)
	if deps == nil {
		deps = map[string]any{}
	}
	for i, op := range ops {
		deps = Copy(deps).(map[string]any)
		switch op.Kind {
		case Set:
			deps[op.Key] = Copy(op.Value)
		case Delete:
			delete(deps, op.Key)
		case Merge:
			src, _ := op.Value.(map[string]any)
			deps[op.Key] = merge(deps[op.Key], src)
		case Append:
			v, ok := appendItem(deps[op.Key], Copy(op.Value))
			if !ok {
				return nil, i
			}
			deps[op.Key] = v
		case Log:
		default:
			panic("reftest: unknown operation " + op.Kind)
		}
	}
	return deps, -1
}

// merge returns a new value: src deep merged into dst. Nested maps merge,
// typed maps and structs as the JSON objects they are saved as; any other
// value, on either side, is replaced by src's.
func merge(dst any, src map[string]any) any {
	d, ok := object(dst)
	if !ok || d == nil {
		out, _ := Copy(src).(map[string]any)
		if out == nil {
			out = map[string]any{}
		}
		return out
	}
	out := Copy(d).(map[string]any)
	for k, v := range src {
		if _, ok := object(out[k]); ok {
			if sv, ok := object(v); ok {
				out[k] = merge(out[k], sv)
				continue
			}
		}
		out[k] = Copy(v)
	}
	return out
}

// object returns v as a JSON object: a map[string]any as it is, and a
// typed map or a struct, or a pointer to one, as encoding/json writes and
// reads it back, whole numbers as int.
func object(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Map && rv.Kind() != reflect.Struct {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		return nil, false
	}
	return wholeNumbers(m).(map[string]any), true
}

// wholeNumbers replaces every json.Number in v by an int when it is a whole
// number that fits, and a float64 otherwise.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.Atoi(string(v)); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = wholeNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = wholeNumbers(e)
		}
	}
	return v
}

// appendItem returns a new list: cur with item appended. An absent or nil
// cur gives []any{item}; a slice of another type takes an item assignable
// to its element type, or a nil one when that type has a nil.
func appendItem(cur, item any) (any, bool) {
	if cur == nil {
		return []any{item}, true
	}
	if l, ok := cur.([]any); ok {
		out := make([]any, len(l)+1)
		copy(out, l)
		out[len(l)] = item
		return out, true
	}
	rv := reflect.ValueOf(cur)
	if rv.Kind() != reflect.Slice {
		return nil, false
	}
	elem := rv.Type().Elem()
	var iv reflect.Value
	if item == nil {
		switch elem.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
			iv = reflect.Zero(elem)
		default:
			return nil, false
		}
	} else if iv = reflect.ValueOf(item); !iv.Type().AssignableTo(elem) {
		return nil, false
	}
	out := reflect.MakeSlice(rv.Type(), rv.Len()+1, rv.Len()+1)
	reflect.Copy(out, rv)
	out.Index(rv.Len()).Set(iv)
	return out.Interface(), true
}
