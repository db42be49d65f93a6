package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A full tool loop through the SDK: the model calls a tool, the runtime
// runs it and sends the result, the model answers. The API is a fake one
// on a local server that answers each request in turn.
func Example() {
	answers := []string{
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use",
		  "content":[{"type":"thinking","thinking":"I need the weather.","signature":"c2ln"},
		             {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
		  "usage":{"input_tokens":50,"output_tokens":20}}`,
		`{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		  "content":[{"type":"text","text":"It is 18°C and sunny in Paris."}],
		  "usage":{"input_tokens":90,"output_tokens":12,"cache_read_input_tokens":40}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[0])
		answers = answers[1:]
	}))
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	ctx := context.Background()
	c := nous.NewContext(nous.WithSystemPrompt("You are a weather assistant."))
	if err := c.AddMessage(nous.UserMessage("What's the weather in Paris?")); err != nil {
		panic(err)
	}
	weather := func(ctx context.Context, rc nous.RunContext) nous.ToolResult {
		var args struct{ City string }
		if err := rc.Call.ParseArguments(&args); err != nil {
			return nous.ToolResult{Err: err}
		}
		return nous.ToolResult{Content: "18°C, sunny in " + args.City}
	}
	for {
		params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}
		if err := nousanthropic.Fill(&params, c); err != nil {
			panic(err)
		}
		resp, err := client.Messages.New(ctx, params)
		if err != nil {
			panic(err)
		}
		m, usage := nousanthropic.Message(resp)
		if err := c.AddMessage(m); err != nil {
			panic(err)
		}
		c.AddUsage(usage)
		if len(m.ToolCalls) == 0 {
			break
		}
		if err := c.RunToolCalls(ctx, m.ToolCalls, weather); err != nil {
			panic(err)
		}
	}
	for _, m := range c.All() {
		fmt.Printf("%-9s %s%s\n", m.Role, m.Content, calls(m))
	}
	u := c.Usage
	fmt.Printf("requests %d, tool calls %d, input %d, output %d, cache read %d\n", u.Requests, u.ToolCalls, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens)
	// Output:
	// user      What's the weather in Paris?
	// assistant [get_weather {"city":"Paris"}]
	// tool      18°C, sunny in Paris
	// assistant It is 18°C and sunny in Paris.
	// requests 2, tool calls 1, input 180, output 32, cache read 40
}

func calls(m nous.Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return fmt.Sprintf("[%s %s]", m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
}
