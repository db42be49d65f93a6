package nous

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
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

// SchemaOf returns the JSON Schema of the arguments a value of v's type
// holds, v a struct or a pointer to one, as encoding/json reads them into
// it: an object with a property per field encoding/json decodes (its name
// by the json tag, embedded structs' fields in line), each required unless
// its tag says omitempty or omitzero or it is a pointer, and no other
// properties. Two more tags describe a field to the model: description
// ("description:\"the city's name\"") and enum, comma-separated values
// ("enum:\"c,f\""). Strings, booleans, integers, floats, slices and arrays,
// maps with string keys, nested structs, pointers, time.Time (a date-time
// string) and values of any type ({}: anything) have a schema; a channel,
// a function, a complex number or a type that contains itself is an error
// wrapping [ErrInvalidTool].
func SchemaOf(v any) (json.RawMessage, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the schema of %v: a tool's arguments are a struct: %w", t, ErrInvalidTool)
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
	timeType    = reflect.TypeFor[time.Time]()
	rawType     = reflect.TypeFor[json.RawMessage]()
	numberType  = reflect.TypeFor[json.Number]()
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// of returns the schema of type t, found at path.
func (s *schemaMaker) of(t reflect.Type, path string) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawType:
		return map[string]any{}, nil
	case t == numberType:
		return map[string]any{"type": "number"}, nil
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshaler):
		return map[string]any{}, nil // it reads what it will
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		return s.of(t.Elem(), path)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil // as encoding/json writes []byte
		}
		items, err := s.of(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("the schema of %s: a map whose keys are not strings: %w", where(path), ErrInvalidTool)
		}
		values, err := s.of(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Struct:
		if s.seen[t] {
			return nil, fmt.Errorf("the schema of %s: the type %s contains itself: %w", where(path), t, ErrInvalidTool)
		}
		s.seen[t] = true
		defer delete(s.seen, t)
		props, required := map[string]any{}, []string{}
		if err := s.fields(t, path, props, &required); err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
	}
	return nil, fmt.Errorf("the schema of %s: JSON has no value of type %s: %w", where(path), t, ErrInvalidTool)
}

// fields adds the properties of struct t's fields to props, and the names
// of those required to required.
func (s *schemaMaker) fields(t reflect.Type, path string, props map[string]any, required *[]string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := s.fields(ft, path, props, required); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		schema, err := s.of(f.Type, path+"."+name)
		if err != nil {
			return err
		}
		if d := f.Tag.Get("description"); d != "" {
			schema["description"] = d
		}
		if e := f.Tag.Get("enum"); e != "" {
			values := strings.Split(e, ",")
			enum := make([]any, len(values))
			for i, v := range values {
				enum[i] = v
			}
			schema["enum"] = enum
		}
		props[name] = schema
		optional := f.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		if !optional {
			*required = append(*required, name)
		}
	}
	return nil
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
