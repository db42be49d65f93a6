package nous

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// fastDecode reads a version 2 document into the shape encoding/json would
// decode it into, without reflection, and in one pass instead of a
// validation pass and a decoding pass. It reports false for anything it
// leaves to encoding/json: another version, a null where encoding/json would
// leave a field unset, a key that appears twice
// or that matches a field only when case is ignored, a number that is not a
// plain integer where an integer goes, nesting deeper than fastMaxDepth, and
// any input that is not valid JSON. Deserialize then decodes the document
// with encoding/json, which also gives the error if there is one.
//
// When it reports true, the result is what json.Unmarshal into a wireInput
// would give with a nil error; TestFastDecodeMatchesEncodingJSON and
// FuzzFastDecode check it. Its json.RawMessage fields, tool-call arguments
// excepted, alias data instead of copying it: decode them while data is
// unchanged, and keep none of them.
func fastDecode(data []byte) (*wireInput, bool) {
	p := parser{b: data}
	w := new(wireInput)
	p.document(w)
	if p.bad || !bytes.Equal(w.Version, []byte("2")) {
		return nil, false
	}
	return w, true
}

// fastEvent is fastDecode for one event, as a store reads it back: the
// eventJSON encoding/json would decode b into, or false for what it leaves
// to encoding/json.
func fastEvent(b []byte) (eventJSON, bool) {
	p := parser{b: b}
	var w eventJSON
	p.event(&w)
	if p.peek() != 0 || p.i != len(p.b) || p.bad {
		return eventJSON{}, false
	}
	return w, true
}

// fastMaxDepth bounds the nesting the fast decoder follows; deeper input is
// left to encoding/json (whose limit is 10,000).
const fastMaxDepth = 512

// parser is a recursive-descent reader of the format's JSON. Once bad is
// set, every method returns zero values and the result is discarded.
type parser struct {
	b   []byte
	i   int
	bad bool
}

func (p *parser) fail() { p.bad, p.i = true, len(p.b) }

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (p *parser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) expect(c byte) {
	if p.peek() != c {
		p.fail()
		return
	}
	p.i++
}

// object reads an object, calling field with the index in keys of each
// key, unquoted; field reads the value. A key not in keys is skipped. A key
// that appears twice, or that equals one of keys only when case is ignored
// (encoding/json would take it for that field), fails.
func (p *parser) object(keys []string, field func(k int)) {
	var seen uint64
	p.members(func(key []byte) {
		for k, name := range keys {
			if string(key) == name {
				if seen&(1<<k) != 0 {
					p.fail()
					return
				}
				seen |= 1 << k
				field(k)
				return
			}
		}
		for _, name := range keys {
			if strings.EqualFold(string(key), name) {
				p.fail()
				return
			}
		}
		p.skip(0)
	})
}

// members reads an object, calling member with each key, unquoted; member
// reads the value.
func (p *parser) members(member func(key []byte)) {
	p.list('{', '}', func() {
		key := p.bytes()
		p.expect(':')
		member(key)
	})
}

// array reads an array, calling elem to read each element.
func (p *parser) array(elem func()) { p.list('[', ']', elem) }

// arrayOf reads an array into a new, non-nil slice, as encoding/json does,
// reading each element with read.
func arrayOf[T any](p *parser, read func(*T)) []T {
	out := []T{}
	p.array(func() {
		out = append(out, *new(T))
		read(&out[len(out)-1])
	})
	return out
}

// list reads the items of an array or an object between open and close,
// separated by commas, calling item to read each.
func (p *parser) list(open, close byte, item func()) {
	p.expect(open)
	if p.peek() == close {
		p.i++
		return
	}
	for !p.bad {
		item()
		switch p.peek() {
		case ',':
			p.i++
		case close:
			p.i++
			return
		default:
			p.fail()
		}
	}
}

// str reads a string and returns it unquoted as encoding/json unquotes it:
// invalid UTF-8 and unpaired surrogates become U+FFFD.
func (p *parser) str() string { return string(p.bytes()) }

// bytes is str without the copy: the bytes alias the input when the string
// needs no unquoting.
func (p *parser) bytes() []byte {
	if p.peek() != '"' {
		p.fail()
		return nil
	}
	p.i++
	start, ascii := p.i, true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return p.unquote(start) // each invalid byte becomes U+FFFD
			}
			return s
		case c == '\\':
			return p.unquote(start)
		case c < 0x20:
			p.fail()
			return nil
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	p.fail()
	return nil
}

// unquote finishes reading a string that has escapes, from start, just
// after its opening quote.
func (p *parser) unquote(start int) []byte {
	out := make([]byte, 0, p.i-start+16)
	i := start
	for i < len(p.b) {
		c := p.b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return out
		case c < 0x20:
			p.fail()
			return nil
		case c == '\\':
			if i+1 >= len(p.b) {
				p.fail()
				return nil
			}
			i++
			switch p.b[i] {
			case '"', '\\', '/':
				out = append(out, p.b[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(p.b[i+1:])
				if r < 0 {
					p.fail()
					return nil
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+2 < len(p.b) && p.b[i+1] == '\\' && p.b[i+2] == 'u' {
						r2 = hex4(p.b[i+3:])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						break
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				p.fail()
				return nil
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.b[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	p.fail()
	return nil
}

// The values of the format's enumerations, which the fast decoder returns
// without allocating a string for them.
var (
	knownEventTypes = []EventType{EventUserMessage, EventAssistantMessage, EventSystemMessage, EventToolResult,
		EventReplace, EventTurnStart, EventTurnEnd, EventStepStart, EventStepEnd, EventToolCall, EventRequestHeader}
	knownRoles     = []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool}
	knownPartTypes = []PartType{PartText, PartImageURL, PartImage, PartFile, PartFileURL, PartThinking}
)

// enum reads a string, returning the one of known it equals without
// allocating.
func enum[T ~string](p *parser, known []T) T {
	b := p.bytes()
	for _, k := range known {
		if string(b) == string(k) {
			return k
		}
	}
	return T(b)
}

// hex4 returns the value of the four hex digits b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// int reads a plain integer that fits in bits, as encoding/json reads one
// into an integer field; a fraction or an exponent fails (encoding/json
// would refuse them too).
func (p *parser) int(bits int) int64 {
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		p.fail()
		return 0
	}
	start := p.i
	p.number()
	text := p.b[start:p.i]
	if p.bad || bytes.ContainsAny(text, ".eE") {
		p.fail()
		return 0
	}
	n, err := strconv.ParseInt(string(text), 10, bits)
	if err != nil {
		p.fail()
		return 0
	}
	return n
}

// bool reads true or false.
func (p *parser) bool() bool {
	switch p.peek() {
	case 't':
		return p.literal("true")
	case 'f':
		p.literal("false")
	default:
		p.fail()
	}
	return false
}

func (p *parser) literal(word string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		p.fail()
		return false
	}
	p.i += len(word)
	return true
}

// raw reads any value, checking it is valid JSON, and returns its bytes,
// which alias the input: what encoding/json stores in a json.RawMessage,
// "null" included.
func (p *parser) raw() []byte {
	p.ws()
	start := p.i
	p.skip(0)
	return p.b[start:p.i]
}

// skip reads any value, checking that it is valid JSON.
func (p *parser) skip(depth int) {
	if depth > fastMaxDepth {
		p.fail()
		return
	}
	switch c := p.peek(); {
	case c == '{':
		p.members(func([]byte) { p.skip(depth + 1) })
	case c == '[':
		p.array(func() { p.skip(depth + 1) })
	case c == '"':
		p.str()
	case c == 't':
		p.literal("true")
	case c == 'f':
		p.literal("false")
	case c == 'n':
		p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		p.number()
	default:
		p.fail()
	}
}

// number reads a JSON number.
func (p *parser) number() {
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		start := p.i
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i - start
	}
	switch n := digits(); {
	case n == 0, n > 1 && p.b[p.i-n] == '0':
		p.fail()
		return
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.fail()
			return
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.fail()
		}
	}
}

// time reads a time as time.Time.UnmarshalJSON reads one.
func (p *parser) time() time.Time {
	if p.peek() != '"' {
		p.fail()
		return time.Time{}
	}
	start := p.i
	p.str()
	var t time.Time
	if p.bad || t.UnmarshalJSON(p.b[start:p.i]) != nil {
		p.fail()
	}
	return t
}

var documentKeys = []string{"version", "messages", "tool_calls", "system_prompt", "deps", "usage",
	"needs_response", "iteration", "max_iterations", "started_at", "agent_name", "log"}

func (p *parser) document(w *wireInput) {
	p.object(documentKeys, func(k int) {
		switch k {
		case 0:
			w.Version = p.raw()
		case 1:
			if p.peek() != '[' {
				p.fail()
				return
			}
			p.skip(0)
		case 2:
			w.ToolCalls = p.raw()
		case 3:
			w.SystemPrompt = p.str()
		case 4:
			w.Deps = p.raw()
		case 5:
			if p.peek() != '{' {
				p.fail()
				return
			}
			if err := json.Unmarshal(p.raw(), &w.Usage); err != nil {
				p.fail()
			}
		case 6:
			w.NeedsResponse = p.bool()
		case 7:
			w.Iteration = int(p.int(strconv.IntSize))
		case 8:
			n := int(p.int(strconv.IntSize))
			w.MaxIterations = &n
		case 9:
			w.StartedAt = p.raw()
		case 10:
			w.AgentName = p.str()
		case 11:
			w.Log = new(wireLogInput)
			p.log(w.Log)
		}
	})
	if p.peek() != 0 || p.i != len(p.b) {
		p.fail()
	}
}

var logKeys = []string{"id", "parent_id", "fork_seq", "events"}

func (p *parser) log(l *wireLogInput) {
	p.object(logKeys, func(k int) {
		switch k {
		case 0:
			l.ID = p.str()
		case 1:
			s := p.str()
			l.ParentID = &s
		case 2:
			n := p.int(64)
			l.ForkSeq = &n
		case 3:
			events := arrayOf(p, p.event)
			l.Events = &events
		}
	})
}

var eventKeys = []string{"seq", "type", "data", "message", "created_at", "first", "last"}

func (p *parser) event(e *eventJSON) {
	p.object(eventKeys, func(k int) {
		switch k {
		case 0:
			e.Seq = p.int(64)
		case 1:
			e.Type = enum(p, knownEventTypes)
		case 2:
			e.Data = p.raw()
		case 3:
			e.Message = new(messageJSON)
			p.message(e.Message)
		case 4:
			e.CreatedAt = p.time()
		case 5:
			e.First = p.int(64)
		case 6:
			e.Last = p.int(64)
		}
	})
}

var messageKeys = []string{"role", "content", "parts", "reasoning_content", "tool_calls",
	"tool_call_id", "name", "metadata", "created_at"}

func (p *parser) message(m *messageJSON) {
	p.object(messageKeys, func(k int) {
		switch k {
		case 0:
			m.Role = enum(p, knownRoles)
		case 1:
			m.Content = p.str()
		case 2:
			m.Parts = arrayOf(p, p.part)
		case 3:
			m.ReasoningContent = p.str()
		case 4:
			m.ToolCalls = arrayOf(p, p.toolCall)
		case 5:
			m.ToolCallID = p.str()
		case 6:
			m.Name = p.str()
		case 7:
			m.Metadata = p.raw()
		case 8:
			m.CreatedAt = p.time()
		}
	})
}

var partKeys = []string{"type", "content", "options"}

func (p *parser) part(w *partJSON) {
	p.object(partKeys, func(k int) {
		switch k {
		case 0:
			w.Type = enum(p, knownPartTypes)
		case 1:
			w.Content = p.str()
		case 2:
			w.Options = p.raw()
		}
	})
}

var toolCallKeys = []string{"id", "name", "arguments", "metadata"}

func (p *parser) toolCall(w *toolCallJSON) {
	p.object(toolCallKeys, func(k int) {
		switch k {
		case 0:
			w.ID = p.str()
		case 1:
			w.Name = p.str()
		case 2:
			w.Arguments = bytes.Clone(p.raw()) // kept by the tool call
		case 3:
			w.Metadata = p.raw()
		}
	})
}
