package switchtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// api is a fake of the four APIs on one local server: each request's body
// is kept, and each answers with the answer set for its path.
type api struct {
	mu      sync.Mutex
	bodies  []string
	answers map[string]string // by the path's last element: "messages", "completions", "responses", "gemini-test:generateContent"
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bodies = append(a.bodies, string(body))
	path := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	answer, ok := a.answers[path]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"no answer for %s"}}`, r.URL.Path)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, answer)
}

func (a *api) lastBody() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return []byte(a.bodies[len(a.bodies)-1])
}

// A provider of the scenarios: it sends c through its SDK's real client
// and reads the answer back as its adapter does.
type provider struct {
	name  string
	path  string // the path the answer is set for
	check func(body []byte) string
	send  func(ctx context.Context, c *nous.Context) (nous.Message, nous.Usage, error)
}

func providers(t *testing.T, url string, n *counter) []provider {
	ctx := context.Background()
	ac := anthropic.NewClient(anthropicoption.WithBaseURL(url), anthropicoption.WithAPIKey("test"), anthropicoption.WithMaxRetries(0))
	oc := openai.NewClient(openaioption.WithBaseURL(url), openaioption.WithAPIKey("test"), openaioption.WithMaxRetries(0))
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		t.Fatal(err)
	}
	anthropicSend := func(thinking bool) func(context.Context, *nous.Context) (nous.Message, nous.Usage, error) {
		return func(ctx context.Context, c *nous.Context) (nous.Message, nous.Usage, error) {
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096}
			if thinking {
				params.Thinking = anthropic.ThinkingConfigParamOfEnabled(2048)
			}
			if err := nousanthropic.Fill(&params, c); err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			resp, err := ac.Messages.New(ctx, params)
			if err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			return nousanthropic.Message(resp)
		}
	}
	responsesSend := func(store bool) func(context.Context, *nous.Context) (nous.Message, nous.Usage, error) {
		return func(ctx context.Context, c *nous.Context) (nous.Message, nous.Usage, error) {
			params := responses.ResponseNewParams{Model: "gpt-test", Store: param.NewOpt(store)}
			if err := nousopenai.FillResponses(&params, c); err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			resp, err := oc.Responses.New(ctx, params)
			if err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			return nousopenai.ResponseMessage(resp)
		}
	}
	return []provider{
		{"anthropic", "messages", adapttest.CheckAnthropic, anthropicSend(false)},
		{"anthropic, thinking on", "messages", adapttest.CheckAnthropic, anthropicSend(true)},
		{"openai chat", "completions", adapttest.CheckChat, func(ctx context.Context, c *nous.Context) (nous.Message, nous.Usage, error) {
			params := openai.ChatCompletionNewParams{Model: "gpt-test"}
			if err := nousopenai.FillChat(&params, c); err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			resp, err := oc.Chat.Completions.New(ctx, params)
			if err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			return nousopenai.ChatMessage(resp)
		}},
		{"openai responses", "responses", adapttest.CheckResponses(func(id string) string { return n.follows[id] }), responsesSend(true)},
		{"openai responses, store off", "responses", adapttest.CheckResponses(func(id string) string { return n.follows[id] }), responsesSend(false)},
		{"gemini", "gemini-test:generateContent", adapttest.CheckGemini(func(id string) bool { return n.gemini[id] }), func(ctx context.Context, c *nous.Context) (nous.Message, nous.Usage, error) {
			params := nousgemini.Params{Model: "gemini-test"}
			if err := nousgemini.Fill(&params, c); err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			resp, err := gc.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config)
			if err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			return nousgemini.Message(resp)
		}},
	}
}

// The answers of a scripted turn: two parallel calls (one with arguments a
// model cut short, where the API lets it), then the final text.
func callsAnswer(path string, n *counter) string {
	switch path {
	case "messages":
		a, b := n.next(), n.next()
		return fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use",
			"content":[{"type":"thinking","thinking":"Two cities.","signature":"c2ln"},
			{"type":"tool_use","id":"toolu_%d","name":"get_weather","input":{"city":"Paris"}},
			{"type":"tool_use","id":"toolu_%d","name":"get_weather","input":{"city":"Rome"}}],"usage":{"input_tokens":50,"output_tokens":20}}`, a, b)
	case "completions": // a server that numbers its calls per turn
		return `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Ro"}}]}}],
			"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`
	case "responses":
		rs, a, b := n.next(), n.next(), n.next()
		n.follows[fmt.Sprint("fc_", a)] = fmt.Sprint("rs_", rs)
		n.follows[fmt.Sprint("fc_", b)] = fmt.Sprint("rs_", rs)
		return fmt.Sprintf(`{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-test","output":[
			{"type":"reasoning","id":"rs_%d","summary":[{"type":"summary_text","text":"Two cities."}]},
			{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
			{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":"get_weather","arguments":"{\"city\": \"Ro","status":"completed"}],
			"usage":{"input_tokens":50,"output_tokens":20,"total_tokens":70,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":5}}}`, rs, a, a, b, b)
	default: // Gemini: calls without IDs, the first signed
		return `{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},
			{"functionCall":{"name":"get_weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":20},"modelVersion":"gemini-test"}`
	}
}

func textAnswer(path string) string {
	switch path {
	case "messages":
		return `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
			"content":[{"type":"text","text":"Sunny in both."}],"usage":{"input_tokens":90,"output_tokens":5}}`
	case "completions":
		return `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":"Sunny in both."}}],"usage":{"prompt_tokens":90,"completion_tokens":5,"total_tokens":95}}`
	case "responses":
		return `{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"gpt-test","output":[
			{"type":"message","id":"msg_x","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Sunny in both.","annotations":[]}]}],
			"usage":{"input_tokens":90,"output_tokens":5,"total_tokens":95,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`
	default:
		return `{"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny in both."}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":5},"modelVersion":"gemini-test"}`
	}
}

func weather(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args struct{ City string }
	if err := json.Unmarshal(rc.Call.Arguments, &args); err != nil {
		return nous.ToolResult{Err: fmt.Errorf("invalid arguments: %v", err)}
	}
	return nous.ToolResult{Content: "sunny in " + args.City}
}

// Every pair of providers, through their real SDK clients: a turn's calls
// come from one (parallel, signed, numbered per turn, cut short), then the
// conversation moves to the other in the middle of the tool loop, which
// sends the view and finishes the turn; a second turn goes back to the
// first. Every body keeps its API's rules, and the session still sends
// after a compaction with a summary of each role.
func TestSwitchMidLoop(t *testing.T) {
	a := &api{}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	n := newCounter()
	all := providers(t, srv.URL, n)
	ctx := context.Background()
	for _, from := range all {
		for _, to := range all {
			t.Run(from.name+" to "+to.name, func(t *testing.T) {
				c := nous.NewContext(nous.WithSystemPrompt("You are a weather agent."))
				step := func(p provider, answer string) {
					t.Helper()
					a.mu.Lock()
					a.answers = map[string]string{p.path: answer}
					a.mu.Unlock()
					m, usage, err := p.send(ctx, c)
					if err != nil {
						t.Fatalf("%s: %v", p.name, err)
					}
					if problem := p.check(a.lastBody()); problem != "" {
						t.Fatalf("%s: %s\n%s", p.name, problem, a.lastBody())
					}
					if err := c.AddMessage(m); err != nil {
						t.Fatal(err)
					}
					c.AddUsage(usage)
					if len(m.ToolCalls) > 0 {
						if err := c.RunToolCalls(ctx, m.ToolCalls, weather); err != nil {
							t.Fatal(err)
						}
					}
				}
				must(t, c.AddMessage(nous.UserMessage("What is the weather in Paris and Rome?")))
				step(from, callsAnswer(from.path, n))
				step(to, textAnswer(to.path))
				must(t, c.AddMessage(nous.UserMessage("And tomorrow?")))
				step(to, callsAnswer(to.path, n))
				step(from, textAnswer(from.path))
				for _, role := range []nous.Role{nous.RoleSystem, nous.RoleUser, nous.RoleAssistant} {
					saved := c
					c = compactToAssistant(t, c.Clone(), role)
					must(t, c.AddMessage(nous.UserMessage("And the day after?")))
					step(to, callsAnswer(to.path, n))
					step(from, textAnswer(from.path))
					c = saved
				}
			})
		}
	}
}

// compactToAssistant compacts c so that what it keeps begins with an
// assistant message, after a summary of role: the view a compaction leaves
// when its cut falls before the assistant's answer.
func compactToAssistant(t *testing.T, c *nous.Context, role nous.Role) *nous.Context {
	t.Helper()
	msgs := c.Messages()
	opts := []nous.CompactOption{nous.WithSummaryReserve(64)}
	for budget := 20; budget < 10000; budget += 5 {
		plan, err := c.PlanCompaction(budget, opts...)
		if err != nil || len(plan.Dropped) == 0 || msgs[plan.Last+1].Role != nous.RoleAssistant {
			continue
		}
		summary := nous.Message{Role: role, Content: "The user asked for the weather in Paris and Rome: sunny."}
		must(t, c.ApplyCompaction(plan, summary))
		return c
	}
	t.Fatalf("no compaction of the view keeps it from an assistant message on")
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
