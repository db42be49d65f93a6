package anthropic

import (
	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Tools returns tools as the Messages API's tool parameters, for
// MessageNewParams.Tools: each a custom tool with its name, description
// and input schema. A tool that nous.Tool.Validate refuses is an error
// wrapping nous.ErrInvalidTool.
func Tools(tools ...nous.Tool) ([]anthropic.ToolUnionParam, error) {
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	for i := range tools {
		schema, err := adapt.ToolSchema(Provider, &tools[i])
		if err != nil {
			return nil, err
		}
		input := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					input.Required = append(input.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				if input.ExtraFields == nil {
					input.ExtraFields = map[string]any{}
				}
				input.ExtraFields[k] = v
			}
		}
		p := anthropic.ToolParam{Name: tools[i].Name, InputSchema: input}
		if d := tools[i].Description; d != "" {
			p.Description = anthropic.String(d)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &p})
	}
	return out, nil
}
