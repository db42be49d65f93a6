package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// A streamed Chat reply: its text reaches the context's callback as it
// comes, then the whole message and its usage are in the context.
func ExampleStreamChat() {
	model := openaitest.NewServer(openaitest.Reply{Text: "It is 18°C in Paris.", Usage: nous.Usage{InputTokens: 12, OutputTokens: 7}})
	defer model.Close()
	c := nous.NewContext()
	c.Callbacks = map[string]nous.Callback{
		nous.CallbackLLMNewDelta: func(_ string, text any) { fmt.Printf("[%s]", text) },
	}
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		panic(err)
	}
	m, err := nousopenai.StreamChat(context.Background(), model.Client(), openai.ChatCompletionNewParams{Model: "gpt-test"}, c, c.EmitDelta)
	if err != nil {
		panic(err)
	}
	fmt.Println()
	fmt.Println(m.Content, c.Len(), c.Usage.InputTokens, c.Usage.OutputTokens)
	// Output:
	// [It ][is ][18°C ][in ][Paris.]
	// It is 18°C in Paris. 2 12 7
}

// A streamed Responses reply the user stops halfway: the text so far comes
// back marked interrupted, without the call that was on its way, for the
// caller to add.
func ExampleStreamResponses() {
	call := nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	model := openaitest.NewServerFunc(func(int, []byte) openaitest.Reply {
		return openaitest.Reply{Text: "Let me check.", ToolCalls: []nous.ToolCall{call}}
	})
	defer model.Close()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("Weather in Paris?")); err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	onDelta := func(d nous.Delta) {
		if d.Kind == nous.DeltaToolCall {
			fmt.Printf("call %d %s %s %q\n", d.Index, d.ToolCallID, d.ToolName, d.Text)
			if d.Text != "" {
				stop() // the user stops the reply: the call is not run
			}
		}
	}
	m, err := nousopenai.StreamResponses(ctx, model.Client(), responses.ResponseNewParams{Model: "gpt-test"}, c, onDelta)
	fmt.Println(errors.Is(err, nous.ErrInterrupted), m.Interrupted(), m.Content, len(m.ToolCalls))
	if m.Role != "" {
		if err := c.AddMessage(m); err != nil {
			panic(err)
		}
	}
	fmt.Println(c.Len(), c.Usage.Requests, c.CheckToolPairing() == nil)
	// Output:
	// call 0 call_1 get_weather ""
	// call 0 call_1 get_weather "{\"city\":\"Paris\"}"
	// true true Let me check. 0
	// 2 1 true
}
