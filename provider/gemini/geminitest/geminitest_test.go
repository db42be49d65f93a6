package geminitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
)

func weather(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args struct{ City string }
	if err := rc.Call.ParseArguments(&args); err != nil {
		return nous.ToolResult{Err: err}
	}
	return nous.ToolResult{Content: "18°C in " + args.City}
}

var paris = nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}

// A tool loop against a scripted model: the model calls a tool, signed,
// then answers; the signature goes back on the call.
func Example() {
	model := geminitest.NewServer(
		geminitest.Reply{ToolCalls: []nous.ToolCall{paris}, Usage: nous.Usage{InputTokens: 50, OutputTokens: 10}},
		geminitest.Reply{Text: "It is 18°C in Paris.", Usage: nous.Usage{InputTokens: 70, OutputTokens: 8}})
	defer model.Close()
	ctx := context.Background()
	client, _ := model.Client(ctx)
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("Weather in Paris?"))
	for {
		m, err := nousgemini.Send(ctx, client, nousgemini.Params{Model: "gemini-test"}, c)
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
	fmt.Println(strings.Contains(string(model.Requests()[1]), `"thoughtSignature"`))
	// Output:
	// It is 18°C in Paris. 120 18
	// true
}

// Thoughts and cached tokens are counted, a scripted error is the API's
// error, and a request past the script is an error too.
func TestServer(t *testing.T) {
	model := geminitest.NewServer(
		geminitest.Reply{Thought: "hm", Text: "hi", Usage: nous.Usage{InputTokens: 100, CacheReadInputTokens: 60, OutputTokens: 30, ReasoningTokens: 20}},
		geminitest.Reply{Status: 503, Error: "unavailable"})
	defer model.Close()
	ctx := context.Background()
	client, err := model.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	contents := []*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)}
	resp, err := client.Models.GenerateContent(ctx, "gemini-test", contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, usage, err := nousgemini.Message(resp)
	if err != nil || len(m.Parts) != 2 || m.Parts[0].Type != nous.PartThinking || m.Parts[1].Content != "hi" || usage.InputTokens != 100 || usage.CacheReadInputTokens != 60 || usage.OutputTokens != 30 || usage.ReasoningTokens != 20 {
		t.Fatalf("the reply read back: %+v, %+v, %v", m, usage, err)
	}
	var apiErr genai.APIError
	if _, err := client.Models.GenerateContent(ctx, "gemini-test", contents, nil); !errors.As(err, &apiErr) || apiErr.Code != 503 {
		t.Fatalf("a scripted error: %v", err)
	}
	if _, err := client.Models.GenerateContent(ctx, "gemini-test", contents, nil); !errors.As(err, &apiErr) || apiErr.Code != 500 {
		t.Fatalf("past the script: %v", err)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("%d requests kept, want 3", n)
	}
}

// A model that answers from what it is sent: each reply counts the
// contents of its request, and n counts the requests.
func TestServerFunc(t *testing.T) {
	var ns []int
	model := geminitest.NewServerFunc(func(n int, request []byte) geminitest.Reply {
		ns = append(ns, n)
		var req struct{ Contents []json.RawMessage }
		if err := json.Unmarshal(request, &req); err != nil {
			return geminitest.Reply{Status: 400, Error: err.Error()}
		}
		return geminitest.Reply{Text: fmt.Sprint(len(req.Contents), " contents")}
	})
	defer model.Close()
	ctx := context.Background()
	client, err := model.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := nous.NewContext()
	for _, want := range []string{"1 contents", "3 contents"} {
		if err := c.AddMessage(nous.UserMessage("hi")); err != nil {
			t.Fatal(err)
		}
		params := nousgemini.Params{Model: "gemini-test", Config: &genai.GenerateContentConfig{}}
		if err := nousgemini.Fill(&params, c); err != nil {
			t.Fatal(err)
		}
		resp, err := client.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := nousgemini.Message(resp)
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
