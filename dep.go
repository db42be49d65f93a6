package nous

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
)

// Dep returns the value at key in deps as a T, and whether it is there and
// is one. Numbers convert when no information is lost, so Dep[int] reads a
// float64 2 or a json.Number "2" (what a value looks like after a trip
// through JSON elsewhere) but not 2.5; a []any converts to a []E when every
// element does, so Dep[[]string] reads a list decoded from JSON; and a
// map[string]any, what a struct or a typed map becomes when a context is
// saved and loaded, decodes into a struct, a typed map or a pointer to one
// when its JSON does, with no key the struct lacks, by encoding/json's rules
// (field names match in any letter case; a field of type any gets float64
// numbers). That last conversion encodes the map and decodes it again, so it
// costs as much as a JSON round trip of the value: read such a dep once per
// run, not per step.
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
// exactly, a []any whose elements all convert to t's element type, or a
// map[string]any whose JSON decodes into t.
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
	if m, ok := v.(map[string]any); ok {
		return decodeObject(m, t)
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

// decodeObject returns m decoded as JSON into a value of type t: a struct,
// a map or a pointer to one; false when t is another kind, or m has a key
// that t lacks or a value that does not fit.
func decodeObject(m map[string]any, t reflect.Type) (reflect.Value, bool) {
	k := t.Kind()
	if k == reflect.Pointer {
		k = t.Elem().Kind()
	}
	if k != reflect.Struct && k != reflect.Map {
		return reflect.Value{}, false
	}
	b, err := json.Marshal(m)
	if err != nil {
		return reflect.Value{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	out := reflect.New(t)
	if err := dec.Decode(out.Interface()); err != nil {
		return reflect.Value{}, false
	}
	return out.Elem(), true
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
