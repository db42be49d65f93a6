package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
)

// fakeAPI returns a client of a fake Messages API on a local server that
// answers each request with the next of answers, and the bodies it got.
func fakeAPI(answers ...string) (anthropic.Client, *[][]byte, func()) {
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[0])
		answers = answers[1:]
	}))
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0)), &bodies, srv.Close
}

// A full tool loop through the SDK: the model calls a tool, the runtime
// runs it and sends the result, the model answers. Each request fills a
// fresh copy of the base params.
func Example() {
	client, _, done := fakeAPI(
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use",
		  "content":[{"type":"thinking","thinking":"I need the weather.","signature":"c2ln"},
		             {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
		  "usage":{"input_tokens":50,"output_tokens":20}}`,
		`{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		  "content":[{"type":"text","text":"It is 18°C and sunny in Paris."}],
		  "usage":{"input_tokens":90,"output_tokens":12,"cache_read_input_tokens":40}}`,
	)
	defer done()

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
	base := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096,
		Thinking: anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}}
	for {
		params := base // Fill may turn thinking off for one request: the next starts from base
		if err := nousanthropic.Fill(&params, c); err != nil {
			panic(err)
		}
		resp, err := client.Messages.New(ctx, params)
		if err != nil {
			panic(err)
		}
		m, usage, err := nousanthropic.Message(resp)
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
	// requests 2, tool calls 1, input 180, output 32, cache read 40
}

func calls(m nous.Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return fmt.Sprintf("[%s %s]", m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
}

// A conversation that began on an OpenAI-compatible server, which numbers
// calls per turn and whose model cut its arguments short, goes on with
// Anthropic in the middle of its tool loop: the calls go with IDs of their
// own, unique in the request; the arguments as an object that shows what
// the model sent; and, the turn having begun without Anthropic's thinking,
// this request with thinking off. The log keeps what came.
func Example_switchProvider() {
	client, bodies, done := fakeAPI(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		"content":[{"type":"text","text":"Paris is 18°C; I could not read the city of the second call."}],"usage":{"input_tokens":90,"output_tokens":12}}`)
	defer done()

	c := nous.NewContext()
	first := nous.ToolCall{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	second := nous.ToolCall{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Ly`)}
	err := c.AddMessages(nous.UserMessage("Weather in Paris and Lyon?"),
		nous.AssistantMessage("", first), nous.ToolMessage("call_0", "get_weather", "18°C"),
		nous.AssistantMessage("", second), nous.ToolErrorMessage("call_0", "get_weather", "arguments are not JSON"))
	if err != nil {
		panic(err)
	}
	base := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096,
		Thinking: anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}}
	params := base
	if err := nousanthropic.Fill(&params, c); err != nil {
		panic(err)
	}
	if _, err := client.Messages.New(context.Background(), params); err != nil {
		panic(err)
	}
	var sent struct {
		Thinking struct{ Type string }
		Messages []struct {
			Content []struct {
				Type, ID  string
				ToolUseID string `json:"tool_use_id"`
				Input     json.RawMessage
			}
		}
	}
	if err := json.Unmarshal((*bodies)[0], &sent); err != nil {
		panic(err)
	}
	for _, m := range sent.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				fmt.Printf("tool_use    %s %s\n", b.ID, b.Input)
			case "tool_result":
				fmt.Printf("tool_result %s\n", b.ToolUseID)
			}
		}
	}
	mine, _ := json.Marshal(base.Thinking)
	fmt.Printf("thinking %s for this request; base stays %s\n", sent.Thinking.Type, mine)
	fmt.Println("the log's second call:", c.Messages()[3].ToolCalls[0].ID, string(c.Messages()[3].ToolCalls[0].Arguments))
	// Output:
	// tool_use    call_0 {"city":"Paris"}
	// tool_result call_0
	// tool_use    call_0_2 {"invalid_arguments":"{\"city\": \"Ly"}
	// tool_result call_0_2
	// thinking disabled for this request; base stays {"type":"adaptive"}
	// the log's second call: call_0 {"city": "Ly
}

// Thinking a runtime recorded itself (its own event store, not Message)
// goes back to the API with ThinkingPart, as the block it was.
func ExampleThinkingPart() {
	client, bodies, done := fakeAPI(`{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		"content":[{"type":"text","text":"It is 18°C."}],"usage":{"input_tokens":9,"output_tokens":3}}`)
	defer done()

	call := nous.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	turn := nous.AssistantMessage("", call)
	turn.Parts = []nous.ContentPart{nousanthropic.ThinkingPart("I need the weather.", "EqQBCkYIARgC")} // as the stream gave them
	c := nous.NewContext()
	if err := c.AddMessages(nous.UserMessage("Weather in Paris?"), turn, nous.ToolMessage("toolu_1", "get_weather", "18°C")); err != nil {
		panic(err)
	}
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096,
		Thinking: anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}}
	if err := nousanthropic.Fill(&params, c); err != nil {
		panic(err)
	}
	if _, err := client.Messages.New(context.Background(), params); err != nil {
		panic(err)
	}
	var sent struct {
		Thinking struct{ Type string }
		Messages []struct{ Content []map[string]any }
	}
	if err := json.Unmarshal((*bodies)[0], &sent); err != nil {
		panic(err)
	}
	b := sent.Messages[1].Content[0]
	fmt.Println(b["type"], b["thinking"], b["signature"], "; thinking", sent.Thinking.Type)
	// Output:
	// thinking I need the weather. EqQBCkYIARgC ; thinking adaptive
}

// A conversation compacted with a summary Claude writes: the summarizer's
// request is the transcript of the range under the summary prompt, the
// summary a user message, and the call's tokens count in c.Usage.
func ExampleNewSummarizer() {
	client, bodies, done := fakeAPI(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		"content":[{"type":"text","text":"The user is planning a trip to Paris in May; the assistant suggested the Louvre."}],
		"usage":{"input_tokens":120,"output_tokens":18}}`)
	defer done()

	c := nous.NewContext(nous.WithSystemPrompt("You are a travel assistant."))
	err := c.AddMessages(
		nous.UserMessage("I am going to Paris in May. "+strings.Repeat("I like museums. ", 40)),
		nous.AssistantMessage("Then see the Louvre. "+strings.Repeat("It is large. ", 40)),
		nous.UserMessage("Where should I eat?"))
	if err != nil {
		panic(err)
	}
	c.AddUsage(nous.Usage{Requests: 1, InputTokens: 300, OutputTokens: 90, TotalTokens: 390}) // the run's turns so far

	s := nousanthropic.NewSummarizer(client, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024})
	if _, err := c.Compact(context.Background(), 100, nous.WithSummarizer(s), nous.WithSummaryReserve(50)); err != nil {
		panic(err)
	}
	var sent struct {
		System   []struct{ Text string }
		Messages []struct {
			Role    string
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal((*bodies)[0], &sent); err != nil {
		panic(err)
	}
	first, _, _ := strings.Cut(sent.Messages[0].Content[0].Text, "\n\n")
	fmt.Printf("sent: the default prompt %v; %d %s message, %.40q...\n",
		sent.System[0].Text == nous.DefaultSummaryPrompt, len(sent.Messages), sent.Messages[0].Role, first)
	for _, m := range c.Messages() {
		fmt.Printf("%-4s %q\n", m.Role, m.Content)
	}
	u := c.Usage
	fmt.Printf("requests %d, input %d, output %d\n", u.Requests, u.InputTokens, u.OutputTokens) // the summary's 120 and 18 counted
	// Output:
	// sent: the default prompt true; 1 user message, "[user]\nI am going to Paris in May. I lik"...
	// user "Summary of the earlier conversation:\n\nThe user is planning a trip to Paris in May; the assistant suggested the Louvre."
	// user "Where should I eat?"
	// requests 2, input 420, output 108
}

// A tool loop on streamed replies: the context's callbacks show the reply
// as it comes (c.EmitDelta routes each delta to them), and each reply,
// once whole, is in the context as Send would have put it. A reply cut
// short is returned with ErrInterrupted; the caller may add what came.
func ExampleStream() {
	call := nous.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	model := anthropictest.NewServer(
		anthropictest.Reply{Thinking: "Look it up.", ToolCalls: []nous.ToolCall{call}, Usage: nous.Usage{InputTokens: 50, OutputTokens: 10}},
		anthropictest.Reply{Text: "It is 18°C in Paris.", Usage: nous.Usage{InputTokens: 70, OutputTokens: 8}},
		anthropictest.Reply{Frames: cut(4)})
	defer model.Close()
	client, ctx := model.Client(), context.Background()
	c := nous.NewContext()
	c.Callbacks = map[string]nous.Callback{
		nous.CallbackLLMNewDelta:         func(_ string, text any) { fmt.Printf("text %q\n", text) },
		nous.CallbackLLMNewThinkingDelta: func(_ string, text any) { fmt.Printf("thinking %q\n", text) },
		nous.CallbackToolCallDelta: func(_ string, d any) {
			fmt.Printf("call %d %s %q\n", d.(nous.Delta).Index, d.(nous.Delta).ToolName, d.(nous.Delta).Text)
		},
	}
	base := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}
	c.AddMessage(nous.UserMessage("Weather in Paris?"))
	for {
		m, err := nousanthropic.Stream(ctx, client, base, c, c.EmitDelta)
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(m.ToolCalls) == 0 {
			break
		}
		c.RunToolCalls(ctx, m.ToolCalls, func(context.Context, nous.RunContext) nous.ToolResult {
			return nous.ToolResult{Content: "18°C"}
		})
	}
	fmt.Println(c.Len(), "messages;", c.Usage.InputTokens, "input tokens,", c.Usage.OutputTokens, "output")

	c.AddMessage(nous.UserMessage("And tomorrow?"))
	m, err := nousanthropic.Stream(ctx, client, base, c, nil)
	fmt.Println(errors.Is(err, nous.ErrInterrupted), m.Interrupted(), m.Content)
	if m.Role != "" {
		c.AddMessage(m) // what came, which the next request sends
	}
	// Output:
	// thinking "Look"
	// thinking " it"
	// thinking " up."
	// call 0 get_weather ""
	// call 0 get_weather "{\"city\":"
	// call 0 get_weather "\"Paris\"}"
	// text "It"
	// text " is"
	// text " 18°C"
	// text " in"
	// text " Paris."
	// 4 messages; 120 input tokens, 18 output
	// true true It will
}

// cut returns the first n events of a streamed reply.
func cut(n int) []string {
	return []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":90,"output_tokens":1}}}` + "\n\n",
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"It"}}` + "\n\n",
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" will"}}` + "\n\n",
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" rain tomorrow."}}` + "\n\n",
	}[:n]
}
