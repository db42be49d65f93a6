package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

func weather(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args struct{ City string }
	if err := rc.Call.ParseArguments(&args); err != nil {
		return nous.ToolResult{Err: err}
	}
	return nous.ToolResult{Content: "18°C in " + args.City}
}

var paris = nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}

// A tool loop against a scripted model: the model calls a tool, then
// answers; the test reads what the agent sent.
func Example() {
	model := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []nous.ToolCall{paris}, Usage: nous.Usage{InputTokens: 50, OutputTokens: 10}},
		openaitest.Reply{Text: "It is 18°C in Paris.", Usage: nous.Usage{InputTokens: 70, OutputTokens: 8}})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("Weather in Paris?"))
	for {
		m, err := nousopenai.SendChat(ctx, client, openai.ChatCompletionNewParams{Model: "gpt-test"}, c)
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(m.ToolCalls) == 0 {
			break
		}
		c.RunToolCalls(ctx, m.ToolCalls, weather)
	}
	last, _ := c.LastMessage()
	fmt.Println(last.Content, c.Usage.InputTokens, c.Usage.OutputTokens)
	fmt.Println(strings.Contains(string(model.Requests()[1]), `"content":"18°C in Paris"`))
	// Output:
	// It is 18°C in Paris. 120 18
	// true
}

// The Responses API gets its items (reasoning with encrypted content, a
// message, calls), a scripted error is the API's error, and a request past
// the script is an error too.
func TestServer(t *testing.T) {
	model := openaitest.NewServer(
		openaitest.Reply{Reasoning: "look it up", ToolCalls: []nous.ToolCall{paris}, Usage: nous.Usage{InputTokens: 5, OutputTokens: 40, ReasoningTokens: 30}},
		openaitest.Reply{Status: 429, Error: "slow down"})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	params := responses.ResponseNewParams{Model: "gpt-test"}
	if err := nousopenai.FillResponses(&params, c); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	m, usage, err := nousopenai.ResponseMessage(resp)
	if err != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_1" || usage.ReasoningTokens != 30 || len(m.Parts) == 0 {
		t.Fatalf("the reply read back: %+v, %+v, %v", m, usage, err)
	}
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-test"})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Message != "slow down" {
		t.Fatalf("a scripted error: %v", err)
	}
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-test"}); !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("past the script: %v", err)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("%d requests kept, want 3", n)
	}
}

// A model that answers from what it is sent: each reply counts the
// messages of its request, and n counts the requests.
func TestServerFunc(t *testing.T) {
	var ns []int
	model := openaitest.NewServerFunc(func(n int, request []byte) openaitest.Reply {
		ns = append(ns, n)
		var req struct{ Messages []json.RawMessage }
		if err := json.Unmarshal(request, &req); err != nil {
			return openaitest.Reply{Status: 400, Error: err.Error()}
		}
		return openaitest.Reply{Text: fmt.Sprint(len(req.Messages), " messages")}
	})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	for _, want := range []string{"1 messages", "3 messages"} {
		if err := c.AddMessage(nous.UserMessage("hi")); err != nil {
			t.Fatal(err)
		}
		params := openai.ChatCompletionNewParams{Model: "gpt-test"}
		if err := nousopenai.FillChat(&params, c); err != nil {
			t.Fatal(err)
		}
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := nousopenai.ChatMessage(resp)
		if err != nil || m.Content != want {
			t.Fatalf("got %q, %v; want %q", m.Content, err, want)
		}
		if err := c.AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(ns) != "[0 1]" || len(model.Requests()) != 2 {
		t.Fatalf("n was %v, %d requests kept", ns, len(model.Requests()))
	}
}
