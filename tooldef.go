package nous

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/jsonx"
)

// Tool describes a tool to a model, the same way for every provider: each
// provider module turns a list of them into its SDK's tool parameters
// (nousanthropic.Tools, nousopenai.ChatTools and ResponsesTools,
// nousgemini.Tools).
type Tool struct {
	// Name is what the model calls the tool by: 1 to 64 letters, digits,
	// underscores and hyphens, which every provider accepts.
	Name        string
	Description string
	// Parameters is the JSON Schema of the tool's arguments, an object
	// schema ({"type":"object","properties":{...},...}); nil for a tool
	// without arguments. [SchemaOf] makes one from a Go struct.
	Parameters json.RawMessage
}

// NewTool returns the tool of that name and description whose arguments
// are those of params: a value of a struct type (or a pointer to one), whose
// schema [SchemaOf] makes; JSON (a json.RawMessage or []byte) of an object
// schema, taken as it is; or nil, for no arguments. The tool is checked as
// [Tool.Validate] checks it.
func NewTool(name, description string, params any) (Tool, error) {
	t := Tool{Name: name, Description: description}
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		t.Parameters = append(json.RawMessage(nil), p...)
	case []byte:
		t.Parameters = append(json.RawMessage(nil), p...)
	default:
		schema, err := SchemaOf(params)
		if err != nil {
			return Tool{}, fmt.Errorf("nous: tool %q: %w", name, err)
		}
		t.Parameters = schema
	}
	if err := t.Validate(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// Validate reports whether t can be sent to every provider: a name of 1 to
// 64 letters, digits, underscores and hyphens, and Parameters nil or a
// JSON object whose "type", if any, is "object". Otherwise it returns an
// error wrapping [ErrInvalidTool] that says what is wrong.
func (t Tool) Validate() error {
	if !validToolName(t.Name) {
		return fmt.Errorf("nous: tool %.70q: a name is 1 to 64 letters, digits, underscores and hyphens: %w", t.Name, ErrInvalidTool)
	}
	if t.Parameters == nil {
		return nil
	}
	var schema map[string]json.RawMessage
	if !jsonx.IsObject(t.Parameters) || json.Unmarshal(t.Parameters, &schema) != nil {
		return fmt.Errorf("nous: tool %q: the parameters are not a JSON object (a JSON Schema of an object): %w", t.Name, ErrInvalidTool)
	}
	if typ, ok := schema["type"]; ok && string(typ) != `"object"` {
		return fmt.Errorf("nous: tool %q: the parameters' schema is of type %s; a tool's arguments are an object: %w", t.Name, typ, ErrInvalidTool)
	}
	return nil
}

// validToolName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// SchemaOf returns the JSON Schema (draft 2020-12) of the arguments a
// value of v's type holds, v a struct or a pointer to one, as encoding/json
// reads them into it: json.Unmarshal reads into the type every JSON the
// schema takes (within the limits below, and the strings a type that reads
// itself takes), and the schema takes the JSON json.Marshal writes of a
// value of the type (but for values outside an enum tag, and a type whose
// JSON encoding/json cannot read back).
//
// The arguments are an object with a property per field encoding/json
// decodes, and no other properties: named by the json tag, the fields of
// embedded structs in line by encoding/json's rules (the shallower field
// of a name wins, then the tagged one; two of a name at the same depth,
// both tagged or both not, leave the name out); each required unless its
// tag says omitempty or omitzero, it is a pointer, or it is reached
// through an embedded pointer. Two more tags describe a field to the
// model: description ("description:\"the city's name\"") and enum,
// comma-separated values of the field's type ("enum:\"c,f\"").
//
// Each Go type has the schema of what encoding/json reads into it:
//
//   - strings, booleans, numbers; integers with the limits of their size
//     up to 32 bits, unsigned ones at least 0 (the limits of 64-bit integers
//     and of floats are left out, and JSON Schema counts 1.0 an integer,
//     which encoding/json refuses);
//   - a field with the string option (`json:",string"`) is a string
//     holding the JSON of its value: a pattern of the integers of its type,
//     of JSON numbers, of a JSON string, "true" or "false";
//   - a type that reads itself from text (encoding.TextUnmarshaler:
//     uuid.UUID, netip.Addr) is a string, which strings it takes being its
//     own affair; time.Time is a date-time string;
//   - a type that reads its own JSON (json.Unmarshaler) has no schema to
//     derive: it is any JSON value ({}), as are json.RawMessage and any.
//     The arguments themselves cannot be one: pass NewTool their schema as
//     JSON instead;
//   - slices are arrays, arrays of n elements arrays of exactly n, []byte a
//     base64 string; maps are objects whose property names are strings or,
//     for integer keys, the integers of the key's type;
//   - pointers, slices and maps also take null, which json.Marshal writes
//     of a nil one;
//   - what JSON cannot hold (a channel, a function, a complex number, an
//     interface with methods, a map whose keys are neither strings, integers
//     nor read from text) is an error wrapping [ErrInvalidTool] that names
//     the field; so is a type that contains itself, also through an
//     embedded pointer (its schema would never end), and an embedded
//     pointer to an unexported struct type, whose fields encoding/json
//     cannot set.
func SchemaOf(v any) (json.RawMessage, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the schema of %v: a tool's arguments are a struct: %w", t, ErrInvalidTool)
	}
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil, fmt.Errorf("the schema of %v: it decodes itself (UnmarshalJSON or UnmarshalText), so no schema can be derived; give NewTool its schema as JSON: %w", t, ErrInvalidTool)
	}
	s := schemaMaker{seen: map[reflect.Type]bool{}}
	schema, err := s.of(t, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(schema)
}

// schemaMaker makes schemas of Go types; seen holds the structs being made,
// to refuse a type that contains itself.
type schemaMaker struct {
	seen map[reflect.Type]bool
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	numberType      = reflect.TypeFor[json.Number]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// decodesItself reports whether encoding/json reads a value of type t by
// t's UnmarshalJSON (byJSON) or its UnmarshalText (byText), as it finds
// them: on a pointer, or on the address of a named type's value (never of
// an unnamed one, whose promoted pointer methods it does not see).
func decodesItself(t reflect.Type) (byJSON, byText bool) {
	if t.Kind() != reflect.Pointer {
		if t.Name() == "" {
			return false, false
		}
		t = reflect.PointerTo(t)
	}
	if t.Implements(jsonUnmarshaler) {
		return true, false
	}
	return false, t.Implements(textUnmarshaler)
}

// of returns the schema of type t, found at path.
func (s *schemaMaker) of(t reflect.Type, path string) (map[string]any, error) {
	switch byJSON, byText := decodesItself(t); {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == numberType:
		return map[string]any{"type": "number"}, nil
	case byJSON: // json.RawMessage too: it reads what it will
		return map[string]any{}, nil
	case byText:
		return nullable(t, map[string]any{"type": "string"}), nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		schema := map[string]any{"type": "integer"}
		if bits := t.Bits(); bits < 64 {
			schema["minimum"], schema["maximum"] = int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		}
		return schema, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		schema := map[string]any{"type": "integer", "minimum": 0}
		if bits := t.Bits(); bits < 64 {
			schema["maximum"] = uint64(1)<<bits - 1
		}
		return schema, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil, fmt.Errorf("the schema of %s: JSON fills no interface with methods (%s): %w", where(path), t, ErrInvalidTool)
		}
		return map[string]any{}, nil
	case reflect.Pointer:
		elem, err := s.of(t.Elem(), path)
		return nullable(t, elem), err
	case reflect.Slice, reflect.Array:
		return s.array(t, path)
	case reflect.Map:
		return s.object(t, path)
	case reflect.Struct:
		return s.structure(t, path)
	}
	return nil, fmt.Errorf("the schema of %s: JSON has no value of type %s: %w", where(path), t, ErrInvalidTool)
}

// nullable returns schema, taking null too when t is a pointer, a slice or
// a map, of which json.Marshal writes null when it is nil.
func nullable(t reflect.Type, schema map[string]any) map[string]any {
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Map {
		return schema
	}
	if typ, ok := schema["type"].(string); ok { // not any value, nor nullable yet
		schema["type"] = []any{typ, "null"}
		if enum, ok := schema["enum"].([]any); ok {
			schema["enum"] = append(enum, nil)
		}
	}
	return schema
}

// array returns the schema of slice or array type t, found at path.
func (s *schemaMaker) array(t reflect.Type, path string) (map[string]any, error) {
	if elem := t.Elem(); t.Kind() == reflect.Slice && elem.Kind() == reflect.Uint8 {
		// encoding/json writes such a slice in base64, unless its elements
		// write themselves, and reads it from base64 either way.
		if p := reflect.PointerTo(elem); !p.Implements(jsonMarshaler) && !p.Implements(textMarshaler) {
			return nullable(t, map[string]any{"type": "string", "contentEncoding": "base64", "pattern": base64Pattern}), nil
		}
	}
	items, err := s.of(t.Elem(), path+"[]")
	if err != nil {
		return nil, err
	}
	schema := map[string]any{"type": "array", "items": items}
	if t.Kind() == reflect.Array {
		schema["minItems"], schema["maxItems"] = t.Len(), t.Len()
	}
	return nullable(t, schema), nil
}

// base64Pattern is the standard base64 encoding, padded, as encoding/json
// writes and reads []byte.
const base64Pattern = `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`

// object returns the schema of map type t, found at path: its keys as
// encoding/json reads them (by the key type's UnmarshalText, as a string,
// or as a decimal integer of the key's type), its values by their type.
func (s *schemaMaker) object(t reflect.Type, path string) (map[string]any, error) {
	schema := map[string]any{"type": "object"}
	switch key := t.Key(); {
	case reflect.PointerTo(key).Implements(textUnmarshaler), key.Kind() == reflect.String:
	case isInt(key.Kind()):
		schema["propertyNames"] = map[string]any{"pattern": intPattern(key, `\+?`)}
	case isUint(key.Kind()):
		schema["propertyNames"] = map[string]any{"pattern": intPattern(key, "")}
	default:
		return nil, fmt.Errorf("the schema of %s: a map whose keys (%s) are neither strings, integers nor read from text: %w", where(path), key, ErrInvalidTool)
	}
	values, err := s.of(t.Elem(), path+"{}")
	if err != nil {
		return nil, err
	}
	schema["additionalProperties"] = values
	return nullable(t, schema), nil
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Int64 }

func isUint(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uintptr }

// intPattern returns the pattern of the decimal integers of integer type t
// as strconv reads them (leading zeros allowed), a non-negative one after
// an optional plus, which is what encoding/json takes of a map key (`\+?`)
// and not of a string option ("").
func intPattern(t reflect.Type, plus string) string {
	if isUint(t.Kind()) {
		return `^0*(?:` + upTo(uint64(1)<<t.Bits()-1) + `)$`
	}
	most := uint64(1)<<(t.Bits()-1) - 1
	return `^(?:` + plus + `0*(?:` + upTo(most) + `)|-0*(?:` + upTo(most+1) + `))$`
}

// upTo returns a regular expression of the decimal numbers from 0 to most,
// without leading zeros: 0, those of fewer digits than most, then, for
// each digit of most, those that begin as most does before it and are
// smaller in it, then most.
func upTo(most uint64) string {
	d := strconv.FormatUint(most, 10)
	digits := func(n int) string { // n digits
		return [...]string{"", "[0-9]"}[min(n, 1)] + strings.Repeat(fmt.Sprintf("{%d}", n), max(0, min(n-1, 1)))
	}
	alts := []string{"0"}
	if n := len(d) - 1; n > 0 {
		alts = append(alts, "[1-9]"+strings.Repeat(fmt.Sprintf("[0-9]{0,%d}", n-1), min(n-1, 1)))
	}
	for i := range len(d) {
		low := byte('0')
		if i == 0 {
			low = '1'
		}
		switch {
		case d[i]-1 == low:
			alts = append(alts, d[:i]+string(low)+digits(len(d)-i-1))
		case d[i]-1 > low:
			alts = append(alts, fmt.Sprintf("%s[%c-%c]%s", d[:i], low, d[i]-1, digits(len(d)-i-1)))
		}
	}
	return strings.Join(append(alts, d), "|")
}

// The patterns of a field with the string option: a JSON number, and a
// JSON string (its quotes and escapes, no control characters).
const (
	numberPattern = `^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`
	stringPattern = `^"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"$`
)

// quoted returns the schema of a field of type t with the string option,
// which encoding/json applies to strings, numbers and booleans (and
// pointers to them): a string holding their JSON.
func quoted(t reflect.Type) map[string]any {
	e := t
	if e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	schema := map[string]any{"type": "string"}
	switch byJSON, byText := decodesItself(e); {
	case byJSON: // it reads the string's content as it will
	case e == numberType:
		schema["pattern"] = numberPattern
	case byText || e.Kind() == reflect.String:
		schema["pattern"] = stringPattern
	case e.Kind() == reflect.Bool:
		schema["enum"] = []any{"true", "false"}
	case isInt(e.Kind()) || isUint(e.Kind()):
		schema["pattern"] = intPattern(e, "")
	default:
		schema["pattern"] = numberPattern
	}
	return nullable(t, schema)
}

// structure returns the schema of struct type t, found at path.
func (s *schemaMaker) structure(t reflect.Type, path string) (map[string]any, error) {
	if s.seen[t] {
		return nil, fmt.Errorf("the schema of %s: the type %s contains itself: %w", where(path), t, ErrInvalidTool)
	}
	s.seen[t] = true
	defer delete(s.seen, t)
	fields, err := s.fieldsOf(t, path)
	if err != nil {
		return nil, err
	}
	props, required := map[string]any{}, []string{}
	for _, f := range fields {
		schema, err := s.field(f, path+"."+f.name)
		if err != nil {
			return nil, err
		}
		props[f.name] = schema
		if !f.optional {
			required = append(required, f.name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
}

// field returns the schema of struct field f, found at path: its type's
// (or its string option's), with the description and enum of its tags.
func (s *schemaMaker) field(f jsonField, path string) (map[string]any, error) {
	var schema map[string]any
	if f.quoted {
		schema = quoted(f.typ)
	} else {
		var err error
		if schema, err = s.of(f.typ, path); err != nil {
			return nil, err
		}
	}
	if d := f.tag.Get("description"); d != "" {
		schema["description"] = d
	}
	if e, ok := f.tag.Lookup("enum"); ok {
		enum, err := enumOf(e, f.typ, schema)
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", where(path), err)
		}
		schema["enum"] = enum
	}
	return schema, nil
}

// enumOf returns the values of an enum tag, comma-separated, as values of
// the JSON type of schema, the schema of type t: strings, or numbers and
// booleans that encoding/json reads into t (and null, when schema takes it).
func enumOf(tag string, t reflect.Type, schema map[string]any) ([]any, error) {
	typ, null := schema["type"], false
	if types, ok := typ.([]any); ok {
		typ, null = types[0], true
	}
	var enum []any
	for _, v := range strings.Split(tag, ",") {
		switch typ {
		case "string":
			enum = append(enum, v)
		case "integer", "number", "boolean":
			v = strings.TrimSpace(v)
			if v == "null" || !json.Valid([]byte(v)) || json.Unmarshal([]byte(v), reflect.New(t).Interface()) != nil {
				return nil, fmt.Errorf("the enum value %q is not a JSON %s of type %s: %w", v, typ, t, ErrInvalidTool)
			}
			enum = append(enum, json.RawMessage(v))
		default:
			return nil, fmt.Errorf("an enum of a value of type %s: enum values are strings, numbers or booleans: %w", t, ErrInvalidTool)
		}
	}
	if null {
		enum = append(enum, nil)
	}
	return enum, nil
}

// jsonField is a field of a struct as encoding/json reads it.
type jsonField struct {
	name     string
	tagged   bool  // its name is its tag's
	index    []int // its place, through the embedded structs
	typ      reflect.Type
	tag      reflect.StructTag
	quoted   bool // the string option applies to it
	optional bool // omitempty or omitzero, a pointer, or reached through an embedded pointer
}

// candidate is a field of one struct as encoding/json first looks at it.
type candidate struct {
	sf   reflect.StructField
	name string       // its tag's name; "" when none, or one encoding/json does not take
	opts string       // the tag's options
	ft   reflect.Type // its type, an unnamed pointer followed
}

// candidateOf returns field i of struct t as encoding/json looks at it; ok
// is false for a field it skips: unexported (but for an embedded struct,
// whose exported fields it takes), or tagged "-".
func candidateOf(t reflect.Type, i int) (c candidate, ok bool) {
	sf := t.Field(i)
	if e := sf.Type; sf.Anonymous {
		if e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if !sf.IsExported() && e.Kind() != reflect.Struct {
			return c, false
		}
	} else if !sf.IsExported() {
		return c, false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return c, false
	}
	c.sf, c.ft = sf, sf.Type
	c.name, c.opts, _ = strings.Cut(tag, ",")
	if !validTagName(c.name) {
		c.name = ""
	}
	if c.ft.Name() == "" && c.ft.Kind() == reflect.Pointer {
		c.ft = c.ft.Elem()
	}
	return c, true
}

// option reports whether c's tag has option o.
func (c candidate) option(o string) bool { return slices.Contains(strings.Split(c.opts, ","), o) }

// jsonField returns the field c is, at index, optional if its struct is.
func (c candidate) jsonField(index []int, optional bool) jsonField {
	f := jsonField{name: c.name, tagged: c.name != "", index: index, typ: c.sf.Type, tag: c.sf.Tag}
	if f.name == "" {
		f.name = c.sf.Name
	}
	switch k := c.ft.Kind(); {
	case k == reflect.Bool, k == reflect.String, k == reflect.Float32, k == reflect.Float64, isInt(k), isUint(k):
		f.quoted = c.option("string")
	}
	f.optional = optional || c.option("omitempty") || c.option("omitzero") || c.sf.Type.Kind() == reflect.Pointer
	return f
}

// validTagName reports whether encoding/json takes name from a tag: letters,
// digits and punctuation but quotes and backslashes.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r) && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// embedded is a struct whose fields another takes in line, at one depth.
type embedded struct {
	typ      reflect.Type
	index    []int
	optional bool           // reached through a pointer: json.Marshal leaves its fields out when nil
	chain    []reflect.Type // the structs from the outermost to it
}

// fieldsOf returns the fields encoding/json reads of struct t, found at
// path, in the order of their places, found as encoding/json finds them:
// the fields of embedded structs depth by depth (one embedded twice at one
// depth gives each of its fields twice, which the rule of names then
// drops; encoding/json also skips a struct met at an earlier depth, whose
// fields the rule drops all the same), then the one dominant field of
// each name. A struct that embeds itself, which encoding/json walks once,
// is an error, as is any type that contains itself.
func (s *schemaMaker) fieldsOf(t reflect.Type, path string) ([]jsonField, error) {
	var fields []jsonField
	next := []embedded{{typ: t, chain: []reflect.Type{t}}}
	nextCount := map[reflect.Type]int{} // how often each struct of next was met
	for len(next) > 0 {
		current, count := next, nextCount
		next, nextCount = nil, map[reflect.Type]int{}
		for _, e := range current {
			for i := range e.typ.NumField() {
				c, ok := candidateOf(e.typ, i)
				if !ok {
					continue
				}
				index, byPointer := append(slices.Clip(e.index), i), c.sf.Anonymous && c.sf.Type.Kind() == reflect.Pointer
				switch {
				case byPointer && !c.sf.IsExported():
					return nil, fmt.Errorf("the schema of %s: encoding/json cannot set an embedded pointer to the unexported struct type %s: %w", where(path), c.ft, ErrInvalidTool)
				case c.name != "" || !c.sf.Anonymous || c.ft.Kind() != reflect.Struct:
					f := c.jsonField(index, e.optional)
					fields = append(fields, f)
					if count[e.typ] > 1 {
						fields = append(fields, f)
					}
				case slices.Contains(e.chain, c.ft):
					return nil, fmt.Errorf("the schema of %s: the type %s embeds itself: %w", where(path), c.ft, ErrInvalidTool)
				default:
					if nextCount[c.ft]++; nextCount[c.ft] == 1 {
						next = append(next, embedded{typ: c.ft, index: index, optional: e.optional || byPointer, chain: append(slices.Clip(e.chain), c.ft)})
					}
				}
			}
		}
	}
	return dominantFields(fields), nil
}

// dominantFields returns, of each name, the field encoding/json reads by
// it: the shallowest, and of those the tagged one; none when two are left
// (both tagged, or neither). They come in the order of their places.
func dominantFields(fields []jsonField) []jsonField {
	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		n := 1
		for i+n < len(fields) && fields[i+n].name == fields[i].name {
			n++
		}
		if a := fields[i]; n == 1 || len(a.index) < len(fields[i+1].index) || a.tagged != fields[i+1].tagged {
			out = append(out, a)
		}
		i += n
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

// where names path in an error: the arguments themselves when empty.
func where(path string) string {
	if path == "" {
		return "the arguments"
	}
	if !utf8.ValidString(path) {
		return fmt.Sprintf("%q", path)
	}
	return "field " + strings.TrimPrefix(path, ".")
}
