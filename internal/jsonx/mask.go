package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Masked is what a [Masker] writes in place of each secret it finds.
const Masked = "[REDACTED]"

// MinSecret is the length in bytes under which a secret is not masked. A
// shorter value is not a credential any service issues (API keys and
// tokens run to 20 bytes and more; password rules start at 8), while text
// of a few bytes recurs in any transcript: masking every "1234" or "admin"
// would damage the stored conversation, which a model reads back, and the
// markers would show where the value occurs, telling it.
const MinSecret = 8

// Masker finds secret values in text, in each form they take in JSON and
// in JSON held in a string, and masks them with [Masked]. It is made once
// for a set of secrets and is safe for concurrent use.
type Masker struct {
	texts    []string              // the secrets, sorted and distinct: what it was made of
	pats     []string              // the forms looked for, by first byte, longest first
	heads    []uint64              // the first 8 bytes of each form, as head reads them
	from     [257]int32            // pats[from[b]:from[b+1]] begin with the byte b
	pairs    *[1 << 16 / 64]uint64 // the bits of the first two bytes of the forms
	first    *[256]bool            // the first bytes of the forms
	shortest int                   // the length of the shortest form
	numbers  map[string]bool       // the secrets that are the text of a JSON number
}

// NewMasker returns the masker of secrets, the texts of secret values
// ([CollectSecrets]): nil when none is [MinSecret] bytes long or more, which
// masks nothing.
func NewMasker(secrets []string) *Masker {
	texts := kept(secrets)
	if len(texts) == 0 {
		return nil
	}
	m := &Masker{texts: texts, numbers: map[string]bool{}}
	for _, t := range texts {
		m.pats = append(m.pats, forms(t)...)
		if json.Valid([]byte(t)) && strings.IndexFunc(t, func(r rune) bool { return !strings.ContainsRune("+-.0123456789eE", r) }) < 0 {
			m.numbers[t] = true
		}
	}
	slices.SortFunc(m.pats, func(a, b string) int {
		switch {
		case a[0] != b[0]:
			return int(a[0]) - int(b[0])
		case len(a) != len(b):
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	m.pats = slices.Compact(m.pats)
	m.pairs, m.first = new([1 << 16 / 64]uint64), new([256]bool)
	for _, p := range m.pats {
		m.first[p[0]] = true
		m.heads = append(m.heads, head(p, 0))
		pair := uint(p[0])<<8 | uint(p[1])
		m.pairs[pair/64] |= 1 << (pair % 64)
	}
	m.shortest = len(m.pats[0])
	for _, p := range m.pats {
		m.shortest = min(m.shortest, len(p))
	}
	i := 0
	for b := range 256 {
		m.from[b] = int32(i)
		for i < len(m.pats) && int(m.pats[i][0]) == b {
			i++
		}
	}
	m.from[256] = int32(len(m.pats))
	return m
}

// forms returns the forms secret t takes where text is written: as it is,
// and as encoding/json escapes it in a JSON string, with and without HTML
// escaping, once (JSON text held in a string: a tool's arguments, a
// result that is JSON) and twice (JSON in such JSON).
func forms(t string) []string {
	out := []string{t}
	once := []string{escape(t, false), escape(t, true)}
	for _, e := range once {
		out = append(out, e, escape(e, false), escape(e, true))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// escape returns t as the inside of a JSON string, escaped as
// encoding/json escapes it, with HTML escaping or without.
func escape(t string, html bool) string {
	var b bytes.Buffer
	if !html {
		WriteString(&b, t)
		return b.String()[1 : b.Len()-1]
	}
	q, _ := json.Marshal(t) // a string always encodes
	return string(q[1 : len(q)-1])
}

// kept returns the secrets a masker of secrets masks: those MinSecret
// bytes long or more, sorted and distinct, in a new slice.
func kept(secrets []string) []string {
	var texts []string
	for _, t := range secrets {
		if len(t) >= MinSecret {
			texts = append(texts, t)
		}
	}
	slices.Sort(texts)
	return slices.Compact(texts)
}

// Masks reports whether m masks exactly the secrets [NewMasker] would make
// a masker of: whether a masker made of secrets would be m's equal. A nil
// m masks none.
func (m *Masker) Masks(secrets []string) bool {
	texts := kept(secrets)
	if m == nil {
		return len(texts) == 0
	}
	return slices.Equal(m.texts, texts)
}

// Same reports whether m and o mask the same secrets; two nil maskers do.
func (m *Masker) Same(o *Masker) bool {
	if m == nil || o == nil {
		return m == o
	}
	return m == o || slices.Equal(m.texts, o.texts)
}

// String returns s with every secret in it replaced by [Masked], and
// whether it replaced any. Secrets that overlap in s, or one inside
// another, are masked as one stretch with one marker, so that no part of
// either is left. It scans s once, and allocates only when it masks.
func (m *Masker) String(s string) (string, bool) {
	if m == nil || len(s) < m.shortest {
		return s, false
	}
	var out []byte
	copied, start, end := 0, 0, -1 // the stretch being masked is s[start:end]
	pairs, first, last := m.pairs, m.first, len(s)-m.shortest
	for i := 0; i <= last; i++ {
		// Most bytes begin no form: the first two bytes rule them out.
		if !first[s[i]] {
			continue
		}
		if pair := uint(s[i])<<8 | uint(s[i+1]); pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		lo, hi := m.from[s[i]], m.from[int(s[i])+1]
		h := head(s, i) // every form is MinSecret (8) bytes or more
		for k := lo; k < hi; k++ {
			p := m.pats[k]
			if m.heads[k] != h || len(p) > len(s)-i || s[i+8:i+len(p)] != p[8:] {
				continue
			}
			switch {
			case i < end:
				end = max(end, i+len(p))
			default:
				if end >= 0 {
					if out == nil {
						out = make([]byte, 0, len(s))
					}
					out = append(append(out, s[copied:start]...), Masked...)
					copied = end
				}
				start, end = i, i+len(p)
			}
			break // the longest form at i
		}
	}
	if end < 0 {
		return s, false
	}
	if out == nil {
		out = make([]byte, 0, len(s))
	}
	out = append(append(out, s[copied:start]...), Masked...)
	out = append(out, s[end:]...)
	return string(out), true
}

// head returns the 8 bytes of s at i as one number; s holds them.
func head(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Number reports whether text, a number as JSON writes it, is a secret.
func (m *Masker) Number(text string) bool { return m != nil && len(m.numbers) > 0 && m.numbers[text] }

// HasNumbers reports whether some secret of m is the text of a number.
func (m *Masker) HasNumbers() bool { return m != nil && len(m.numbers) > 0 }

// CollectSecrets appends to dst the text of every value v holds under a key
// rule names, at any depth, and returns it: strings as they are, numbers
// as JSON writes them, and everything a map or a list under such a key
// holds. A value of another type (a struct, a typed map) is looked at in
// its JSON form, or, when JSON cannot hold it (it has a func field), by
// its fields and keys, a field named by its JSON name or its Go name.
// Values nested deeper than [MaxDepth], and cycles, are not followed.
func CollectSecrets(dst []string, v any, rule func(key string) bool) []string {
	c := collector{rule: rule, out: dst}
	c.value(v, false, 0)
	return c.out
}

// collector is the walk of CollectSecrets.
type collector struct {
	rule  func(key string) bool
	out   []string
	stack []uintptr // the maps and lists on the path, to find cycles
}

func (c *collector) value(v any, secret bool, depth int) {
	if depth > MaxDepth {
		return
	}
	switch x := v.(type) {
	case nil, bool:
	case string:
		if secret {
			c.out = append(c.out, x)
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64, json.Number:
		if secret {
			if t, ok := NumberText(x); ok {
				c.out = append(c.out, t)
			}
		}
	case map[string]any:
		p := reflect.ValueOf(x).Pointer()
		if x == nil || slices.Contains(c.stack, p) {
			return
		}
		c.stack = append(c.stack, p)
		for k, e := range x {
			c.value(e, secret || c.rule(k), depth+1)
		}
		c.stack = c.stack[:len(c.stack)-1]
	case []any:
		if len(x) == 0 {
			return
		}
		p := reflect.ValueOf(x).Pointer()
		if slices.Contains(c.stack, p) {
			return
		}
		c.stack = append(c.stack, p)
		for _, e := range x {
			c.value(e, secret, depth+1)
		}
		c.stack = c.stack[:len(c.stack)-1]
	default:
		if b, err := json.Marshal(v); err == nil {
			if g, err := Decode(b); err == nil {
				c.value(g, secret, depth)
				return
			}
		}
		c.reflect(reflect.ValueOf(v), secret, depth)
	}
}

// reflect walks a value JSON cannot hold by its fields and keys.
func (c *collector) reflect(v reflect.Value, secret bool, depth int) {
	if depth > MaxDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if secret {
			c.out = append(c.out, v.String())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if secret {
			c.out = append(c.out, strconv.FormatInt(v.Int(), 10))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if secret {
			c.out = append(c.out, strconv.FormatUint(v.Uint(), 10))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.reflect(v.Elem(), secret, depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			c.reflect(it.Value(), secret || k.Kind() == reflect.String && c.rule(k.String()), depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			c.reflect(v.Index(i), secret, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			c.reflect(v.Field(i), secret || c.rule(f.Name) || name != "" && c.rule(name), depth+1)
		}
	}
}

// NumberText returns a number as encoding/json writes it, and false for
// one it cannot write (NaN, an infinity, a json.Number that is not one).
func NumberText(v any) (string, bool) {
	switch x := v.(type) {
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int8:
		return strconv.FormatInt(int64(x), 10), true
	case int16:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint8:
		return strconv.FormatUint(uint64(x), 10), true
	case uint16:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case uintptr:
		return strconv.FormatUint(uint64(x), 10), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return "", false
		}
	case json.Number:
	default:
		return "", false
	}
	b, err := json.Marshal(v)
	return string(b), err == nil
}
