package nous_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
)

// A tool's arguments as a Go struct: its schema for every provider.
func ExampleNewTool() {
	type weatherArgs struct {
		City  string `json:"city" description:"the city's name"`
		Units string `json:"units,omitempty" enum:"c,f"`
	}
	tool, err := nous.NewTool("get_weather", "The weather in a city today.", weatherArgs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tool.Name)
	fmt.Println(string(tool.Parameters))
	// Output:
	// get_weather
	// {"additionalProperties":false,"properties":{"city":{"description":"the city's name","type":"string"},"units":{"enum":["c","f"],"type":"string"}},"required":["city"],"type":"object"}
}

type inner struct {
	Note string `json:"note"`
}

type Embedded struct {
	Shared int `json:"shared"`
}

type recursive struct {
	Next *recursive `json:"next"`
}

// SelfEmbedding embeds a pointer to itself; encoding/json walks it once.
type SelfEmbedding struct {
	*SelfEmbedding
	X int
}

// Wrapper embeds a struct that embeds a pointer to itself.
type Wrapper struct {
	SelfEmbedding
}

// MutualA and MutualB embed pointers to each other.
type MutualA struct {
	*MutualB
	A int
}

type MutualB struct {
	*MutualA
	B int
}

// Outer holds an Inner, which embeds a pointer to an Outer.
type Outer struct{ In Inner }

type Inner struct{ *Outer }

type hidden struct{ X int }

type myInt int

// withUnexported has fields encoding/json skips: an unexported one, and an
// embedded one of an unexported type that is not a struct.
type withUnexported struct {
	myInt
	hidden string
	X      int
}

var _ = withUnexported{myInt: 1, hidden: "skipped"}

// decodesJSON reads its own JSON; decodesText reads itself from a string.
type decodesJSON struct{ X int }

func (d *decodesJSON) UnmarshalJSON([]byte) error { return nil }

type decodesText struct{ X int }

func (d *decodesText) UnmarshalText([]byte) error { return nil }

// allKinds has a field of every kind SchemaOf describes.
type allKinds struct {
	Embedded
	S       string           `json:"s"`
	B       bool             `json:"b"`
	I       int64            `json:"i"`
	I8      int8             `json:"i8"`
	U       uint8            `json:"u"`
	U64     uint64           `json:"u64"`
	F       float32          `json:"f"`
	L       []string         `json:"l"`
	A       [2]int           `json:"a"`
	Bytes   []byte           `json:"bytes"`
	M       map[string]inner `json:"m"`
	P       *inner           `json:"p"`
	T       time.Time        `json:"t"`
	Any     any              `json:"any"`
	Raw     json.RawMessage  `json:"raw"`
	N       json.Number      `json:"n"`
	ID      uuid.UUID        `json:"id"`
	Addr    *netip.Addr      `json:"addr"`
	Self    decodesJSON      `json:"self"`
	Omit    string           `json:"omit,omitempty"`
	Zero    int              `json:"zero,omitzero"`
	Skipped string           `json:"-"`
	NoTag   string
	Nested  map[string][]bool `json:"nested"`
	Keys    map[uint8]string  `json:"keys"`
	Anon    struct{ X int }   `json:"anon"`
	QInt    int16             `json:"qint,string"`
	QBool   *bool             `json:"qbool,string"`
	QFloat  float64           `json:"qfloat,string"`
	QText   string            `json:"qtext,string"`
	Units   string            `json:"units" enum:"c,f" description:"the scale"`
	Level   *int              `json:"level" enum:"1,2"`
}

// SchemaOf gives each Go type the schema of what encoding/json reads into
// it: its kind, its limits, null where json.Marshal writes it, the string
// option, the description and enum tags.
func TestSchemaOf(t *testing.T) {
	got, err := nous.SchemaOf(&allKinds{})
	mustDo(t, err)
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	mustDo(t, json.Unmarshal(got, &schema))
	const note = `{"additionalProperties":false,"properties":{"note":{"type":"string"}},"required":["note"],"type":`
	want := map[string]string{
		"shared": `{"type":"integer"}`,
		"s":      `{"type":"string"}`,
		"b":      `{"type":"boolean"}`,
		"i":      `{"type":"integer"}`,
		"i8":     `{"maximum":127,"minimum":-128,"type":"integer"}`,
		"u":      `{"maximum":255,"minimum":0,"type":"integer"}`,
		"u64":    `{"minimum":0,"type":"integer"}`,
		"f":      `{"type":"number"}`,
		"l":      `{"items":{"type":"string"},"type":["array","null"]}`,
		"a":      `{"items":{"type":"integer"},"maxItems":2,"minItems":2,"type":"array"}`,
		"bytes":  `{"contentEncoding":"base64","pattern":"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$","type":["string","null"]}`,
		"m":      `{"additionalProperties":` + note + `"object"},"type":["object","null"]}`,
		"p":      note + `["object","null"]}`,
		"t":      `{"format":"date-time","type":"string"}`,
		"any":    `{}`,
		"raw":    `{}`,
		"n":      `{"type":"number"}`,
		"id":     `{"type":"string"}`,
		"addr":   `{"type":["string","null"]}`,
		"self":   `{}`,
		"omit":   `{"type":"string"}`,
		"zero":   `{"type":"integer"}`,
		"NoTag":  `{"type":"string"}`,
		"nested": `{"additionalProperties":{"items":{"type":"boolean"},"type":["array","null"]},"type":["object","null"]}`,
		"keys":   `{"additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^0*(?:0|[1-9][0-9]{0,1}|1[0-9]{2}|2[0-4][0-9]|25[0-4]|255)$"},"type":["object","null"]}`,
		"anon":   `{"additionalProperties":false,"properties":{"X":{"type":"integer"}},"required":["X"],"type":"object"}`,
		"qint":   `{"pattern":"^(?:0*(?:0|[1-9][0-9]{0,3}|[1-2][0-9]{4}|3[0-1][0-9]{3}|32[0-6][0-9]{2}|327[0-5][0-9]|3276[0-6]|32767)|-0*(?:0|[1-9][0-9]{0,3}|[1-2][0-9]{4}|3[0-1][0-9]{3}|32[0-6][0-9]{2}|327[0-5][0-9]|3276[0-7]|32768))$","type":"string"}`,
		"qbool":  `{"enum":["true","false",null],"type":["string","null"]}`,
		"qfloat": `{"pattern":"^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$","type":"string"}`,
		"qtext":  `{"pattern":"^\"(?:[^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\"$","type":"string"}`,
		"units":  `{"description":"the scale","enum":["c","f"],"type":"string"}`,
		"level":  `{"enum":[1,2,null],"type":["integer","null"]}`,
	}
	if schema.Type != "object" || schema.Additional == nil || *schema.Additional || len(schema.Properties) != len(want) {
		t.Fatalf("schema %s", got)
	}
	for name, w := range want {
		if string(schema.Properties[name]) != w {
			t.Errorf("property %s: %s, want %s", name, schema.Properties[name], w)
		}
	}
	if got, err := nous.SchemaOf(withUnexported{}); err != nil || string(got) != `{"additionalProperties":false,"properties":{"X":{"type":"integer"}},"required":["X"],"type":"object"}` {
		t.Errorf("the schema of unexported fields: %s, %v", got, err)
	}
	required := strings.Join(schema.Required, ",")
	if required != "shared,s,b,i,i8,u,u64,f,l,a,bytes,m,t,any,raw,n,id,self,NoTag,nested,keys,anon,qint,qfloat,qtext,units" {
		t.Errorf("required %s", required)
	}
}

// SchemaOf refuses, with an error that names the field, what JSON cannot
// hold and a type whose schema would never end.
func TestSchemaOfRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     any
		where string
	}{
		{"a channel", struct{ C chan int }{}, "field C"},
		{"a func", struct{ F func() }{}, "field F"},
		{"a complex number", struct{ C complex128 }{}, "field C"},
		{"a map of channels", struct {
			M map[string]chan int `json:"m"`
		}{}, "field m{}"},
		{"a slice of funcs", struct{ L [][]func() }{}, "field L[][]"},
		{"a map of float keys", struct{ M map[float64]string }{}, "field M"},
		{"an interface with methods", struct{ S fmt.Stringer }{}, "field S"},
		{"a type containing itself", recursive{}, "field next"},
		{"a type embedding a pointer to itself", SelfEmbedding{}, "the arguments"},
		{"a type embedding one that embeds a pointer to itself", struct{ W Wrapper }{}, "field W"},
		{"a type embedding one that holds it", Outer{}, "field In"},
		{"types embedding pointers to each other", struct{ MutualA }{}, "the arguments"},
		{"an embedded pointer to an unexported struct", struct{ *hidden }{}, "the arguments"},
		{"arguments that read their own JSON", decodesJSON{}, "decodes itself"},
		{"arguments read from a string", &decodesText{}, "decodes itself"},
		{"an enum not of the field's type", struct {
			N int `enum:"1,two"`
		}{}, "field N"},
		{"an enum of null", struct {
			N *int `enum:"1,null"`
		}{}, "field N"},
		{"an enum of objects", struct {
			O inner `enum:"a"`
		}{}, "field O"},
		{"not a struct", "text", "a tool's arguments are a struct"},
		{"nil", nil, "a tool's arguments are a struct"},
	} {
		_, err := nous.SchemaOf(tc.v)
		if !errors.Is(err, nous.ErrInvalidTool) || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: %v, want ErrInvalidTool naming %q", tc.name, err, tc.where)
		}
	}
}

// A tool's name and parameters are checked as every provider would.
func TestToolValidate(t *testing.T) {
	for _, tc := range []struct {
		tool nous.Tool
		ok   bool
	}{
		{nous.Tool{Name: "get_weather-2"}, true},
		{nous.Tool{Name: "0"}, true},
		{nous.Tool{Name: "9"}, true},
		{nous.Tool{Name: "v0123456789"}, true},
		{nous.Tool{Name: "Az_-"}, true},
		{nous.Tool{Name: "a/"}, false}, // the characters beside the digits, letters, _ and -
		{nous.Tool{Name: "a:"}, false},
		{nous.Tool{Name: "a@"}, false},
		{nous.Tool{Name: "a["}, false},
		{nous.Tool{Name: "a`"}, false},
		{nous.Tool{Name: "a{"}, false},
		{nous.Tool{Name: strings.Repeat("a", 64), Parameters: json.RawMessage(`{"type":"object"}`)}, true},
		{nous.Tool{Name: "t", Parameters: json.RawMessage(`{"properties":{}}`)}, true},
		{nous.Tool{Name: ""}, false},
		{nous.Tool{Name: strings.Repeat("a", 65)}, false},
		{nous.Tool{Name: "get weather"}, false},
		{nous.Tool{Name: "café"}, false},
		{nous.Tool{Name: "t", Parameters: json.RawMessage(`[]`)}, false},
		{nous.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"string"}`)}, false},
		{nous.Tool{Name: "t", Parameters: json.RawMessage(`{"type":`)}, false},
	} {
		err := tc.tool.Validate()
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, nous.ErrInvalidTool) {
			t.Errorf("%q %s: %v", tc.tool.Name, tc.tool.Parameters, err)
		}
	}
	if _, err := nous.NewTool("bad name", "", nil); !errors.Is(err, nous.ErrInvalidTool) {
		t.Errorf("NewTool of a bad name: %v", err)
	}
	if tool, err := nous.NewTool("raw", "", json.RawMessage(`{"type":"object"}`)); err != nil || string(tool.Parameters) != `{"type":"object"}` {
		t.Errorf("NewTool of a raw schema: %s, %v", tool.Parameters, err)
	}
}
