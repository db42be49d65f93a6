package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// Segment is one step of the path of a value being sanitized: a map key or
// a list index.
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// Sanitizer finds what JSON cannot hold, and secrets, in values of the
// JSON types (and others encoding/json writes), and makes copies without
// them, recording the path of each value JSON cannot hold it drops. It
// never modifies a value it is given: a map or list with something to drop
// is copied, shallowly, along the path to it.
//
// With a Mask, it also masks the secret values the mask knows wherever
// they are: in every string, and in place of a number that is one (a
// string then), unless KeepNumbers; a key holding one is dropped with its
// value.
type Sanitizer struct {
	Rule        func(key string) bool // the keys that name secrets
	Redacting   bool                  // whether Rule applies where the sanitizer is
	Mask        *Masker               // the secret values masked; nil for none
	KeepNumbers bool                  // whether numbers are left unmasked where the sanitizer is
	Stack       []uintptr             // the maps and lists on the path, to find cycles
	Dropped     []string              // the paths of the values JSON cannot hold
	path        []Segment             // where the value being checked is
	scratch     strings.Builder
}

// Root starts the path over at seg.
func (s *Sanitizer) Root(seg Segment) { s.path = append(s.path[:0], seg) }

// Push adds seg to the path.
func (s *Sanitizer) Push(seg Segment) { s.path = append(s.path, seg) }

// Pop takes the last segment off the path.
func (s *Sanitizer) Pop() { s.path = s.path[:len(s.path)-1] }

// Drop records that the value at the current path, followed by key when it
// is not empty, is dropped. The path is masked: a key may hold a secret.
func (s *Sanitizer) Drop(key string) {
	p, _ := s.Mask.String(s.Where(key))
	s.Dropped = append(s.Dropped, p)
}

// Text returns str with the secrets of the mask masked, and whether it
// masked any. A string that holds a JSON object or array stays JSON: when
// masking its text would break it (a secret's raw form across an escape,
// say), its values are masked instead and it is written again.
func (s *Sanitizer) Text(str string) (string, bool) {
	out, changed := s.Mask.String(str)
	if t := strings.TrimLeft(str, " \t\r\n"); !changed || t == "" || t[0] != '{' && t[0] != '[' ||
		json.Valid([]byte(out)) || !json.Valid([]byte(str)) {
		return out, changed
	}
	v, err := Decode([]byte(str))
	if err == nil && Depth([]byte(str)) <= MaxDepth {
		sub := Sanitizer{Mask: s.Mask}
		if nv, keep, _ := sub.Value(v, 1); keep {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(nv) == nil {
				return strings.TrimSuffix(b.String(), "\n"), true
			}
		}
	}
	q, _ := json.Marshal(Masked) // JSON, and none of str
	return string(q), true
}

// Where returns the current path, followed by key when it is not empty.
func (s *Sanitizer) Where(key string) string {
	b := &s.scratch
	b.Reset()
	for i, seg := range s.path {
		switch {
		case seg.IsIndex && seg.Key != "":
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprintf(b, "%s[%d]", seg.Key, seg.Index)
		case seg.IsIndex:
			fmt.Fprintf(b, "[%d]", seg.Index)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg.Key)
		}
	}
	if key != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(key)
	}
	return b.String()
}

// Value returns v as it may be written, whether to keep it at all, and
// whether the returned value differs from v.
func (s *Sanitizer) Value(v any, depth int) (out any, keep, changed bool) {
	switch x := v.(type) {
	case string:
		if s.Mask != nil {
			out, changed := s.Text(x)
			return out, true, changed
		}
		return v, true, false
	case nil, bool:
		return v, true, false
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return s.number(v, true)
	case float64:
		return s.number(v, !math.IsNaN(x) && !math.IsInf(x, 0))
	case float32:
		f := float64(x)
		return s.number(v, !math.IsNaN(f) && !math.IsInf(f, 0))
	case json.Number:
		_, err := json.Marshal(x) // it checks the number's syntax
		return s.number(v, err == nil)
	case map[string]any:
		if x == nil {
			return v, true, false
		}
		if !s.enter(reflect.ValueOf(x).Pointer(), depth) {
			return nil, false, false
		}
		m, changed := s.mapValue(x, depth+1)
		s.leave()
		return m, true, changed
	case []any:
		if len(x) == 0 {
			return v, true, false
		}
		if !s.enter(reflect.ValueOf(x).Pointer(), depth) {
			return nil, false, false
		}
		l, changed := s.listValue(x, depth+1)
		s.leave()
		return l, true, changed
	}
	// Anything else (a typed slice, map or struct, a json.Number, ...) is
	// kept when encoding/json can write it. Where secrets are dropped it is
	// written in its generic form, so that a secret key inside it is found
	// too.
	b, err := json.Marshal(v)
	if err != nil || depth+Depth(b) > MaxDepth {
		return nil, false, false
	}
	if !s.Redacting {
		if s.Mask == nil {
			return v, true, false
		}
		if _, secret := s.Mask.String(string(b)); !secret {
			return v, true, false
		}
	}
	g, err := Decode(b)
	if err != nil {
		return nil, false, false
	}
	g, keep, _ = s.Value(g, depth)
	return g, keep, true
}

// masks reports whether k holds a secret the mask knows.
func (s *Sanitizer) masks(k string) bool {
	_, secret := s.Mask.String(k)
	return secret
}

// number returns v, a number that is written when ok, as Value does: the
// marker in its place when it is a secret.
func (s *Sanitizer) number(v any, ok bool) (out any, keep, changed bool) {
	if ok && s.Mask.HasNumbers() && !s.KeepNumbers {
		if t, _ := NumberText(v); s.Mask.Number(t) {
			return Masked, true, true
		}
	}
	return v, ok, false
}

// enter pushes the map or list at p on the path, and reports false, having
// pushed nothing, when it is already there (a cycle) or the path is too deep.
func (s *Sanitizer) enter(p uintptr, depth int) bool {
	if depth > MaxDepth || slices.Contains(s.Stack, p) {
		return false
	}
	s.Stack = append(s.Stack, p)
	return true
}

func (s *Sanitizer) leave() { s.Stack = s.Stack[:len(s.Stack)-1] }

// Top returns the map m, the root of a value such as the deps, as it may be
// written, and whether that is a copy.
func (s *Sanitizer) Top(m map[string]any) (map[string]any, bool) {
	if m == nil {
		return nil, false
	}
	s.Stack = append(s.Stack[:0], reflect.ValueOf(m).Pointer())
	out, changed := s.mapValue(m, 1)
	s.Stack = s.Stack[:0]
	return out, changed
}

// mapValue returns m without what cannot be written, and whether that is a
// copy. m itself is never modified.
func (s *Sanitizer) mapValue(m map[string]any, depth int) (map[string]any, bool) {
	var out map[string]any // a copy, made at the first change
	collide := CollidingKeys(m)
	for k, v := range m {
		if collide[k] {
			s.Drop(k)
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
			continue
		}
		if s.Redacting && s.Rule(k) || s.Mask != nil && s.masks(k) {
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
			continue
		}
		s.Push(Segment{Key: k})
		nv, keep, changed := s.Value(v, depth)
		if !keep {
			s.Drop("")
		}
		s.Pop()
		if !keep || changed {
			if out == nil {
				out = maps.Clone(m)
			}
			if keep {
				out[k] = nv
			} else {
				delete(out, k)
			}
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// CollidingKeys returns the keys of m that are not valid UTF-8 and that,
// written with each invalid byte replaced by U+FFFD (as JSON must), equal
// another key of m: a document could hold only one of them, and which one
// would depend on the map's order. It allocates only for a map with such a
// key.
func CollidingKeys(m map[string]any) map[string]bool {
	var invalid []string
	for k := range m {
		if !utf8.ValidString(k) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) == 0 {
		return nil
	}
	written := make(map[string]int, len(m))
	for k := range m {
		written[string(ValidUTF8([]byte(k)))]++
	}
	var out map[string]bool
	for _, k := range invalid {
		if written[string(ValidUTF8([]byte(k)))] > 1 {
			if out == nil {
				out = map[string]bool{}
			}
			out[k] = true
		}
	}
	return out
}

// listValue returns l without what cannot be written (those elements are
// removed), and whether that is a copy. l itself is never modified.
func (s *Sanitizer) listValue(l []any, depth int) ([]any, bool) {
	var out []any // a copy, made at the first change
	copied := false
	for i, v := range l {
		s.Push(Segment{Index: i, IsIndex: true})
		nv, keep, changed := s.Value(v, depth)
		if !keep {
			s.Drop("")
		}
		s.Pop()
		if (!keep || changed) && !copied {
			out = make([]any, i, len(l))
			copy(out, l[:i])
			copied = true
		}
		if copied && keep {
			out = append(out, nv)
		}
	}
	if !copied {
		return l, false
	}
	return out, true
}

// ValidUTF8 returns b with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as a JSON writer writes it, so that what is written reads back
// as the same bytes; b itself when it is valid.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
