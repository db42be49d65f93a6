// Command quickstart is the agent to copy: a tool loop on OpenAI's Chat
// Completions through openai-go, with parallel tool calls, compaction by
// the model's own summary, and a session kept in a file store by name, so
// that a second run resumes the first's. Its model is a local fake
// (openaitest), so it runs with no network and no key; a real agent makes
// its client with openai.NewClient() instead, and the rest stays as it is.
//
// The agent is traced through OpenTelemetry's global tracer provider,
// which records nothing until the application sets one: with -trace,
// the run's spans (a turn, each model call, each tool call) are printed
// to stdout as OpenTelemetry's stdout exporter writes them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	nousotel "github.com/nous-go/nous/otel"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "nous-quickstart"), "the file store's directory")
	trace := flag.Bool("trace", false, "print the run's OpenTelemetry spans to stdout")
	flag.Parse()
	if *trace {
		exporter, err := stdouttrace.New(stdouttrace.WithPrettyPrint())
		if err != nil {
			log.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
		defer tp.Shutdown(context.Background())
		otel.SetTracerProvider(tp)
	}
	model := openaitest.NewServerFunc(fakeModel)
	defer model.Close()
	if err := run(context.Background(), model.Client(), *dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The glue: everything between nous and a working agent.
// glue:begin

// budget is what the view may hold, in tokens, the summary's share
// included. A real agent's is its model's context window less the reply,
// with the default share; these are tiny, so that the second turn
// compacts the first.
const budget, summaryShare = 120, 40

// run resumes the session, or starts it, and runs its turns, saving each.
func run(ctx context.Context, client openai.Client, dir string, out io.Writer) error {
	tools, err := nousopenai.ChatTools(weatherTool)
	if err != nil {
		return err
	}
	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_4Mini, Tools: tools}
	summarizer := nousopenai.NewChatSummarizer(client, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_4Mini})
	compact := []nous.CompactOption{nous.WithSummarizer(summarizer), nous.WithSummaryReserve(summaryShare)}
	store, err := filestore.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	c, resumed, err := nous.Resume(ctx, store, "weather-demo",
		nous.WithSystemPrompt("You are a concise weather assistant."),
		nous.WithDeps(map[string]any{"weather_api_key": os.Getenv("WEATHER_API_KEY")}))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "session %q: resumed %v, %d messages\n", c.Log().Name(), resumed, c.Len())
	defer nousotel.NewTracer(nil, nousotel.WithAgentName("weather")).Observe(ctx, c)() // spans to the global provider

	// turn adds the user's question and calls the model until it answers,
	// running the tools it asks for, all at once.
	turn := func(question string) error {
		fmt.Fprintln(out, ">", question)
		c.PatchDanglingToolCalls() // a run that died between a call and its result
		if err := c.AddMessage(nous.UserMessage(question)); err != nil {
			return err
		}
		for c.Iteration = 0; !c.MaxIterationsReached(); c.IncrementIteration() {
			plan, err := c.Compact(ctx, budget, compact...)
			if err != nil {
				return err
			}
			reply, err := nousopenai.SendChat(ctx, client, params, c)
			if err != nil {
				return err
			}
			report(out, plan, reply)
			if len(reply.ToolCalls) == 0 {
				return nil
			}
			if err := c.RunToolCalls(ctx, reply.ToolCalls, getWeather); err != nil {
				return err
			}
		}
		return fmt.Errorf("no answer to %q after %d model calls", question, c.MaxIterations)
	}
	for _, question := range questions(resumed) {
		if err := turn(question); err != nil {
			return err
		}
		if err := c.Save(ctx, store); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "saved: %d events, %d requests, %d tokens; run again to resume\n", c.Log().Len(), c.Usage.Requests, c.Usage.TotalTokens)
	return nil
}

// glue:end

// weatherTool is the tool as the model sees it: its arguments' schema is
// made from weatherArgs.
var weatherTool = must(nous.NewTool("get_weather", "The current weather in a city.", weatherArgs{}))

type weatherArgs struct {
	City string `json:"city" description:"The city's name, in English."`
}

// getWeather runs one call of get_weather, beside the turn's other calls:
// it reads its snapshot of the context and returns its result and an
// update, never touching the context itself.
func getWeather(ctx context.Context, rc nous.RunContext) nous.ToolResult {
	var args weatherArgs
	if err := rc.Call.ParseArguments(&args); err != nil {
		return nous.ToolResult{Err: err}
	}
	// A real tool calls its weather API here, with the key of
	// rc.Deps["weather_api_key"], which the session's file never holds.
	forecast, ok := forecasts[args.City]
	if !ok {
		return nous.ToolResult{Err: fmt.Errorf("no forecast for %q", args.City)}
	}
	return nous.ToolResult{
		Content: args.City + ": " + forecast,
		Update:  nous.NewContextUpdate().Append("cities_checked", args.City),
	}
}

var forecasts = map[string]string{"Paris": "18°C, sunny", "Rome": "24°C, clear", "Oslo": "-2°C, snow", "Lisbon": "21°C, windy"}

// questions are the user's: two turns in a new session, one more in a
// resumed one.
func questions(resumed bool) []string {
	if resumed {
		return []string{"And in Lisbon?"}
	}
	return []string{"What's the weather in Paris and in Rome?", "And in Oslo?"}
}

// report prints what a model call did: the compaction before it, and the
// reply.
func report(out io.Writer, plan nous.CompactPlan, reply nous.Message) {
	if len(plan.Dropped) > 0 {
		fmt.Fprintf(out, "  (%d messages compacted into a summary)\n", len(plan.Dropped))
	}
	if len(reply.ToolCalls) > 0 {
		fmt.Fprintf(out, "  model: calls %d tools at once\n", len(reply.ToolCalls))
		return
	}
	fmt.Fprintf(out, "  model: %s\n", reply.Text())
}

// fakeModel plays the model from the request it is sent: a request with
// no tools is the summarizer's, one that ends with tool results gets them
// put in a sentence, and a question gets one call per city it names.
func fakeModel(n int, request []byte) openaitest.Reply {
	var req struct {
		Tools    []json.RawMessage
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(request, &req); err != nil || len(req.Messages) == 0 {
		return openaitest.Reply{Status: 400, Error: "the fake model cannot read this request"}
	}
	usage := nous.Usage{InputTokens: len(request) / 4, OutputTokens: 20}
	if len(req.Tools) == 0 {
		return openaitest.Reply{Text: "Summary: " + strings.Join(cities.FindAllString(string(request), -1), ", ") + " were looked up.", Usage: usage}
	}
	var results []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		var s string
		json.Unmarshal(req.Messages[i].Content, &s)
		results = append([]string{s}, results...)
	}
	if len(results) > 0 {
		return openaitest.Reply{Text: strings.Join(results, "; ") + ".", Usage: usage}
	}
	var calls []nous.ToolCall
	for i, city := range cities.FindAllString(string(req.Messages[len(req.Messages)-1].Content), -1) {
		args, _ := json.Marshal(weatherArgs{City: city})
		calls = append(calls, nous.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, i), Name: "get_weather", Arguments: args})
	}
	if len(calls) == 0 {
		return openaitest.Reply{Text: "Ask me about a city's weather.", Usage: usage}
	}
	return openaitest.Reply{ToolCalls: calls, Usage: usage}
}

var cities = regexp.MustCompile(`Paris|Rome|Oslo|Lisbon`)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
