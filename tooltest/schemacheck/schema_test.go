package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// hexByte is a byte written and read as text: two hex digits.
type hexByte byte

func (b hexByte) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%02x", byte(b)), nil }

func (b *hexByte) UnmarshalText(text []byte) error {
	n, err := strconv.ParseUint(string(text), 16, 8)
	*b = hexByte(n)
	return err
}

// The types of the leaves: those whose every JSON of the right shape
// encoding/json reads (plain), and those that read themselves, from text
// or from JSON, which take some strings and not others.
var (
	plainLeaves = []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
		reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](),
		reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
		reflect.TypeFor[uintptr](), reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[json.Number](),
		reflect.TypeFor[json.RawMessage](), reflect.TypeFor[any](), reflect.TypeFor[[]byte](),
	}
	selfLeaves = []reflect.Type{
		reflect.TypeFor[time.Time](), reflect.TypeFor[uuid.UUID](), reflect.TypeFor[netip.Addr](),
		reflect.TypeFor[netip.Prefix](), reflect.TypeFor[*big.Int](), reflect.TypeFor[hexByte](), reflect.TypeFor[[]hexByte](),
	}
	plainKeys = []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int8](), reflect.TypeFor[int](), reflect.TypeFor[uint16](), reflect.TypeFor[uint64]()}
	selfKeys  = []reflect.Type{reflect.TypeFor[netip.Addr]()}
)

// gen makes random types and values of them.
type gen struct {
	r     *rand.Rand
	plain bool // no types that read themselves
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// typ returns a random type, at most 4 deep.
func (g *gen) typ(depth int) reflect.Type {
	if depth >= 4 || g.r.IntN(3) > 0 {
		if !g.plain && g.r.IntN(4) == 0 {
			return pick(g.r, selfLeaves)
		}
		return pick(g.r, plainLeaves)
	}
	switch g.r.IntN(6) {
	case 0:
		return reflect.PointerTo(g.typ(depth + 1))
	case 1:
		return reflect.SliceOf(g.typ(depth + 1))
	case 2:
		return reflect.ArrayOf(g.r.IntN(4), g.typ(depth+1))
	case 3:
		keys := plainKeys
		if !g.plain && g.r.IntN(3) == 0 {
			keys = selfKeys
		}
		return reflect.MapOf(pick(g.r, keys), g.typ(depth+1))
	}
	return g.structType(depth + 1)
}

// The names of fields: Go's, and JSON's, few, so that they meet.
var (
	goNames   = []string{"A", "B", "C", "D", "E", "F"}
	jsonNames = []string{"a", "b", "A", "B", "-", "a b", `a\b`, "é"}
	options   = []string{"", ",omitempty", ",omitzero", ",string", ",string,omitempty", ",omitempty,string"}
)

// structType returns a random struct type: up to 6 fields, some embedded
// structs (or pointers to them), with random json tags.
func (g *gen) structType(depth int) reflect.Type {
	names := g.r.Perm(len(goNames))[:g.r.IntN(len(goNames)+1)]
	fields := make([]reflect.StructField, 0, len(names))
	for _, n := range names {
		f := reflect.StructField{Name: goNames[n]}
		if depth < 4 && g.r.IntN(4) == 0 {
			f.Anonymous, f.Type = true, g.structType(depth+1)
			if g.r.IntN(2) == 0 {
				f.Type = reflect.PointerTo(f.Type)
			}
		} else {
			f.Type = g.typ(depth)
		}
		f.Tag = g.tag(f.Type)
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
}

// tag returns a random json tag for a field of type t.
func (g *gen) tag(t reflect.Type) reflect.StructTag {
	var name, opts string
	if g.r.IntN(2) == 0 {
		name = pick(g.r, jsonNames)
	}
	if g.r.IntN(2) == 0 {
		opts = pick(g.r, options)
	}
	if e := t; strings.Contains(opts, "string") {
		if e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if e == reflect.TypeFor[hexByte]() { // encoding/json writes it unquoted, and then cannot read it
			opts = ""
		}
	}
	switch {
	case g.r.IntN(12) == 0:
		return `json:"-"`
	case name == "" && opts == "":
		return ""
	}
	return reflect.StructTag(fmt.Sprintf("json:%q", name+opts))
}

// fill sets v, settable, to a random value of its type.
func (g *gen) fill(v reflect.Value, depth int) {
	r := g.r
	switch t := v.Type(); {
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(1+r.IntN(9998), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.FixedZone("", 60*(r.IntN(24*60)-12*60)))))
	case t == reflect.TypeFor[uuid.UUID]():
		v.Set(reflect.ValueOf(uuid.New()))
	case t == reflect.TypeFor[netip.Addr]():
		v.Set(reflect.ValueOf(pick(r, []netip.Addr{{}, netip.AddrFrom4([4]byte{byte(r.IntN(256)), 1, 2, 3}), netip.MustParseAddr("fe80::1%eth0"), netip.IPv6Loopback()})))
	case t == reflect.TypeFor[netip.Prefix]():
		v.Set(reflect.ValueOf(pick(r, []netip.Prefix{{}, netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::/0")})))
	case t == reflect.TypeFor[*big.Int]():
		if r.IntN(3) > 0 {
			v.Set(reflect.ValueOf(new(big.Int).Lsh(big.NewInt(r.Int64N(1000)-500), uint(r.IntN(100)))))
		}
	case t == reflect.TypeFor[json.Number]():
		v.SetString(pick(r, []string{"", "0", "-1", "1.5", "1e300", "-0.25E-3", "123456789012345678901234567890"}))
	case t == reflect.TypeFor[json.RawMessage]():
		if r.IntN(4) > 0 {
			v.SetBytes(pick(r, [][]byte{[]byte(`null`), []byte(`{"x":[1,"y",true]}`), []byte(` "s" `), []byte(`-1e3`)}))
		}
	default:
		g.fillKind(v, depth)
	}
}

// fillKind sets v to a random value by its kind.
func (g *gen) fillKind(v reflect.Value, depth int) {
	r := g.r
	switch v.Kind() {
	case reflect.String:
		v.SetString(pick(r, []string{"", "x", "a \"quoted\" \\ word", "line\nbreak\t\x01", "<tag>&", "é\u2028😀", "\xff\xfe", strconv.Itoa(r.Int())}))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.Uint64()) >> r.IntN(64)) // any size, truncated to the type's
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(r.Uint64() >> r.IntN(64))
	case reflect.Float32:
		v.SetFloat(float64(math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(255))<<23))) // finite
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(2047))<<52))
	case reflect.Interface:
		if x := pick(r, []any{nil, 1.5, "s", true, []any{1.0, "x"}, map[string]any{"k": nil}}); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Pointer:
		if r.IntN(4) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			g.fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if r.IntN(4) > 0 {
			v.Set(reflect.MakeSlice(v.Type(), r.IntN(4), 3))
			for i := range v.Len() {
				g.fill(v.Index(i), depth+1)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			g.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		if r.IntN(4) > 0 {
			v.Set(reflect.MakeMap(v.Type()))
			for range r.IntN(4) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				g.fill(k, depth+1)
				g.fill(e, depth+1)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			g.fill(v.Field(i), depth+1)
		}
	}
}

// compile returns the validator of schema.
func compile(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return s
}

// validate reports what s finds wrong with data.
func validate(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// SchemaOf of random struct types (random fields, tags, embedded structs
// and pointers to them), checked with a JSON Schema validator: the JSON
// json.Marshal writes of random values of each type is valid, and
// encoding/json reads it back; of the types whose every leaf encoding/json
// reads by its kind, every random change to that JSON the schema takes
// (a value put in place of another, a key renamed, added or dropped),
// encoding/json reads into the type without error.
func TestSchemaOfRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(reftest.Seed(t), 39))
	runs, values, changes := 400, 0, [2]int{}
	if reftest.Long() {
		runs = 10000
	}
	for run := range runs {
		g := &gen{r: r, plain: run%2 == 0}
		typ := g.structType(0)
		raw, err := nous.SchemaOf(reflect.New(typ).Interface())
		if err != nil {
			t.Fatalf("run %d: %s: %v", run, typ, err)
		}
		s := compile(t, raw)
		for range 4 {
			v := reflect.New(typ)
			g.fill(v.Elem(), 0)
			data, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatalf("run %d: %s: %v", run, typ, err)
			}
			values++
			if err := validate(s, data); err != nil {
				t.Fatalf("run %d: %s\nschema %s\nJSON %s\n%v", run, typ, raw, data, err)
			}
			if err := json.Unmarshal(data, reflect.New(typ).Interface()); err != nil {
				t.Fatalf("run %d: %s: %s does not read back: %v", run, typ, data, err)
			}
			if !g.plain {
				continue
			}
			for range 8 {
				changed := g.change(t, data)
				if validate(s, changed) != nil {
					changes[0]++
					continue
				}
				changes[1]++
				if err := json.Unmarshal(changed, reflect.New(typ).Interface()); err != nil && !leftToJSON(err) {
					t.Fatalf("run %d: %s\nschema %s\nJSON %s\nthe schema takes it, encoding/json does not: %v", run, typ, raw, changed, err)
				}
			}
		}
	}
	t.Logf("%d values; of the changes, %d refused, %d taken", values, changes[0], changes[1])
	if changes[1] < changes[0]/20 {
		t.Errorf("too few changes the schema takes: %d of %d", changes[1], changes[0]+changes[1])
	}
}

// leftToJSON reports whether err is encoding/json refusing a number that
// SchemaOf's doc says the schema leaves to it: an integer written with a
// fraction or an exponent (1.0, -1e3), which JSON Schema counts an integer;
// one beyond the range of a 64-bit integer type; one beyond a float's.
// Changes that move values from field to field make them.
func leftToJSON(err error) bool {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || !strings.HasPrefix(te.Value, "number ") {
		return false
	}
	n := strings.TrimPrefix(te.Value, "number ")
	switch k := te.Type.Kind(); {
	case k >= reflect.Int && k <= reflect.Uintptr:
		if strings.ContainsAny(n, ".eE") {
			return true
		}
		if te.Type.Bits() < 64 {
			return false
		}
		_, err := strconv.ParseInt(n, 10, 64)
		if k >= reflect.Uint {
			_, err = strconv.ParseUint(n, 10, 64)
		}
		return errors.Is(err, strconv.ErrRange)
	case k == reflect.Float32 || k == reflect.Float64:
		_, err := strconv.ParseFloat(n, te.Type.Bits())
		return errors.Is(err, strconv.ErrRange)
	}
	return false
}

// The values put in place of others: every JSON type, numbers at the
// limits of the integer types (none beyond an int64's, nor written with a
// fraction or an exponent: the schema leaves those to encoding/json), and
// strings that are the JSON of a value or base64.
var replacements = []string{
	`null`, `true`, `false`, `""`, `"x"`, `"0"`, `"-1"`, `"12"`, `"-0"`, `"+1"`, `"007"`, `"-129"`, `"256"`, `"1.5"`,
	`"1e3"`, `"true"`, `"null"`, `"\"q\""`, `"\"\t\""`, `"\"\\x\""`, `"\"\\u00e9\""`, `"AAAA"`, `"AA=="`, `"A==="`, `"A"`, `0`, `-1`, `1`, `1.5`, `-129`, `128`, `255`,
	`256`, `-32769`, `65536`, `2147483648`, `4294967296`, `-9223372036854775808`, `[]`, `[1]`, `[null]`, `["a"]`,
	`[1,2,3]`, `{}`, `{"A":1}`, `{"a":"x"}`, `{"1":true}`, `{"-129":1}`,
}

// keys are the names a change gives a property.
var keys = []string{"A", "a", "b", "B", "1", "-1", "128", "+1", "007", "x", "", "a b", "é"}

// change returns data, JSON of an object, with one random change: a value
// in place of another (from replacements, or another of data's values), a
// property renamed, added or dropped.
func (g *gen) change(t *testing.T, data []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var slots []func(any) // each sets one value of doc
	var objects []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			objects = append(objects, v)
			for _, k := range slices.Sorted(maps.Keys(v)) {
				slots = append(slots, func(n any) { v[k] = n })
				walk(v[k])
			}
		case []any:
			for i, e := range v {
				slots = append(slots, func(n any) { v[i] = n })
				walk(e)
			}
		}
	}
	walk(doc)
	var values []any
	for _, s := range replacements {
		values = append(values, json.RawMessage(s))
	}
	switch o := pick(g.r, objects); {
	case len(slots) > 0 && g.r.IntN(3) > 0:
		pick(g.r, slots)(pick(g.r, values))
	case len(o) > 0 && g.r.IntN(2) == 0: // rename or drop
		k := pick(g.r, slices.Sorted(maps.Keys(o)))
		v := o[k]
		delete(o, k)
		if g.r.IntN(2) == 0 {
			o[pick(g.r, keys)] = v
		}
	default:
		o[pick(g.r, keys)] = pick(g.r, values)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SchemaOf refuses a random type with a value JSON cannot hold somewhere
// in it, naming where.
func TestSchemaOfRefusesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(reftest.Seed(t), 40))
	for run := range 200 {
		g := &gen{r: r}
		bad := pick(r, []reflect.Type{reflect.TypeFor[chan int](), reflect.TypeFor[func()](), reflect.TypeFor[complex64](), reflect.TypeFor[map[float64]int](), reflect.TypeFor[fmt.Stringer]()})
		inner := bad
		for range r.IntN(3) {
			inner = pick(r, []func(reflect.Type) reflect.Type{reflect.PointerTo, reflect.SliceOf, func(e reflect.Type) reflect.Type { return reflect.MapOf(reflect.TypeFor[string](), e) }})(inner)
		}
		typ := reflect.StructOf([]reflect.StructField{{Name: "Ok", Type: g.typ(0)}, {Name: "Bad", Type: inner, Tag: `json:"bad"`}})
		_, err := nous.SchemaOf(reflect.New(typ).Interface())
		if !errors.Is(err, nous.ErrInvalidTool) || !strings.Contains(err.Error(), "field bad") {
			t.Fatalf("run %d: %s: %v", run, typ, err)
		}
	}
}
