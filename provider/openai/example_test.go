package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// A full tool loop through the SDK's Chat Completions: the model calls a
// tool, the runtime runs it and sends the result, the model answers. The
// API is a fake one on a local server that answers each request in turn.
func Example() {
	answers := []string{
		`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
		  "message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
		    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}],
		  "usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`,
		`{"id":"c2","object":"chat.completion","created":2,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",
		  "message":{"role":"assistant","content":"It is 18°C and sunny in Paris.","refusal":null}}],
		  "usage":{"prompt_tokens":90,"completion_tokens":12,"total_tokens":102,"prompt_tokens_details":{"cached_tokens":40}}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[0])
		answers = answers[1:]
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

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
		params := openai.ChatCompletionNewParams{Model: "gpt-test"}
		if err := nousopenai.FillChat(&params, c); err != nil {
			panic(err)
		}
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			panic(err)
		}
		m, usage, err := nousopenai.ChatMessage(resp)
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
	fmt.Printf("requests %d, tool calls %d, input %d, output %d, cache read %d\n", u.Requests, u.ToolCalls, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens)
	// Output:
	// user      What's the weather in Paris?
	// assistant [get_weather {"city":"Paris"}]
	// tool      18°C, sunny in Paris
	// assistant It is 18°C and sunny in Paris.
	// requests 2, tool calls 1, input 140, output 32, cache read 40
}

func calls(m nous.Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return fmt.Sprintf("[%s %s]", m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
}

// A tool loop through the SDK's Responses API with Store false: the model
// reasons, then calls a tool; its reasoning item goes back with its
// encrypted content right before the call it led to, and the call with its
// item ID. A runtime that drops the thinking part sends the call without
// its item ID, which the API takes (it refuses the ID without its
// reasoning item). The API is a fake one that prints the items of each
// request.
func ExampleFillResponses() {
	answers := []string{
		`{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[
		  {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
		  {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}],
		  "usage":{"input_tokens":50,"output_tokens":80,"total_tokens":130,"output_tokens_details":{"reasoning_tokens":60}}}`,
		`{"id":"resp_2","object":"response","created_at":2,"model":"gpt-test","status":"completed","output":[
		  {"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"18°C and sunny.","annotations":[]}]}],
		  "usage":{"input_tokens":150,"output_tokens":8,"total_tokens":158}}`,
		`{"id":"resp_3","object":"response","created_at":3,"model":"gpt-test","status":"completed","output":[
		  {"type":"message","id":"msg_3","role":"assistant","status":"completed","content":[{"type":"output_text","text":"You're welcome.","annotations":[]}]}],
		  "usage":{"input_tokens":170,"output_tokens":4,"total_tokens":174}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []struct{ Type, ID, Role string } `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		var items []string
		for _, it := range req.Input {
			items = append(items, strings.Join(strings.Fields(it.Type+" "+it.ID+" "+it.Role), " "))
		}
		fmt.Println("request:", strings.Join(items, ", "))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[0])
		answers = answers[1:]
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	ctx := context.Background()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		panic(err)
	}
	send := func() nous.Message {
		params := responses.ResponseNewParams{Model: "gpt-test", Store: openai.Bool(false),
			Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}
		if err := nousopenai.FillResponses(&params, c); err != nil {
			panic(err)
		}
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			panic(err)
		}
		m, usage, err := nousopenai.ResponseMessage(resp)
		c.AddUsage(usage)
		if err != nil {
			panic(err)
		}
		if err := c.AddMessage(m); err != nil {
			panic(err)
		}
		return m
	}
	m := send()
	if err := c.AddMessage(nous.ToolMessage(m.ToolCalls[0].ID, m.ToolCalls[0].Name, "18°C, sunny")); err != nil {
		panic(err)
	}
	fmt.Println("answer:", send().Content)

	// The runtime drops the thinking of the first turn.
	m.Parts = nil
	if err := c.ReplaceMessage(1, m); err != nil {
		panic(err)
	}
	if err := c.AddMessage(nous.UserMessage("Thanks!")); err != nil {
		panic(err)
	}
	fmt.Println("answer:", send().Content)
	// Output:
	// request: user
	// request: user, reasoning rs_1, function_call fc_1, function_call_output
	// answer: 18°C and sunny.
	// request: user, function_call, function_call_output, message msg_2 assistant, user
	// answer: You're welcome.
}

// A conversation compacted with a summary a model writes through Chat
// Completions: the older turns go, a user message with the summary takes
// their place, and the summarizer's tokens count in the context's usage.
// The API is a fake one that prints what the summarizer sends.
func ExampleNewChatSummarizer() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		fmt.Printf("request: model %s, %s message the default prompt: %t\n", req.Model, req.Messages[0].Role, req.Messages[0].Content == nous.DefaultSummaryPrompt)
		fmt.Printf("%s message:\n%s\n", req.Messages[1].Role, req.Messages[1].Content)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",
		  "message":{"role":"assistant","content":"The user plans a trip to Paris in May; the hotel is booked for May 3-10.","refusal":null}}],
		  "usage":{"prompt_tokens":230,"completion_tokens":18,"total_tokens":248}}`)
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	c := nous.NewContext()
	if err := c.AddMessages(
		nous.UserMessage("I am planning a trip to Paris in May, from the 3rd to the 10th. Please book a hotel near the Louvre, under 200 euros a night, with breakfast."),
		nous.AssistantMessage("Done: I booked the Hotel du Louvre for May 3-10, at 180 euros a night, breakfast included. The confirmation was sent to your email."),
		nous.UserMessage("What should I pack?"),
	); err != nil {
		panic(err)
	}
	s := nousopenai.NewChatSummarizer(client, openai.ChatCompletionNewParams{Model: "gpt-test"})
	if _, err := c.Compact(context.Background(), 60, nous.WithSummarizer(s), nous.WithSummaryReserve(30)); err != nil {
		panic(err)
	}
	fmt.Println("after:")
	for _, m := range c.All() {
		fmt.Printf("%s: %q\n", m.Role, m.Content)
	}
	u := c.Usage
	fmt.Printf("requests %d, input %d, output %d\n", u.Requests, u.InputTokens, u.OutputTokens)
	// Output:
	// request: model gpt-test, system message the default prompt: true
	// user message:
	// [user]
	// I am planning a trip to Paris in May, from the 3rd to the 10th. Please book a hotel near the Louvre, under 200 euros a night, with breakfast.
	//
	// [assistant]
	// Done: I booked the Hotel du Louvre for May 3-10, at 180 euros a night, breakfast included. The confirmation was sent to your email.
	// after:
	// user: "Summary of the earlier conversation:\n\nThe user plans a trip to Paris in May; the hotel is booked for May 3-10."
	// user: "What should I pack?"
	// requests 1, input 230, output 18
}
