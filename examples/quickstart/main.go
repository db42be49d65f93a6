// Command quickstart is the agent to copy: a weather agent on any of four
// APIs (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini;
// -api says which) through their SDKs, run by nous's runner: replies
// streamed as they come (Ctrl-C stops the turn, and what streamed is
// saved), tools run in parallel that update the session's deps, a call
// that needs approval, compaction by the provider's own summary, tracing,
// and a session kept in a file store by name, which two writers drive at
// once and a second run resumes. Its models are local fakes, so it runs
// with no network and no key; a real agent makes its client as the SDK
// says (openai.NewClient(), ...) and the rest stays as it is.
//
// The agent is traced through OpenTelemetry's global tracer provider,
// which records nothing until the application sets one: with -trace, the
// run's spans are printed to stdout as OpenTelemetry's stdout exporter
// writes them.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
	"github.com/nous-go/nous/filestore"
	nousotel "github.com/nous-go/nous/otel"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "nous-quickstart"), "the file store's directory")
	apiName := flag.String("api", "chat", "the API: chat, responses, anthropic or gemini")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // Ctrl-C ends the turn; what streamed is saved
	defer stop()
	a, err := newAPI(*apiName)
	if err != nil {
		log.Fatal(err)
	}
	defer a.close()
	if err := run(ctx, a, *dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The glue: everything between nous and a working agent.
// glue:begin

// budget is what the view may hold, in tokens, the summary's share
// included. A real agent's is its model's context window less the reply,
// with the default share; these are tiny, so that the first run compacts.
const budget, summaryShare = 100, 30

// run runs the user's turns on the session "weather-demo", by two writers
// at once (two runners, as two processes would be), each turn saved step
// by step.
func run(ctx context.Context, a api, dir string, out io.Writer) error {
	store, err := filestore.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	tracer := nousotel.NewTracer(nil, nousotel.WithAgentName("weather"))
	var mu sync.Mutex // the two writers' output
	runner := func(name string) *agent.Runner {
		return &agent.Runner{Model: a.model, Tools: []agent.Tool{weatherTool}, Store: store, Stream: true,
			Options: []nous.Option{nous.WithSystemPrompt("You are a concise weather assistant."),
				nous.WithDeps(map[string]any{"weather_api_key": os.Getenv("WEATHER_API_KEY")})},
			Setup: func(c *nous.Context) {
				tracer.Observe(ctx, c) // on every context the runner loads: tracing survives reloads
				c.ApprovalHandler = func(call nous.ToolCall) (nous.ToolCall, bool) {
					say(&mu, out, name, "approved", string(call.Arguments))
					return call, true
				}
			},
			Compact: func(ctx context.Context, c *nous.Context) error {
				_, err := c.Compact(ctx, budget, nous.WithSummarizer(a.summarizer), nous.WithSummaryReserve(summaryShare))
				return err
			}}
	}
	return writers(ctx, out, &mu, store, runner)
}

// glue:end

// writers runs the two writers' questions at once, each on a runner of its
// own, and prints what each turn ended with. A second run has one more.
func writers(ctx context.Context, out io.Writer, mu *sync.Mutex, store nous.Store, runner func(name string) *agent.Runner) error {
	_, err := store.Lookup(ctx, "weather-demo")
	resumed := err == nil
	fmt.Fprintf(out, "session %q: resumed %v\n", "weather-demo", resumed)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for name, questions := range questions(resumed) {
		r := runner(name)
		wg.Go(func() {
			for _, q := range questions {
				turn, err := r.Run(ctx, "weather-demo", agent.Input{Key: name + ": " + q, Messages: []nous.Message{nous.UserMessage(q)}})
				if err != nil {
					errs <- fmt.Errorf("%s: %q: %w", name, q, err)
					return
				}
				say(mu, out, name, "> "+q, turn.Reply.Text())
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// say prints one line of a writer's.
func say(mu *sync.Mutex, out io.Writer, writer, what, text string) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "[%s] %s: %s\n", writer, what, text)
}

// questions are the user's, by writer: two of them, each with its own
// questions, in a new session; one more question in a resumed one (the
// store holds its file already).
func questions(resumed bool) map[string][]string {
	if resumed {
		return map[string][]string{"alice": {"And in Lisbon?"}}
	}
	return map[string][]string{"alice": {"What's the weather in Paris and in Rome?"}, "bob": {"And in Oslo?"}}
}

// weatherTool is the tool as the model sees it, its arguments' schema made
// from weatherArgs; a call for Oslo needs approval (its weather service
// bills each call), which the context's ApprovalHandler gives at once.
var weatherTool = func() agent.Tool {
	t, err := agent.NewTool("get_weather", "The current weather in a city.", getWeather)
	if err != nil {
		panic(err)
	}
	t.Approve = func(call nous.ToolCall) bool { return strings.Contains(string(call.Arguments), "Oslo") }
	return t
}()

type weatherArgs struct {
	City string `json:"city" description:"The city's name, in English."`
}

// getWeather runs one call of get_weather, beside the turn's other calls:
// it reads its snapshot of the context and returns its result and an
// update, never touching the context itself.
func getWeather(_ context.Context, rc nous.RunContext, args weatherArgs) (string, nous.ContextUpdate, error) {
	// A real tool calls its weather API here, with the key of
	// rc.Deps["weather_api_key"], which the session's file never holds.
	forecast, ok := forecasts[args.City]
	if !ok {
		return "", nous.ContextUpdate{}, fmt.Errorf("no forecast for %q", args.City)
	}
	return args.City + ": " + forecast, nous.NewContextUpdate().Append("cities_checked", args.City), nil
}

var forecasts = map[string]string{"Paris": "18°C, sunny", "Rome": "24°C, clear", "Oslo": "-2°C, snow", "Lisbon": "21°C, windy"}
