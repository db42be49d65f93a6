package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
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

// A conversation another provider's model began: its call, still in the
// current turn, goes to Gemini without an ID (Gemini did not give it) and
// with the signature Google documents for calls the API did not make; the
// view is not changed.
func Example_switchProvider() {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny in Paris."}]},"finishReason":"STOP"}]}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		panic(err)
	}

	c := nous.NewContext()
	claude := nous.AssistantMessage("", nous.ToolCall{ID: "toolu_01", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)})
	if err := c.AddMessages(nous.UserMessage("Weather in Paris?"), claude, nous.ToolMessage("toolu_01", "get_weather", "sunny")); err != nil {
		panic(err)
	}
	params := nousgemini.Params{Model: "gemini-test"}
	if err := nousgemini.Fill(&params, c); err != nil {
		panic(err)
	}
	if _, err := client.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config); err != nil {
		panic(err)
	}
	var sent struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		panic(err)
	}
	for _, content := range sent.Contents {
		fmt.Printf("%-5s %s\n", content.Role, content.Parts[0])
	}
	fmt.Println(c.Messages()[1].ToolCalls[0].ID)
	// Output:
	// user  {"text":"Weather in Paris?"}
	// model {"functionCall":{"args":{"city":"Paris"},"name":"get_weather"},"thoughtSignature":"skip/thought/signature/validator"}
	// user  {"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}
	// toolu_01
}

// Compacting a conversation with a summary a Gemini model writes: the
// older turns become one user message, and the summary call's tokens are
// counted into the context's Usage. The API is a fake one on a local
// server.
func ExampleNewSummarizer() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"The user plans a trip to Paris in May; the hotel is booked."}]},"finishReason":"STOP"}],
		  "usageMetadata":{"promptTokenCount":420,"candidatesTokenCount":15}}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		panic(err)
	}

	c := nous.NewContext()
	long := strings.Repeat("Some details about the trip. ", 40)
	if err := c.AddMessages(
		nous.UserMessage("I am planning a trip to Paris in May. "+long),
		nous.AssistantMessage("Sounds good. "+long),
		nous.UserMessage("Book the hotel. "+long),
		nous.AssistantMessage("The hotel is booked. "+long),
		nous.UserMessage("What should I pack?"),
	); err != nil {
		panic(err)
	}
	c.AddUsage(nous.Usage{Requests: 2, InputTokens: 900, OutputTokens: 40}) // the conversation's two answers
	s := nousgemini.NewSummarizer(client, nousgemini.Params{Model: "gemini-test",
		Config: &genai.GenerateContentConfig{MaxOutputTokens: 1024}})
	if _, err := c.Compact(ctx, 700, nous.WithSummarizer(s)); err != nil {
		panic(err)
	}
	for _, m := range c.Messages() {
		fmt.Printf("%-4s %q\n", m.Role, m.Content)
	}
	u := c.Usage
	fmt.Printf("requests %d, input %d, output %d\n", u.Requests, u.InputTokens, u.OutputTokens)
	// Output:
	// user "Summary of the earlier conversation:\n\nThe user plans a trip to Paris in May; the hotel is booked."
	// user "What should I pack?"
	// requests 3, input 1320, output 55
}

// A streamed reply: its deltas as they come, on the context's callbacks
// through c.EmitDelta, and the whole message at the end, added to the
// context. The model is a scripted one that plays a recorded stream.
func ExampleStream() {
	model := geminitest.NewServer(geminitest.Reply{Frames: geminitest.Frames(
		`data: {"candidates": [{"content": {"parts": [{"text": "Paris is ","thought": false}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash"}

data: {"candidates": [{"content": {"parts": [{"text": "the capital of France."}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 6,"candidatesTokenCount": 7,"totalTokenCount": 13},"modelVersion": "gemini-2.5-flash"}

`)})
	defer model.Close()
	ctx := context.Background()
	client, err := model.Client(ctx)
	if err != nil {
		panic(err)
	}

	c := nous.NewContext()
	c.Callbacks = map[string]nous.Callback{
		nous.CallbackLLMNewDelta: func(_ string, text any) { fmt.Printf("delta %q\n", text) },
	}
	if err := c.AddMessage(nous.UserMessage("Capital of France?")); err != nil {
		panic(err)
	}
	m, err := nousgemini.Stream(ctx, client, nousgemini.Params{Model: "gemini-2.5-flash"}, c, c.EmitDelta)
	if errors.Is(err, nous.ErrInterrupted) && m.Role != "" {
		_ = c.AddMessage(m) // what came, for the user to see; no call of it runs
	} else if err != nil {
		panic(err)
	}
	c.Emit(nous.CallbackLLMNewMessage, m)
	fmt.Println(m.Content, "|", c.Len(), "messages,", c.Usage.TotalTokens, "tokens")
	// Output:
	// delta "Paris is "
	// delta "the capital of France."
	// Paris is the capital of France. | 2 messages, 13 tokens
}
