// Command adk runs Google's Agent Development Kit's runner on sessions a
// nous file store keeps: an agent with one tool answers two turns, the
// process "restarts" (the store is closed and opened again, the service
// and the runner made anew), and a third turn's model sees the first two.
// Its model is a scripted model.LLM, so it needs no network and no key.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"os"
	"regexp"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/filestore"
)

func main() {
	dir := flag.String("dir", "", "the file store's directory (a new temporary one by default)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "nous-adk")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	if err := run(context.Background(), *dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run runs two turns in one "process" and a third in the next.
func run(ctx context.Context, dir string, out io.Writer) error {
	for process, questions := range [][]string{{"What's the weather in Paris?", "And in Rome?"}, {"Which cities did I ask about?"}} {
		fmt.Fprintf(out, "== process %d\n", process+1)
		if err := serve(ctx, dir, questions, out); err != nil {
			return err
		}
	}
	return nil
}

// serve is one process: the store opened, ADK's runner on a session
// service over it, the questions asked in the session "chat-1", the store
// closed.
func serve(ctx context.Context, dir string, questions []string, out io.Writer) error {
	store, err := filestore.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	weather, err := functiontool.New(functiontool.Config{Name: "get_weather", Description: "The weather in a city."},
		func(ctx agent.Context, args struct {
			City string `json:"city"`
		}) (map[string]string, error) {
			return map[string]string{"forecast": forecasts[args.City]}, nil
		})
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{Name: "weather", Model: scripted{}, Instruction: "Answer about the weather.", Tools: []tool.Tool{weather}})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "weather-app", Agent: a, SessionService: nousadk.NewSessionService(store), AutoCreateSession: true})
	if err != nil {
		return err
	}
	for _, q := range questions {
		fmt.Fprintf(out, "> %s\n", q)
		for ev, err := range r.Run(ctx, "ann", "chat-1", genai.NewContentFromText(q, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
			if ev.Content != nil {
				for _, p := range ev.Content.Parts {
					switch {
					case p.FunctionCall != nil:
						fmt.Fprintf(out, "  %s calls %s(%v)\n", ev.Author, p.FunctionCall.Name, p.FunctionCall.Args)
					case p.FunctionResponse != nil:
						fmt.Fprintf(out, "  %s returns %v\n", p.FunctionResponse.Name, p.FunctionResponse.Response)
					case p.Text != "":
						fmt.Fprintf(out, "  %s: %s\n", ev.Author, p.Text)
					}
				}
			}
		}
	}
	return nil
}

var forecasts = map[string]string{"Paris": "18°C, sunny", "Rome": "24°C, clear"}

// scripted is the model: it calls get_weather for a city the user names,
// puts a forecast in a sentence, and, asked which cities, names those of
// the whole conversation it is sent.
type scripted struct{}

func (scripted) Name() string { return "scripted" }

var cities = regexp.MustCompile(`Paris|Rome`)

func (scripted) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		last := req.Contents[len(req.Contents)-1]
		var reply *genai.Content
		switch p := last.Parts[0]; {
		case p.FunctionResponse != nil:
			reply = genai.NewContentFromText(fmt.Sprintf("It is %v.", p.FunctionResponse.Response["forecast"]), genai.RoleModel)
		case strings.Contains(p.Text, "Which cities"):
			var seen []string
			for _, c := range req.Contents {
				for _, p := range c.Parts {
					if c.Role == genai.RoleUser && p.Text != "" {
						seen = append(seen, cities.FindAllString(p.Text, -1)...)
					}
				}
			}
			reply = genai.NewContentFromText(fmt.Sprintf("You asked about %s (%d messages of history).", strings.Join(seen, " and "), len(req.Contents)), genai.RoleModel)
		default:
			reply = genai.NewContentFromFunctionCall("get_weather", map[string]any{"city": cities.FindString(p.Text)}, genai.RoleModel)
		}
		yield(&model.LLMResponse{Content: reply, TurnComplete: true}, nil)
	}
}
