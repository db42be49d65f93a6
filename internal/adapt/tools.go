package adapt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nous-go/nous"
)

// ToolSchema returns the schema of t's parameters as a map, numbers as
// json.Number (so that they are written back as they were), the schema of
// no arguments for none; an error wrapping nous.ErrInvalidTool for a tool
// that t.Validate refuses, which the provider names.
func ToolSchema(provider string, t *nous.Tool) (map[string]any, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", provider, err)
	}
	if t.Parameters == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	d := json.NewDecoder(bytes.NewReader(t.Parameters))
	d.UseNumber()
	var schema map[string]any
	if err := d.Decode(&schema); err != nil {
		return nil, fmt.Errorf("%s: tool %q: %v: %w", provider, t.Name, err, nous.ErrInvalidTool) // Validate read it: never
	}
	if _, ok := schema["type"]; !ok {
		schema["type"] = "object"
	}
	return schema, nil
}
