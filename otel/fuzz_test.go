package nousotel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
)

// Any arguments a model sends and any result a tool returns give content
// attributes that are JSON in the conventions' shape, hold no secret of
// the deps nor a secret key's value, and never panic.
func FuzzContent(f *testing.F) {
	f.Add(`{"city":"Paris"}`, `18°C`, "text")
	f.Add(`{"password":"pw-0123","nested":[{"api_key":"k-0123"}]}`, `{"token":"sk-fuzz-secret"}`, "sk-fuzz-secret")
	f.Add(`{"a":`, `[1,2,{"authorization":"Bearer x"}]`, "")
	f.Add(`"just a string"`, `null`, "<&>")
	f.Add(`{"a":1e400}`, `{"a":"\ud800"}`, "\xff")
	const secret = "sk-fuzz-secret"
	f.Fuzz(func(t *testing.T, args, result, text string) {
		tr, rec := recorder(nousotel.WithContent())
		c := nous.NewContext(nous.WithDeps(map[string]any{"api_key": secret}), nous.WithSystemPrompt(text))
		stop := tr.Observe(context.Background(), c)
		call := nous.ToolCall{ID: "c1", Name: "f", Arguments: []byte(args)}
		if c.AddMessage(nous.UserMessage(text+secret)) != nil || c.AddMessage(nous.AssistantMessage(text, call)) != nil {
			t.Skip("a message the context refuses")
		}
		c.EndStep(nous.Step{Provider: "openai", Model: "m"})
		if err := c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult {
			return nous.ToolResult{Content: result}
		}); err != nil {
			t.Fatal(err)
		}
		stop()
		for _, s := range rec.Ended() {
			for _, kv := range s.Attributes() {
				v := kv.Value.String()
				if strings.Contains(v, secret) {
					t.Errorf("%s: %s holds the secret: %s", s.Name(), kv.Key, v)
				}
				switch kv.Key {
				case "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result":
					if !json.Valid([]byte(v)) {
						t.Errorf("%s: %s is not JSON: %q", s.Name(), kv.Key, v)
					}
				}
			}
		}
	})
}
