package nous_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

// SchemaOf gives each Go type the schema of what encoding/json reads into
// it, and refuses what JSON cannot hold.
func TestSchemaOf(t *testing.T) {
	type all struct {
		Embedded
		S       string           `json:"s"`
		B       bool             `json:"b"`
		I       int64            `json:"i"`
		U       uint8            `json:"u"`
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
		Omit    string           `json:"omit,omitempty"`
		Zero    int              `json:"zero,omitzero"`
		Skipped string           `json:"-"`
		NoTag   string
		Nested  map[string][]bool `json:"nested"`
	}
	got, err := nous.SchemaOf(&all{})
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(got, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"shared": `{"type":"integer"}`,
		"s":      `{"type":"string"}`,
		"b":      `{"type":"boolean"}`,
		"i":      `{"type":"integer"}`,
		"u":      `{"type":"integer"}`,
		"f":      `{"type":"number"}`,
		"l":      `{"items":{"type":"string"},"type":"array"}`,
		"a":      `{"items":{"type":"integer"},"type":"array"}`,
		"bytes":  `{"contentEncoding":"base64","type":"string"}`,
		"m":      `{"additionalProperties":{"additionalProperties":false,"properties":{"note":{"type":"string"}},"required":["note"],"type":"object"},"type":"object"}`,
		"p":      `{"additionalProperties":false,"properties":{"note":{"type":"string"}},"required":["note"],"type":"object"}`,
		"t":      `{"format":"date-time","type":"string"}`,
		"any":    `{}`,
		"raw":    `{}`,
		"n":      `{"type":"number"}`,
		"omit":   `{"type":"string"}`,
		"zero":   `{"type":"integer"}`,
		"NoTag":  `{"type":"string"}`,
		"nested": `{"additionalProperties":{"items":{"type":"boolean"},"type":"array"},"type":"object"}`,
	}
	if schema.Type != "object" || schema.Additional == nil || *schema.Additional || len(schema.Properties) != len(want) {
		t.Fatalf("schema %s", got)
	}
	for name, w := range want {
		if string(schema.Properties[name]) != w {
			t.Errorf("property %s: %s, want %s", name, schema.Properties[name], w)
		}
	}
	required := strings.Join(schema.Required, ",")
	if required != "shared,s,b,i,u,f,l,a,bytes,m,t,any,raw,n,NoTag,nested" {
		t.Errorf("required %s", required)
	}
	for name, v := range map[string]any{
		"a channel":                struct{ C chan int }{},
		"a func":                   struct{ F func() }{},
		"a complex number":         struct{ C complex128 }{},
		"a map of int keys":        struct{ M map[int]string }{},
		"a type containing itself": recursive{},
		"not a struct":             "text",
		"nil":                      nil,
	} {
		if _, err := nous.SchemaOf(v); !errors.Is(err, nous.ErrInvalidTool) {
			t.Errorf("%s: %v, want ErrInvalidTool", name, err)
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
