package nous_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
)

// conform returns what in v, a JSON value decoded with UseNumber, schema
// refuses, or "": the part of JSON Schema SchemaOf writes (type, enum,
// pattern, minimum and maximum, properties, required,
// additionalProperties, propertyNames, items, minItems and maxItems),
// checked by hand. The module tooltest/schemacheck checks random types
// with a validator of the whole standard.
func conform(schema map[string]any, v any) string {
	if typ, ok := schema["type"]; ok {
		types, ok := typ.([]any)
		if !ok {
			types = []any{typ}
		}
		if !slices.ContainsFunc(types, func(t any) bool { return jsonType(v, t.(string)) }) {
			return fmt.Sprintf("%v is not of type %v", v, typ)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		return fmt.Sprintf("%v is not one of %v", v, enum)
	}
	switch v := v.(type) {
	case string:
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
			return fmt.Sprintf("%q does not match %s", v, p)
		}
	case json.Number:
		n, _ := new(big.Rat).SetString(string(v))
		for key, sign := range map[string]int{"minimum": -1, "maximum": 1} {
			if limit, ok := schema[key].(json.Number); ok {
				if l, _ := new(big.Rat).SetString(string(limit)); n.Cmp(l) == sign {
					return fmt.Sprintf("%s is beyond the %s %s", v, key, limit)
				}
			}
		}
	case []any:
		return conformArray(schema, v)
	case map[string]any:
		return conformObject(schema, v)
	}
	return ""
}

// jsonType reports whether v is of JSON Schema type typ.
func jsonType(v any, typ string) bool {
	switch v := v.(type) {
	case nil:
		return typ == "null"
	case bool:
		return typ == "boolean"
	case string:
		return typ == "string"
	case json.Number:
		n, _ := new(big.Rat).SetString(string(v))
		return typ == "number" || typ == "integer" && n.IsInt()
	case []any:
		return typ == "array"
	}
	return typ == "object"
}

func conformArray(schema map[string]any, v []any) string {
	for key, bad := range map[string]func(n int) bool{"minItems": func(n int) bool { return len(v) < n }, "maxItems": func(n int) bool { return len(v) > n }} {
		if n, ok := schema[key].(json.Number); ok {
			if limit, _ := n.Int64(); bad(int(limit)) {
				return fmt.Sprintf("%d items, %s %s", len(v), key, n)
			}
		}
	}
	items, _ := schema["items"].(map[string]any)
	for i, item := range v {
		if problem := conform(items, item); problem != "" {
			return fmt.Sprintf("[%d]: %s", i, problem)
		}
	}
	return ""
}

func conformObject(schema map[string]any, v map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, name := range required {
		if _, ok := v[name.(string)]; !ok {
			return fmt.Sprintf("no %s", name)
		}
	}
	for name, value := range v {
		if names, ok := schema["propertyNames"].(map[string]any); ok {
			if problem := conform(names, name); problem != "" {
				return fmt.Sprintf("the name %s", problem)
			}
		}
		sub, ok := props[name].(map[string]any)
		if !ok {
			switch extra := schema["additionalProperties"].(type) {
			case bool:
				if !extra {
					return fmt.Sprintf("%s is not a property", name)
				}
			case map[string]any:
				sub = extra
			}
		}
		if problem := conform(sub, value); problem != "" {
			return fmt.Sprintf("%s: %s", name, problem)
		}
	}
	return ""
}

// decodeNumbers decodes JSON with its numbers as json.Number.
func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	mustDo(t, d.Decode(&v))
	return v
}

// schemaMap returns the schema SchemaOf makes of v, decoded.
func schemaMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := nous.SchemaOf(v)
	mustDo(t, err)
	return decodeNumbers(t, raw).(map[string]any)
}

type Base struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Shade string
}

type Other struct {
	Name  string // "Name", beside Base's "name"
	Shade string
	Extra *int `json:"extra"`
}

type Tagged struct {
	Shade string `json:"Shade"`
}

type Deep struct{ Base }

// The arguments of the round trip: every kind SchemaOf describes, the
// string option, types read from text, and the rules of embedded fields.
type roundTrip struct {
	Base                     // its id wins over Deep's
	Other                    // its Shade and Base's, both untagged at one depth, lose to Tagged's
	*Tagged                  // through a pointer: optional
	Deep                     // deeper: hidden
	ID        int            `json:"id2"`
	Name      string         `json:"top_name"`
	When      time.Time      `json:"when"`
	UUID      uuid.UUID      `json:"uuid"`
	Addr      netip.Addr     `json:"addr"`
	Prefixes  []netip.Prefix `json:"prefixes"`
	Keys      map[int8]bool  `json:"keys"`
	ByAddr    map[netip.Addr]int
	Bytes     []byte          `json:"bytes"`
	Array     [3]uint16       `json:"array"`
	Nested    *[]*Base        `json:"nested"`
	Raw       json.RawMessage `json:"raw"`
	Any       any             `json:"any"`
	Big       *big.Int        `json:"big"`
	Num       json.Number     `json:"num"`
	QInt      int64           `json:"qint,string"`
	QUint     *uint8          `json:"quint,string"`
	QFloat    float32         `json:"qfloat,string"`
	QBool     bool            `json:"qbool,string"`
	QString   string          `json:"qstring,string"`
	QNumber   json.Number     `json:"qnumber,string"`
	QUpper    upper           `json:"qupper,string"`
	QRaw      rawString       `json:"qraw,string"`
	Kind      string          `json:"kind" enum:"a,b"`
	Level     uint8           `json:"level,omitempty" enum:"1,3"`
	Anonymous struct {
		X float64 `json:"x"`
	} `json:"anonymous"`
}

// SchemaOf's schema accepts the JSON encoding/json writes of a value of
// the type, and what it accepts encoding/json reads into it: the zero
// value and a full one pass; a table of JSON texts, each refused or taken
// by encoding/json, is refused or taken by the schema.
func TestSchemaOfRoundTrip(t *testing.T) {
	schema := schemaMap(t, roundTrip{})
	props := schema["properties"].(map[string]any)
	for _, name := range []string{"Shade", "id", "name", "Name", "extra", "id2", "top_name", "ByAddr"} {
		if props[name] == nil {
			t.Errorf("no property %s", name)
		}
	}
	if len(props) != 31 || !slices.Equal(schema["required"].([]any)[:5], []any{"id", "name", "Name", "id2", "top_name"}) {
		t.Errorf("%d properties %v, required %v", len(props), slices.Sorted(maps.Keys(props)), schema["required"])
	}
	extra, level, small := 7, uint8(3), uint8(200)
	full := roundTrip{Base: Base{ID: 1, Name: "b"}, Other: Other{Name: "o", Extra: &extra}, Tagged: &Tagged{Shade: "t"},
		ID: 2, Name: "n", When: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), UUID: uuid.New(), Addr: netip.MustParseAddr("::1"),
		Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Keys: map[int8]bool{-128: true, 127: false},
		ByAddr: map[netip.Addr]int{netip.MustParseAddr("1.2.3.4"): 1}, Bytes: []byte("bytes?"), Array: [3]uint16{0, 1, 65535},
		Nested: &[]*Base{{ID: 3}, nil}, Raw: json.RawMessage(`{"a":[1]}`), Any: []any{1, "x"}, Big: big.NewInt(-5), Num: "1.5e3",
		QInt: -9223372036854775808, QUint: &small, QFloat: 1e-7, QBool: true, QString: "a \"quoted\"\n\\ string", QNumber: "-0.5", QUpper: "U", QRaw: "r",
		Kind: "b", Level: level}
	full.Anonymous.X = 2.5
	full.Deep.ID = 9
	for name, v := range map[string]roundTrip{"zero but the enum": {Kind: "a"}, "full": full} {
		data, err := json.Marshal(v)
		mustDo(t, err)
		if problem := conform(schema, decodeNumbers(t, data)); problem != "" {
			t.Errorf("%s: %s\n%s", name, problem, data)
		}
		var back roundTrip
		mustDo(t, json.Unmarshal(data, &back))
	}
	agree(t, roundTrip{Kind: "a"}, []readCase{
		{`{"uuid":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}`, true, false},
		{`{"uuid":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}`, false, false},
		{`{"addr":"1.2.3.4"}`, true, false},
		{`{"addr":{}}`, false, false},
		{`{"qint":"12"}`, true, false},
		{`{"qint":12}`, false, false},
		{`{"qint":"9223372036854775808"}`, false, false},
		{`{"qint":"-009223372036854775808"}`, true, false},
		{`{"qint":"+1"}`, false, false},
		{`{"quint":"256"}`, false, false},
		{`{"quint":"-0"}`, false, false},
		{`{"quint":null}`, true, false},
		{`{"qfloat":"1e-3"}`, true, false},
		{`{"qfloat":"1e"}`, false, false},
		{`{"qbool":"true"}`, true, false},
		{`{"qbool":true}`, false, false},
		{`{"qbool":"yes"}`, false, false},
		{`{"qstring":"\"x\""}`, true, false},
		{`{"qstring":"x"}`, false, false},
		{`{"qstring":"\"\t\""}`, false, false},
		{`{"qstring":"\"\\x\""}`, false, false},
		{`{"qstring":"\"\\u00e9\\n\""}`, true, false},
		{`{"qnumber":"12"}`, true, false},
		{`{"qupper":"\"x\""}`, true, false},
		{`{"qupper":"x"}`, false, false},
		{`{"qraw":"x"}`, true, false},
		{`{"keys":{"-128":true,"+127":false,"007":true}}`, true, false},
		{`{"keys":{"128":true}}`, false, false},
		{`{"keys":{"1.0":true}}`, false, false},
		{`{"bytes":"Ynl0ZXM/"}`, true, false},
		{`{"bytes":"bytes?"}`, false, false},
		{`{"array":[1,2,70000]}`, false, false},
		{`{"array":[1,-2,3]}`, false, false},
		{`{"array":"AAAA"}`, false, false},
		{`{"nested":[{"id":1,"name":"x","Shade":""},null]}`, true, false},
		{`{"nested":[{"id":"1"}]}`, false, false},
		{`{"level":3}`, true, false},
		{`{"level":2}`, false, true}, // encoding/json takes it, the enum does not
		{`{"kind":"c"}`, false, true},
		{`{"Shade":"s","extra":null}`, true, false},
		{`{"Tagged":{}}`, false, true}, // encoding/json skips it
		{`{"id":"1"}`, false, false},
		{`{"anonymous":{"x":1}}`, true, false},
		{`{"anonymous":{"x":true}}`, false, false},
	})
}

// A wrapper of a type read from text is read as a struct, by its fields,
// and a pointer to one from text, by the method it promotes: encoding/json
// looks for the methods of an unnamed type on pointers only. A slice of
// bytes that write themselves is written as an array. A number read from
// text, with the string option, is a JSON string within a string.
func TestSchemaOfWrappers(t *testing.T) {
	type wrappers struct {
		Value struct{ uuid.UUID }  `json:"value"`
		Ptr   *struct{ uuid.UUID } `json:"ptr"`
		Hex   []hexByte            `json:"hex"`
		Level textLevel            `json:"level,string,omitempty"`
	}
	const id = `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`
	const value = `{"value":{"UUID":` + id + `},`
	agree(t, wrappers{}, []readCase{
		{value + `"ptr":` + id + `,"hex":["0a","ff"]}`, true, false},
		{`{"value":` + id + `,"hex":null}`, false, false},
		{value + `"ptr":{"UUID":` + id + `},"hex":null}`, false, false},
		{value + `"hex":["0a",1]}`, false, false},
		{value + `"hex":"AAAA"}`, false, true}, // encoding/json reads base64 too, but writes an array
		{value + `"hex":null,"level":"\"5\""}`, true, false},
		{value + `"hex":null,"level":"5"}`, false, false}, // what json.Marshal writes of it
	})
	// json.Marshal writes Value as a string (MarshalText is promoted to
	// it), which encoding/json does not read back: the schema is the
	// reader's. Hex it writes as an array.
	w := wrappers{Hex: []hexByte{1, 255}}
	if problem := conform(schemaMap(t, w)["properties"].(map[string]any)["hex"].(map[string]any), decodeNumbers(t, mustJSON(t, w.Hex))); problem != "" {
		t.Errorf("%s: %s", mustJSON(t, w.Hex), problem)
	}
}

// upper is a string read from text, in capitals; rawString one read from
// its JSON as it is. With the string option, encoding/json reads the one
// from a JSON string within a string, the other from any string.
type upper string

func (u *upper) UnmarshalText(text []byte) error {
	*u = upper(strings.ToUpper(string(text)))
	return nil
}

type rawString string

func (r *rawString) UnmarshalJSON(data []byte) error {
	*r = rawString(data)
	return nil
}

// textLevel is a number read from text. With the string option,
// encoding/json reads it from a JSON string within a string (and writes it
// as a number within one, which it cannot read back).
type textLevel uint8

func (l *textLevel) UnmarshalText(text []byte) error {
	n, err := strconv.ParseUint(string(text), 10, 8)
	*l = textLevel(n)
	return err
}

// hexByte is a byte written and read as two hex digits.
type hexByte byte

func (b hexByte) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%02x", byte(b)), nil }

func (b *hexByte) UnmarshalText(text []byte) error {
	n, err := strconv.ParseUint(string(text), 16, 8)
	*b = hexByte(n)
	return err
}

// readCase is a JSON text of arguments and whether the schema takes it;
// encoding/json reads it into the type just when the schema takes it, or
// also when the schema refuses it for a reason of its own (schemaOnly: an
// enum, a property the type does not have, another encoding encoding/json
// also reads).
type readCase struct {
	json       string
	ok         bool
	schemaOnly bool
}

// agree checks the cases against the schema of proto's type, each filled
// with the required properties of proto's JSON it lacks.
func agree[T any](t *testing.T, proto T, cases []readCase) {
	t.Helper()
	schema := schemaMap(t, proto)
	var base map[string]any
	mustDo(t, json.Unmarshal(mustJSON(t, proto), &base))
	for _, tc := range cases {
		var v map[string]any
		mustDo(t, json.Unmarshal([]byte(tc.json), &v))
		required, _ := schema["required"].([]any)
		for _, name := range required {
			if _, ok := v[name.(string)]; !ok {
				v[name.(string)] = base[name.(string)]
			}
		}
		data := mustJSON(t, v)
		problem := conform(schema, decodeNumbers(t, data))
		if (problem == "") != tc.ok {
			t.Errorf("%s: the schema says %q, want ok %v", tc.json, problem, tc.ok)
		}
		err := json.Unmarshal(data, new(T))
		if (err == nil) != (tc.ok || tc.schemaOnly) {
			t.Errorf("%s: encoding/json says %v, want ok %v", tc.json, err, tc.ok)
		}
	}
}

// The integers of a map key's type or a field with the string option, as
// SchemaOf's patterns take them, are those encoding/json reads: random
// decimal strings near each type's limits, with signs and leading zeros.
func TestSchemaOfIntegerPatternsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 39))
	for _, typ := range []reflect.Type{reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int](),
		reflect.TypeFor[int64](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint](), reflect.TypeFor[uint64](), reflect.TypeFor[uintptr]()} {
		keyed := reflect.StructOf([]reflect.StructField{{Name: "M", Type: reflect.MapOf(typ, reflect.TypeFor[bool]())}})
		quoted := reflect.StructOf([]reflect.StructField{{Name: "Q", Type: typ, Tag: `json:",string"`}})
		keyPattern := regexp.MustCompile(schemaMap(t, reflect.New(keyed).Interface())["properties"].(map[string]any)["M"].(map[string]any)["propertyNames"].(map[string]any)["pattern"].(string))
		quotedPattern := regexp.MustCompile(schemaMap(t, reflect.New(quoted).Interface())["properties"].(map[string]any)["Q"].(map[string]any)["pattern"].(string))
		limits := []*big.Int{big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), uint(typ.Bits()))}
		if typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Int64 {
			half := new(big.Int).Lsh(big.NewInt(1), uint(typ.Bits()-1))
			limits = []*big.Int{new(big.Int).Neg(half), half}
		}
		for range 3000 {
			n := new(big.Int).Add(limits[r.IntN(2)], big.NewInt(int64(r.IntN(41)-20)))
			if r.IntN(4) == 0 { // any size
				n.Rsh(n.SetUint64(r.Uint64()), uint(r.IntN(64)))
				if r.IntN(2) == 0 {
					n.Neg(n)
				}
			}
			s := n.String()
			if r.IntN(5) == 0 {
				s = strings.Replace("+"+s, "+-", "-", 1)
			}
			if r.IntN(5) == 0 {
				s = strings.Replace(strings.Repeat("0", r.IntN(3))+s, "0-", "-0", 1)
			}
			if r.IntN(20) == 0 {
				s = [...]string{"", "-", "+", "1.0", "1e2", " 1", "0x1", "1_0"}[r.IntN(8)]
			}
			key := json.Unmarshal([]byte(`{"M":{`+strconv.Quote(s)+`:true}}`), reflect.New(keyed).Interface()) == nil
			if keyPattern.MatchString(s) != key {
				t.Fatalf("%s key %q: pattern %v, encoding/json %v", typ, s, !key, key)
			}
			q := json.Unmarshal([]byte(`{"Q":`+strconv.Quote(s)+`}`), reflect.New(quoted).Interface()) == nil
			if quotedPattern.MatchString(s) != q {
				t.Fatalf("%s string option %q: pattern %v, encoding/json %v", typ, s, !q, q)
			}
		}
	}
}

// field returns a struct field of type t, named name, with tag tag.
func field(name string, t reflect.Type, tag string) reflect.StructField {
	return reflect.StructField{Name: name, Type: t, Tag: reflect.StructTag(tag)}
}

// embed returns t embedded, under name, with tag tag.
func embed(name string, t reflect.Type, tag string) reflect.StructField {
	return reflect.StructField{Name: name, Type: t, Tag: reflect.StructTag(tag), Anonymous: true}
}

// SchemaOf takes the fields of embedded structs as encoding/json does: a
// name's shallowest field wins, then its tagged one; two of a name at one
// depth, both tagged or neither, leave it out, as does a struct embedded
// twice at one depth; a name is never required twice. The properties are
// the names json.Marshal writes.
func TestSchemaOfEmbeddedFields(t *testing.T) {
	str, num := reflect.TypeFor[string](), reflect.TypeFor[int]()
	a := reflect.StructOf([]reflect.StructField{field("X", str, `json:"x"`), field("Y", str, ""), field("Z", str, "")})
	b := reflect.StructOf([]reflect.StructField{field("X", num, `json:"x"`), field("Y", num, ""), field("Z", num, `json:"Z"`), field("W", num, "")})
	d := reflect.StructOf([]reflect.StructField{field("D", num, `json:"d"`), field("Z", num, "")})
	withD := reflect.StructOf([]reflect.StructField{embed("D1", d, ""), field("P", num, "")})
	withD2 := reflect.StructOf([]reflect.StructField{embed("D2", d, ""), field("Q", num, ""), field("R", str, "")})
	for _, tc := range []struct {
		name     string
		fields   []reflect.StructField
		required string
	}{
		{"both tagged or neither at one depth: dropped; tagged beats untagged", []reflect.StructField{embed("A", a, ""), embed("B", b, "")}, "Z,W"},
		{"the shallower wins", []reflect.StructField{embed("A", a, ""), field("X", num, `json:"x"`), field("Y", num, "")}, "Z,x,Y"},
		{"a struct reached twice at one depth", []reflect.StructField{embed("W1", withD, ""), embed("W2", withD2, "")}, "P,Q,R"},
		{"a struct reached at two depths", []reflect.StructField{embed("W1", withD, ""), embed("D", d, "")}, "P,d,Z"},
		{"a tagged embedded struct is a field", []reflect.StructField{embed("A", a, `json:"a"`), field("X", str, "")}, "a,X"},
		{"an embedded pointer: its fields optional", []reflect.StructField{embed("D", reflect.PointerTo(d), ""), field("R", num, "")}, "R"},
		{"a tag name encoding/json does not take", []reflect.StructField{field("X", num, `json:"a\\b"`), field("Y", num, `json:"a'b"`), field("Z", num, `json:"a-b/c"`)}, "X,Y,a-b/c"},
	} {
		typ := reflect.StructOf(tc.fields)
		schema := schemaMap(t, reflect.New(typ).Interface())
		var required []string
		for _, n := range schema["required"].([]any) {
			required = append(required, n.(string))
		}
		if got := strings.Join(required, ","); got != tc.required {
			t.Errorf("%s: required %s, want %s", tc.name, got, tc.required)
		}
		full := reflect.New(typ).Elem()
		for i := range full.NumField() {
			if f := full.Field(i); f.Kind() == reflect.Pointer {
				f.Set(reflect.New(f.Type().Elem()))
			}
		}
		var written map[string]any
		mustDo(t, json.Unmarshal(mustJSON(t, full.Interface()), &written))
		if props := slices.Sorted(maps.Keys(schema["properties"].(map[string]any))); !slices.Equal(props, slices.Sorted(maps.Keys(written))) {
			t.Errorf("%s: properties %v, json.Marshal writes %v", tc.name, props, slices.Sorted(maps.Keys(written)))
		}
	}
}
