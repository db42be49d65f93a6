// Package jsonx holds the JSON-shaped value helpers of nous: deep copies of
// map[string]any trees and decoding that keeps whole numbers as int.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CloneMap returns a deep copy of m: nested map[string]any and []any values
// are copied, other values are shared. nil stays nil and an empty map stays
// an empty map.
func CloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = CloneValue(v)
	}
	return out
}

// CloneValue returns v with its map[string]any and []any containers copied,
// at any depth.
func CloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneMap(v)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CloneValue(e)
		}
		return out
	}
	return v
}

// IsObject reports whether raw is one valid JSON object.
func IsObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}

// DecodeMap decodes raw, a JSON object or null, into a map. Whole numbers
// decode as int (float64 when they do not fit), other numbers as float64.
// Empty input and null give a nil map.
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
	if dec.More() {
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
