package anthropictest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
)

func weather(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args struct{ City string }
	if err := rc.Call.ParseArguments(&args); err != nil {
		return nous.ToolResult{Err: err}
	}
	return nous.ToolResult{Content: "18°C in " + args.City}
}

var paris = nous.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}

// A tool loop against a scripted model: the model thinks and calls a
// tool, then answers; its signed thinking goes back with the call.
func Example() {
	model := anthropictest.NewServer(
		anthropictest.Reply{Thinking: "Look it up.", ToolCalls: []nous.ToolCall{paris}, Usage: nous.Usage{InputTokens: 50, OutputTokens: 10}},
		anthropictest.Reply{Text: "It is 18°C in Paris.", Usage: nous.Usage{InputTokens: 70, OutputTokens: 8}})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("Weather in Paris?"))
	for {
		m, err := nousanthropic.Send(ctx, client, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}, c)
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
	fmt.Println(strings.Contains(string(model.Requests()[1]), `"signature":"scripted-signature-1"`))
	// Output:
	// It is 18°C in Paris. 120 18
	// true
}

// Cache reads count in the input, a scripted error is the API's error,
// and a request past the script is an error too.
func TestServer(t *testing.T) {
	model := anthropictest.NewServer(
		anthropictest.Reply{Text: "hi", Usage: nous.Usage{InputTokens: 100, CacheReadInputTokens: 60, OutputTokens: 2}},
		anthropictest.Reply{Status: 529, Error: "overloaded"})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}}
	resp, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	m, usage, err := nousanthropic.Message(resp)
	if err != nil || m.Content != "hi" || usage.InputTokens != 100 || usage.CacheReadInputTokens != 60 {
		t.Fatalf("the reply read back: %+v, %+v, %v", m, usage, err)
	}
	var apiErr *anthropic.Error
	if _, err := client.Messages.New(ctx, params); !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
		t.Fatalf("a scripted error: %v", err)
	}
	if _, err := client.Messages.New(ctx, params); !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
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
	model := anthropictest.NewServerFunc(func(n int, request []byte) anthropictest.Reply {
		ns = append(ns, n)
		var req struct{ Messages []json.RawMessage }
		if err := json.Unmarshal(request, &req); err != nil {
			return anthropictest.Reply{Status: 400, Error: err.Error()}
		}
		return anthropictest.Reply{Text: fmt.Sprint(len(req.Messages), " messages")}
	})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	for _, want := range []string{"1 messages", "3 messages"} {
		if err := c.AddMessage(nous.UserMessage("hi")); err != nil {
			t.Fatal(err)
		}
		params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 64}
		if err := nousanthropic.Fill(&params, c); err != nil {
			t.Fatal(err)
		}
		resp, err := client.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := nousanthropic.Message(resp)
		if err != nil || m.Text() != want {
			t.Fatalf("got %q, %v; want %q", m.Text(), err, want)
		}
		if err := c.AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(ns) != "[0 1]" || len(model.Requests()) != 2 {
		t.Fatalf("n was %v, %d requests kept", ns, len(model.Requests()))
	}
}
