package gemini

import (
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Tools returns tools as GenerateContent's tools, for
// GenerateContentConfig.Tools: one genai.Tool whose function
// declarations are the tools, each with its name, description and the
// JSON Schema of its parameters (ParametersJsonSchema); none for no tools.
// A tool that nous.Tool.Validate refuses is an error wrapping
// nous.ErrInvalidTool.
func Tools(tools ...nous.Tool) ([]*genai.Tool, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	for i := range tools {
		schema, err := adapt.ToolSchema(Provider, &tools[i])
		if err != nil {
			return nil, err
		}
		decls = append(decls, &genai.FunctionDeclaration{Name: tools[i].Name, Description: tools[i].Description, ParametersJsonSchema: schema})
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, nil
}
