package jsonx

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The pieces of a JSON writer that write what encoding/json writes without
// its reflection: a string, and an object kept as it came.

// CompactObject reports whether b is a JSON object that may be written as
// it is, and encoding/json would write unchanged: valid UTF-8, written
// compactly, nested at most MaxDepth levels, and without the characters
// encoding/json escapes for HTML (<, >, &, U+2028, U+2029). scratch is a
// buffer it may reuse, returned grown.
func CompactObject(scratch, b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0] != '{' || !utf8.Valid(b) || bytes.ContainsAny(b, "<>&\u2028\u2029") ||
		!json.Valid(b) || Depth(b) > MaxDepth {
		return scratch, false
	}
	c := bytes.NewBuffer(scratch[:0])
	if json.Compact(c, b) != nil {
		return scratch, false
	}
	return c.Bytes(), bytes.Equal(c.Bytes(), b)
}

const hexDigits = "0123456789abcdef"

// WriteString writes s to b as a JSON string, escaped as encoding/json
// escapes it without HTML escaping: quote, backslash and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029
// escaped.
func WriteString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
