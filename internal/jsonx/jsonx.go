// Package jsonx holds the JSON-shaped value helpers of nous: deep copies of
// map[string]any trees and decoding that keeps whole numbers as int.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// CloneMap returns a deep copy of m by the rule of [CloneValue]. nil stays
// nil and an empty map stays an empty map.
func CloneMap(m map[string]any) map[string]any { return cloneMap(m, 0) }

// CloneValue returns v with every map and slice in it copied, down to
// [MaxDepth] levels and of any type: map[string]any and []any, and also
// typed slices and maps (a []string, a map[string]int). Other values
// (pointers, structs, arrays, funcs) are shared; nil maps and slices stay
// nil.
func CloneValue(v any) any { return cloneValue(v, 0) }

func cloneMap(m map[string]any, depth int) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v, depth+1)
	}
	return out
}

func cloneValue(v any, depth int) any {
	if depth > MaxDepth {
		return v
	}
	switch v := v.(type) {
	case nil, string, bool, int, int64, float64, json.Number:
		return v
	case map[string]any:
		return cloneMap(v, depth)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e, depth+1)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		if rv.IsNil() {
			return v
		}
		return cloneReflect(rv, depth).Interface()
	}
	return v
}

// cloneReflect is cloneValue for a map or slice of any type.
func cloneReflect(v reflect.Value, depth int) reflect.Value {
	if depth > MaxDepth {
		return v
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		return reflect.ValueOf(cloneValue(v.Elem().Interface(), depth))
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(out, v)
		if holdsContainers(v.Type().Elem()) {
			for i := range v.Len() {
				if e := cloneReflect(v.Index(i), depth+1); e.IsValid() {
					out.Index(i).Set(e)
				}
			}
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		deep := holdsContainers(v.Type().Elem())
		for it := v.MapRange(); it.Next(); {
			e := it.Value()
			if deep {
				if e = cloneReflect(e, depth+1); !e.IsValid() {
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
