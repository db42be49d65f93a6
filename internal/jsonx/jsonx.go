// Package jsonx holds the JSON-shaped value helpers of nous: deep copies of
// map[string]any trees and decoding that keeps whole numbers as int.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// CloneMap returns a deep copy of m by the rule of [CloneValue]. nil stays
// nil and an empty map stays an empty map.
func CloneMap(m map[string]any) map[string]any { return cloneMap(m, 0, nil) }

// CloneValue returns v with every map and slice in it copied, down to
// [MaxDepth] levels and of any type: map[string]any and []any, and also
// typed slices and maps (a []string, a map[string]int). Other values
// (pointers, structs, arrays, funcs) are shared; nil maps and slices stay
// nil. A map or slice that holds itself is copied into a value that holds
// itself (once more at the root), so that a value that refers to itself
// many times costs about its size, not 2^MaxDepth.
func CloneValue(v any) any { return cloneValue(v, 0, nil) }

// frame is a map or a slice being copied, on the path from the value's
// root, with its copy: a value met again on the path is a cycle, whose
// copy is the copy under way. A container whose values are all scalars
// has none, nor the root (the deps, an event's data), which spares the
// common copy an allocation: a cycle through the root is copied twice,
// the root and, under it, a copy that holds itself.
type frame struct {
	p   uintptr // the map's or the typed slice's data
	sp  *any    // a []any's first element
	n   int     // a slice's length (a slice of its own array is another value)
	out any     // its copy, of its type
	up  *frame
}

// copied returns the copy under way of the map or slice at p (of length
// n) and type t, if it is on the path.
func (f *frame) copied(p uintptr, n int, t reflect.Type) (any, bool) {
	for ; f != nil; f = f.up {
		if f.p == p && f.n == n && reflect.TypeOf(f.out) == t {
			return f.out, true
		}
	}
	return nil, false
}

var mapType = reflect.TypeFor[map[string]any]()

func cloneMap(m map[string]any, depth int, up *frame) map[string]any {
	if m == nil {
		return nil
	}
	p := reflect.ValueOf(m).Pointer()
	if c, ok := up.copied(p, 0, mapType); ok {
		return c.(map[string]any)
	}
	out := make(map[string]any, len(m))
	var f *frame // made at the first value that is not a scalar: a flat map needs none
	for k, v := range m {
		if scalar(v) {
			out[k] = v
			continue
		}
		if f == nil && depth > 0 {
			f = &frame{p: p, out: out, up: up}
		}
		out[k] = cloneValue(v, depth+1, f)
	}
	return out
}

// scalar reports whether v is a value CloneValue returns as it is.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, float64, json.Number:
		return true
	}
	return false
}

func cloneValue(v any, depth int, up *frame) any {
	if depth > MaxDepth {
		return v
	}
	switch v := v.(type) {
	case nil, string, bool, int, int64, float64, json.Number:
		return v
	case map[string]any:
		return cloneMap(v, depth, up)
	case []any:
		if v == nil {
			return v
		}
		if len(v) > 0 {
			for f := up; f != nil; f = f.up {
				if f.sp == &v[0] && f.n == len(v) {
					return f.out
				}
			}
		}
		out := make([]any, len(v))
		var f *frame
		for i, e := range v {
			if scalar(e) {
				out[i] = e
				continue
			}
			if f == nil && depth > 0 {
				f = &frame{sp: &v[0], n: len(v), out: out, up: up}
			}
			out[i] = cloneValue(e, depth+1, f)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		if rv.IsNil() {
			return v
		}
		return cloneReflect(rv, depth, up).Interface()
	}
	return v
}

// cloneReflect is cloneValue for a map or slice of any type.
func cloneReflect(v reflect.Value, depth int, up *frame) reflect.Value {
	if depth > MaxDepth {
		return v
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		return reflect.ValueOf(cloneValue(v.Elem().Interface(), depth, up))
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := v.Len()
		if n > 0 {
			if c, ok := up.copied(v.Pointer(), n, v.Type()); ok {
				return reflect.ValueOf(c)
			}
		}
		out := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(out, v)
		if holdsContainers(v.Type().Elem()) {
			f := &frame{p: v.Pointer(), n: n, out: out.Interface(), up: up}
			for i := range n {
				if e := cloneReflect(v.Index(i), depth+1, f); e.IsValid() {
					out.Index(i).Set(e)
				}
			}
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		if c, ok := up.copied(v.Pointer(), 0, v.Type()); ok {
			return reflect.ValueOf(c)
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		deep := holdsContainers(v.Type().Elem())
		f := &frame{p: v.Pointer(), out: out.Interface(), up: up}
		for it := v.MapRange(); it.Next(); {
			e := it.Value()
			if deep {
				if e = cloneReflect(e, depth+1, f); !e.IsValid() {
					e = reflect.Zero(v.Type().Elem())
				}
			}
			out.SetMapIndex(it.Key(), e)
		}
		return out
	}
	return v
}

// holdsContainers reports whether a value of type t may be or hold a map or
// slice that cloneReflect copies.
func holdsContainers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Slice, reflect.Map:
		return true
	}
	return false
}

// MaxDepth is the one nesting bound of nous: a value nested deeper is not
// written (so that whatever is written, nested a few levels down in a
// document, reads back: encoding/json refuses documents nested deeper than
// 10,000 levels), tool-call arguments nested deeper are invalid, and
// [CloneValue] shares what lies deeper instead of copying it, which keeps a
// cyclic value from recursing until the stack overflows.
const MaxDepth = 1000

// Depth returns how deeply the arrays and objects of raw, valid JSON, nest:
// 0 for a scalar, 1 for a flat array or object.
func Depth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, b := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch b {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// IsObject reports whether raw is one valid JSON object.
func IsObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}

// DecodeMap decodes raw, a JSON object or null, into a map, numbers by the
// rule of [Number]: int for a whole number that fits, float64 for another
// finite number, and json.Number, its exact text, for anything else (a whole
// number too large for an int, say). Empty input and null give a nil map.
func DecodeMap(raw []byte) (map[string]any, error) {
	if isNull(raw) {
		return nil, nil
	}
	v, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", Kind(v))
	}
	return m, nil
}

// Decode decodes one JSON value with the number rule of [DecodeMap].
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return Numbers(v), nil
}

// Numbers replaces every json.Number in v, at any depth, by an int when it is
// written as a whole number that fits, and by a float64 otherwise.
func Numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = Numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = Numbers(e)
		}
	}
	return v
}

// Number converts n by the rule of [Numbers]: an int for a whole number that
// fits, a float64 for a finite number with a fraction or an exponent, and n
// itself otherwise, which keeps a huge number's exact text.
func Number(n json.Number) any {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(i)
		}
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return n
}

// Kind names the JSON kind of a decoded value, for error messages.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, float64, json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// Equal reports whether a and b, values of the JSON types (maps of string
// keys, lists, strings, numbers of any Go number type or json.Number,
// booleans, nil), are the same JSON value: numbers are equal when they
// have the same value (3, int64(3) and 3.0 are), and a value of any other
// type is equal to nothing, as it can hold anything.
func Equal(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		if y, ok := b.(json.Number); ok && x == y { // one text, one number (even past a float64's range)
			return true
		}
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	n, ok := number(a)
	m, okb := number(b)
	return ok && okb && n.equal(m)
}

// num is a JSON number: an integer when it is one that fits 64 bits, else
// a float.
type num struct {
	i     int64
	u     uint64 // for a uint64 above the int64 range
	f     float64
	isInt bool
	big   bool // u holds it
}

// equal reports whether n and m are one number: a float that is a whole
// number is an integer already (see floatNum).
func (n num) equal(m num) bool {
	switch {
	case n.big || m.big:
		return n.big && m.big && n.u == m.u
	case n.isInt || m.isInt:
		return n.isInt && m.isInt && n.i == m.i
	}
	return n.f == m.f
}

// number returns v as a num, and false when it is not a number.
func number(v any) (num, bool) {
	switch x := v.(type) {
	case int:
		return num{i: int64(x), isInt: true}, true
	case int8:
		return num{i: int64(x), isInt: true}, true
	case int16:
		return num{i: int64(x), isInt: true}, true
	case int32:
		return num{i: int64(x), isInt: true}, true
	case int64:
		return num{i: x, isInt: true}, true
	case uint8:
		return num{i: int64(x), isInt: true}, true
	case uint16:
		return num{i: int64(x), isInt: true}, true
	case uint32:
		return num{i: int64(x), isInt: true}, true
	case uint:
		return number(uint64(x))
	case uint64:
		if x > math.MaxInt64 {
			return num{u: x, big: true}, true
		}
		return num{i: int64(x), isInt: true}, true
	case float32:
		return floatNum(float64(x)), true
	case float64:
		return floatNum(x), true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return num{i: i, isInt: true}, true
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return num{u: u, big: true}, true
		}
		f, err := x.Float64()
		return floatNum(f), err == nil
	}
	return num{}, false
}

// floatNum returns f as a num: an integer when it is a whole number a
// float64 holds exactly, as JSON writes it like one.
func floatNum(f float64) num {
	if f == math.Trunc(f) && f >= -1<<53 && f <= 1<<53 {
		return num{i: int64(f), isInt: true}
	}
	return num{f: f}
}
