package gemini_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// A full tool loop through the SDK: the model calls a tool, the runtime
// runs it and sends the result, the model answers. The API is a fake one
// on a local server that answers each request in turn.
func Example() {
	answers := []string{
		`{"candidates":[{"content":{"role":"model","parts":[
		  {"functionCall":{"id":"call_1","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],
		  "usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":10,"thoughtsTokenCount":10}}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"It is 18°C and sunny in Paris."}]},"finishReason":"STOP"}],
		  "usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":12,"cachedContentTokenCount":40}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[0])
		answers = answers[1:]
	}))
	defer srv.Close()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		panic(err)
	}

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
	config := &genai.GenerateContentConfig{} // tools, temperature: the caller's
	for {
		params := nousgemini.Params{Model: "gemini-test", Config: config}
		if err := nousgemini.Fill(&params, c); err != nil {
			panic(err)
		}
		resp, err := client.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config)
		if err != nil {
			panic(err)
		}
		m, usage, err := nousgemini.Message(resp)
		if err != nil {
			panic(err)
		}
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
	fmt.Printf("requests %d, tool calls %d, input %d, output %d, reasoning %d\n", u.Requests, u.ToolCalls, u.InputTokens, u.OutputTokens, u.ReasoningTokens)
	// Output:
	// user      What's the weather in Paris?
	// assistant [get_weather {"city":"Paris"}]
	// tool      18°C, sunny in Paris
	// assistant It is 18°C and sunny in Paris.
	// requests 2, tool calls 1, input 140, output 32, reasoning 10
}

func calls(m nous.Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return fmt.Sprintf("[%s %s]", m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
}
