package nousadk

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"

	"github.com/nous-go/nous/internal/jsonx"
)

// jsonState returns a copy of state, each value as encoding/json decodes
// its JSON into an any: what ADK's database service gives of a state it
// read, whose code asserts v.(float64). See [jsonValue]. A value that
// holds itself, or is nested deeper than JSON is kept, is left out.
func jsonState(state map[string]any) map[string]any {
	out := make(map[string]any, len(state))
	for k, v := range state {
		if v, ok := jsonValue(v, nil); ok {
			out[k] = v
		}
	}
	return out
}

// jsonValue returns a copy of v, under the maps and lists of path, as
// encoding/json decodes the JSON it encodes v to: every number a float64
// (a float32 by its shortest decimal, as JSON writes it), a typed map or
// a struct a map[string]any by its JSON names, a typed list an []any,
// bytes their base64 string; and whether to keep it: a map or a list
// that holds itself, or is nested deeper than JSON is kept, is not. A
// value JSON cannot hold is kept as it is (a NaN, a number past a
// float64's range, one whose encoding fails), copied.
func jsonValue(v any, path []uintptr) (any, bool) {
	if len(path) > jsonx.MaxDepth {
		return nil, false
	}
	if f, ok := jsonNumber(v); ok {
		return f, true
	}
	switch x := v.(type) {
	case nil, bool, string:
		return v, true
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f, true
		}
		return v, true
	case map[string]any:
		if x == nil {
			return nil, true // null
		}
		p := reflect.ValueOf(x).Pointer()
		if slices.Contains(path, p) {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e, ok := jsonValue(e, append(path, p)); ok {
				out[k] = e
			}
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true // null
		}
		if len(x) == 0 {
			return []any{}, true
		}
		p := reflect.ValueOf(x).Pointer()
		if slices.Contains(path, p) {
			return nil, false
		}
		out := make([]any, 0, len(x))
		for _, e := range x {
			if e, ok := jsonValue(e, append(path, p)); ok {
				out = append(out, e)
			}
		}
		return out, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return jsonx.CloneValue(v), true
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return jsonx.CloneValue(v), true
	}
	return out, true
}

// carrySecrets sets in dst, the deps of a context just read from the
// store, the values of held, the deps of the context this process held of
// the same log before, that the store never holds: those of the keys rule
// names, at the top and at any depth of the maps both hold, that dst
// lacks. So a secret stays in this process when it reads a session or a
// scope again (after a save of it was refused, say). held is dropped
// after, and its values are shared.
func carrySecrets(dst, held map[string]any, rule func(string) bool) {
	for k, v := range held {
		cur, ok := dst[k]
		if !ok {
			if rule(k) {
				dst[k] = v
			}
			continue
		}
		// dst, read from JSON, holds no cycle: the walk ends with it.
		if cm, ok := cur.(map[string]any); ok {
			if hm, ok := v.(map[string]any); ok {
				carrySecrets(cm, hm, rule)
			}
		}
	}
}

// jsonNumber returns v, a number of a Go type, as encoding/json decodes its
// JSON: a float64, a float32 by the shortest decimal JSON writes it as;
// and whether v is one.
func jsonNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		if err != nil {
			return float64(x), true
		}
		return f, true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// undoMerge returns the function that sets the keys of delta in deps back
// to what they are now, before deps takes delta: a key deps lacks is
// deleted, another is given its value back.
func undoMerge(deps, delta map[string]any) func() {
	before := make(map[string]any, len(delta))
	for k := range delta {
		if v, ok := deps[k]; ok {
			before[k] = v
		}
	}
	return func() {
		for k := range delta {
			if v, ok := before[k]; ok {
				deps[k] = v
			} else {
				delete(deps, k)
			}
		}
	}
}
