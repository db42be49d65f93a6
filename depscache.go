package nous

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/jsonx"
)

// savedState returns c's state document, sanitized by s, as stateJSON
// writes it: its deps written from the cache where they did not change.
func (c *Context) savedState(s *sanitizer) []byte {
	for k := range c.Deps {
		if !utf8.ValidString(k) { // how such a key is written depends on the others: the whole map decides
			return c.stateJSON(s)
		}
	}
	d := c.stateWithoutDeps(s)
	var buf bytes.Buffer
	buf.Grow(len(c.persist.synced.state) + 512) // about the last one's size
	jw := newJSONWriter(&buf)
	buf.WriteString(`{"version":`)
	jw.int(int64(d.Version))
	d.writeStateWith(jw, false, func(jw *jsonWriter) { c.writeDeps(jw, s) })
	buf.WriteByte('}')
	if jw.err != nil {
		again := newSanitizer(c.Redact)
		again.Mask = s.Mask
		return c.stateJSON(again)
	}
	return buf.Bytes()
}

// minCached is the size below which a value's JSON is written again rather
// than kept: so small a value costs less to encode than to keep.
const minCached = 64

// writeDeps writes c's deps as the state document writes them, sanitized
// by s: the bytes encoding/json writes for s.deps(c.Deps), made of the
// cached JSON of the values that did not change. Every key of the deps is
// valid UTF-8.
func (c *Context) writeDeps(jw *jsonWriter, s *sanitizer) {
	keys := slices.Sorted(maps.Keys(c.Deps)) // as encoding/json orders a map's keys
	cache := c.depsCacheFor(s)
	for k := range cache.entries {
		if _, ok := c.Deps[k]; !ok {
			delete(cache.entries, k)
		}
	}
	buf := jw.buf
	buf.WriteByte('{')
	s.Root(jsonx.Segment{Key: "deps"})
	s.Redacting = true
	defer func() { s.Redacting = false }()
	first := true
	for _, k := range keys {
		if s.Rule(k) || s.Mask != nil && s.masksKey(k) {
			continue // a secret kept in deps, as documented: no warning
		}
		v := c.Deps[k]
		e := cache.entries[k]
		var value []byte
		switch {
		case e != nil && sameTree(v, e.was):
			value = e.json
		case e != nil && appended(v, e.was):
			value = e.appendTo(s, c.Deps, k, v.([]any))
		}
		if value == nil {
			nv, keep := sanitizeDep(s, c.Deps, k, v)
			var err error
			if keep {
				value, err = encodeValue(nv)
			}
			s.Pop()
			if !keep || err != nil {
				if err == nil {
					s.Drop(k)
				}
				delete(cache.entries, k)
				continue
			}
			if was, ok := copyTree(nv); ok && len(value) >= minCached {
				cache.entries[k] = &depsEntry{was: was, json: value, keys: addKeys(nil, was)}
			} else {
				delete(cache.entries, k)
			}
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		jw.value(k)
		buf.WriteByte(':')
		buf.Write(value)
	}
	buf.WriteByte('}')
}

// depsCacheFor returns c's cache of the deps' JSON, with the entries s may
// write as they are: none when s masks other secrets than those the
// cache's JSON was masked by, and none holding a key s's rule names. The
// rule is asked of the keys the entries hold, not trusted unchanged for
// its identity: two closures of one function, or one whose captured
// variables changed, look alike and may say otherwise of a key.
func (c *Context) depsCacheFor(s *sanitizer) *depsCache {
	cache := c.persist.depsCache
	byDefault := c.Redact == nil
	if cache == nil || !cache.mask.Same(s.Mask) {
		cache = &depsCache{byDefault: byDefault, mask: s.Mask, entries: map[string]*depsEntry{}}
		c.persist.depsCache = cache
		return cache
	}
	if !byDefault || !cache.byDefault {
		for k, e := range cache.entries {
			for key := range e.keys {
				if s.Rule(key) {
					delete(cache.entries, k)
					break
				}
			}
		}
	}
	cache.byDefault = byDefault
	return cache
}

// addKeys adds to keys, made when nil, the keys of the maps in v, a value
// of the JSON types, at any depth, and returns it.
func addKeys(keys map[string]struct{}, v any) map[string]struct{} {
	switch x := v.(type) {
	case map[string]any:
		if keys == nil {
			keys = make(map[string]struct{}, len(x))
		}
		for k, e := range x {
			keys[k] = struct{}{}
			keys = addKeys(keys, e)
		}
	case []any:
		for _, e := range x {
			keys = addKeys(keys, e)
		}
	}
	return keys
}

// sanitizeDep returns the deps' value v at key k as it may be written,
// sanitized by s, with s's path at k (the caller pops it), and whether it
// is kept at all.
func sanitizeDep(s *sanitizer, deps map[string]any, k string, v any) (any, bool) {
	s.Stack = append(s.Stack[:0], reflect.ValueOf(deps).Pointer())
	s.Push(jsonx.Segment{Key: k})
	nv, keep, _ := s.Value(v, 1)
	s.Stack = s.Stack[:0]
	return nv, keep
}

// appendTo returns the JSON of list v, the deps' value at key k, which is
// e's list with elements appended: e's JSON with theirs, sanitized by s;
// nil when one of them is dropped or is not of the JSON types, for the
// caller to encode the whole list and replace e, whose JSON it may have
// written over. It updates e, appending to its JSON in place.
func (e *depsEntry) appendTo(s *sanitizer, deps map[string]any, k string, v []any) []byte {
	was := e.was.([]any)
	s.Stack = append(s.Stack[:0], reflect.ValueOf(deps).Pointer(), reflect.ValueOf(v).Pointer())
	defer func() { s.Stack = s.Stack[:0] }()
	s.Push(jsonx.Segment{Key: k})
	defer s.Pop()
	out := e.json[:len(e.json)-1] // e's own: the state written copies it
	var added []any
	for i := len(was); i < len(v); i++ {
		s.Push(jsonx.Segment{Index: i, IsIndex: true})
		nv, keep, _ := s.Value(v[i], 2)
		s.Pop()
		if !keep {
			return nil
		}
		cp, ok := copyTree(nv)
		if !ok {
			return nil
		}
		b, err := encodeValue(nv)
		if err != nil {
			return nil
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
		added = append(added, cp)
	}
	out = append(out, ']')
	e.was, e.json = append(was, added...), out
	for _, a := range added {
		e.keys = addKeys(e.keys, a)
	}
	return out
}

// appended reports whether v is a list that begins with list was, element
// for element, and goes on.
func appended(v, was any) bool {
	l, ok := v.([]any)
	w, okw := was.([]any)
	if !ok || !okw || len(l) <= len(w) {
		return false
	}
	for i := range w {
		if !sameTree(l[i], w[i]) {
			return false
		}
	}
	return true
}

// sameTree reports whether a is b, a copy copyTree made of a value of the
// JSON types: of the same types, equal, a float to the bit (-0 is written
// otherwise than 0). It is false for a value of any other type, which may
// hold anything.
func sameTree(a, b any) bool {
	switch x := a.(type) {
	case nil, string, bool, json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return a == b
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || x == nil || y == nil || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameTree(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || x == nil || y == nil || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameTree(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// copyTree returns a deep copy of v, a value of the JSON types (maps of
// string keys, lists, strings, numbers, booleans, nil) whose maps and
// lists are not nil; false for any other. A sanitized value has no cycle
// and is at most jsonx.MaxDepth deep.
func copyTree(v any) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool, json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return v, true
	case map[string]any:
		if x == nil {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyTree(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil {
			return nil, false
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := copyTree(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}
