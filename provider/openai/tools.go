package openai

import (
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ChatTools returns tools as Chat Completions' tool parameters, for
// ChatCompletionNewParams.Tools: each a function with its name,
// description and parameters. Strict schema adherence is left off, as
// nous.SchemaOf's optional fields require. A tool that
// nous.Tool.Validate refuses is an error wrapping nous.ErrInvalidTool.
func ChatTools(tools ...nous.Tool) ([]openai.ChatCompletionToolUnionParam, error) {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for i := range tools {
		schema, err := adapt.ToolSchema(Provider, &tools[i])
		if err != nil {
			return nil, err
		}
		f := shared.FunctionDefinitionParam{Name: tools[i].Name, Parameters: shared.FunctionParameters(schema)}
		if d := tools[i].Description; d != "" {
			f.Description = openai.String(d)
		}
		out = append(out, openai.ChatCompletionFunctionTool(f))
	}
	return out, nil
}

// ResponsesTools returns tools as the Responses API's tool parameters, for
// responses.ResponseNewParams.Tools: each a function tool, with strict
// set to false (the API's default is true, which nous.SchemaOf's optional
// fields do not meet). A tool that nous.Tool.Validate refuses is an error
// wrapping nous.ErrInvalidTool.
func ResponsesTools(tools ...nous.Tool) ([]responses.ToolUnionParam, error) {
	out := make([]responses.ToolUnionParam, 0, len(tools))
	for i := range tools {
		schema, err := adapt.ToolSchema(Provider, &tools[i])
		if err != nil {
			return nil, err
		}
		f := responses.FunctionToolParam{Name: tools[i].Name, Parameters: schema, Strict: openai.Bool(false)}
		if d := tools[i].Description; d != "" {
			f.Description = openai.String(d)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &f})
	}
	return out, nil
}
