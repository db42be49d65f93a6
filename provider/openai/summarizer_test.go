package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// summarizerAPI is one of the two APIs a summarizer speaks, for the tests
// that hold for both.
type summarizerAPI struct {
	name string
	// new returns a summarizer of client, its params of model "gpt-sum"
	// and 77 tokens at most, with prompt.
	new func(client openai.Client, prompt string) nous.UsageSummarizer
	// params returns the summarizer's Params.
	params func(s nous.UsageSummarizer) any
	// reply is a response whose output is the JSON of a message (Chat) or
	// of the output items (Responses); its usage is replyUsage.
	reply func(output string) string
	// text is the output of a reply of text, refusal one of a refusal, and
	// empty the output of one without text.
	text, refusal, empty func(text string) string
	// failed is a billed response that fails (Chat: no choice; Responses:
	// status failed), and its error.
	failed    string
	failedErr error
	// request reads a body: its model, its max tokens and its messages.
	request func(t *testing.T, body []byte) (model string, maxTokens int, msgs []summaryRequestMessage)
}

type summaryRequestMessage struct{ Role, Content string }

var replyUsage = nous.Usage{Requests: 1, InputTokens: 40, OutputTokens: 9, TotalTokens: 49}

var summarizerAPIs = []summarizerAPI{
	{
		name: "chat",
		new: func(client openai.Client, prompt string) nous.UsageSummarizer {
			s := nousopenai.NewChatSummarizer(client, openai.ChatCompletionNewParams{Model: "gpt-sum", MaxCompletionTokens: openai.Int(77)})
			s.Prompt = prompt
			return s
		},
		params: func(s nous.UsageSummarizer) any { return s.(*nousopenai.ChatSummarizer).Params },
		reply: func(output string) string {
			return `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-sum","choices":[{"index":0,"finish_reason":"stop","message":` +
				output + `}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`
		},
		text: func(text string) string {
			return `{"role":"assistant","content":` + quote(text) + `,"refusal":null}`
		},
		refusal: func(text string) string {
			return `{"role":"assistant","content":null,"refusal":` + quote(text) + `}`
		},
		empty: func(string) string {
			return `{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
		},
		failed: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-sum","choices":[],
			"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`,
		failedErr: nousopenai.ErrNoChoice,
		request: func(t *testing.T, body []byte) (string, int, []summaryRequestMessage) {
			var req struct {
				Model     string
				MaxTokens int `json:"max_completion_tokens"`
				Messages  []summaryRequestMessage
			}
			must(t, json.Unmarshal(body, &req))
			return req.Model, req.MaxTokens, req.Messages
		},
	},
	{
		name: "responses",
		new: func(client openai.Client, prompt string) nous.UsageSummarizer {
			s := nousopenai.NewResponsesSummarizer(client, responses.ResponseNewParams{Model: "gpt-sum", MaxOutputTokens: openai.Int(77)})
			s.Prompt = prompt
			return s
		},
		params: func(s nous.UsageSummarizer) any { return s.(*nousopenai.ResponsesSummarizer).Params },
		reply: func(output string) string {
			return `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-sum","status":"completed","output":[` +
				output + `],"usage":{"input_tokens":40,"output_tokens":9,"total_tokens":49}}`
		},
		text: func(text string) string {
			return `{"type":"reasoning","id":"rs_1","summary":[]},` + // the text is that of the message item only
				`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":` + quote(text) + `,"annotations":[]}]}`
		},
		refusal: func(text string) string {
			return `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":` + quote(text) + `}]}`
		},
		empty: func(string) string { return `{"type":"reasoning","id":"rs_1","summary":[]}` },
		failed: `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-sum","status":"failed","output":[],
			"error":{"code":"server_error","message":"overloaded"},"usage":{"input_tokens":40,"output_tokens":9,"total_tokens":49}}`,
		failedErr: nousopenai.ErrFailed,
		request: func(t *testing.T, body []byte) (string, int, []summaryRequestMessage) {
			var req struct {
				Model     string
				MaxTokens int `json:"max_output_tokens"`
				Input     []summaryRequestMessage
			}
			must(t, json.Unmarshal(body, &req))
			return req.Model, req.MaxTokens, req.Input
		},
	},
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// summaryDropped is a range to summarize: a result whose call is not in
// it, and a call of the model's.
func summaryDropped() []nous.Message {
	return []nous.Message{
		nous.ToolMessage("call_0", "read_file", "notes.txt: buy milk"),
		nous.UserMessage("What is the weather in Paris?"),
		nous.AssistantMessage("", nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}),
		nous.ToolMessage("call_1", "get_weather", "18°C"),
	}
}

func TestSummarizerSendsPromptAndTranscript(t *testing.T) {
	for _, api := range summarizerAPIs {
		for _, prompt := range []string{"", "Summarize in French."} {
			t.Run(api.name+"/"+prompt, func(t *testing.T) {
				reply := api.reply(api.text(" The user asked for the weather.\n"))
				cl, f := client(t, reply, reply)
				s := api.new(cl, prompt)
				before := api.params(s)
				dropped := summaryDropped()
				m, u, err := s.SummarizeUsage(context.Background(), dropped)
				must(t, err)
				if want := nous.SummaryMessage("The user asked for the weather."); m.Role != want.Role || m.Content != want.Content || len(m.Parts) > 0 {
					t.Errorf("summary %+v, want %+v", m, want)
				}
				if u != replyUsage {
					t.Errorf("usage %+v, want %+v", u, replyUsage)
				}
				if m2, err := s.Summarize(context.Background(), dropped); err != nil || m2.Content != m.Content {
					t.Errorf("Summarize: %+v, %v: want %q", m2, err, m.Content)
				}
				if after := api.params(s); !reflect.DeepEqual(after, before) {
					t.Errorf("the summarizer changed its Params: %+v, was %+v", after, before)
				}
				model, maxTokens, msgs := api.request(t, f.Bodies[0])
				if model != "gpt-sum" || maxTokens != 77 {
					t.Errorf("model %q, max tokens %d: want the caller's, gpt-sum and 77", model, maxTokens)
				}
				wantPrompt := prompt
				if prompt == "" {
					wantPrompt = nous.DefaultSummaryPrompt
				}
				want := []summaryRequestMessage{{"system", wantPrompt}, {"user", nous.Transcript(dropped)}}
				if !reflect.DeepEqual(msgs, want) {
					t.Errorf("messages sent:\n%+v\nwant:\n%+v", msgs, want)
				}
			})
		}
	}
}

func TestSummarizerUsageCountedByCompact(t *testing.T) {
	for _, api := range summarizerAPIs {
		t.Run(api.name, func(t *testing.T) {
			cl, _ := client(t, api.reply(api.text("The user asked for the weather; it is 18°C.")))
			c := summaryConversation(t)
			c.AddUsage(nous.Usage{Requests: 3, InputTokens: 100, OutputTokens: 10, TotalTokens: 110})
			p, err := c.Compact(context.Background(), 60, nous.WithSummarizer(api.new(cl, "")), nous.WithSummaryReserve(30))
			must(t, err)
			if len(p.Dropped) == 0 {
				t.Fatal("nothing compacted")
			}
			if m := c.Messages()[p.First]; m.Role != nous.RoleUser || m.Content != nous.SummaryPrefix+"The user asked for the weather; it is 18°C." {
				t.Errorf("summary in the view: %+v", m)
			}
			if want := (nous.Usage{Requests: 4, InputTokens: 140, OutputTokens: 19, TotalTokens: 159}); c.Usage != want {
				t.Errorf("usage %+v, want %+v", c.Usage, want)
			}
		})
	}
}

// summaryConversation is a conversation whose first turn a budget of 60
// tokens compacts.
func summaryConversation(t *testing.T) *nous.Context {
	t.Helper()
	c := nous.NewContext()
	must(t, c.AddMessages(
		nous.UserMessage("What is the weather in Paris? I am going there tomorrow and I want to know what to pack for the whole week."),
		nous.AssistantMessage("It is 18°C and sunny in Paris, and it will stay so all week: pack light clothes and a jacket for the evenings."),
		nous.UserMessage("Thanks!"),
	))
	return c
}

func TestSummarizerFailureLeavesViewAndCountsUsage(t *testing.T) {
	for _, api := range summarizerAPIs {
		for _, tc := range []struct {
			name  string
			reply string // "": an HTTP error
			want  error
			usage nous.Usage
		}{
			{"http error", "", nil, nous.Usage{}},
			{"failed", api.failed, api.failedErr, replyUsage},
			{"no text", api.reply(api.empty("")), nousopenai.ErrNoSummary, replyUsage},
			{"blank text", api.reply(api.text(" \n ")), nousopenai.ErrNoSummary, replyUsage},
			{"refusal", api.reply(api.refusal("I can't help with that.")), nousopenai.ErrNoSummary, replyUsage},
		} {
			t.Run(api.name+"/"+tc.name, func(t *testing.T) {
				var cl openai.Client
				if tc.reply == "" {
					cl = failingClient(t)
				} else {
					cl, _ = client(t, tc.reply, tc.reply)
				}
				s := api.new(cl, "")
				c := summaryConversation(t)
				view := c.Messages()
				_, err := c.Compact(context.Background(), 60, nous.WithSummarizer(s), nous.WithSummaryReserve(30))
				var apiErr *openai.Error
				switch {
				case err == nil:
					t.Fatal("no error")
				case tc.want == nil && !errors.As(err, &apiErr):
					t.Errorf("error %v, want the SDK's", err)
				case tc.want != nil && !errors.Is(err, tc.want):
					t.Errorf("error %v, want %v", err, tc.want)
				}
				if got := c.Messages(); !reflect.DeepEqual(got, view) {
					t.Errorf("view changed:\n%+v\nwas:\n%+v", got, view)
				}
				if c.Usage != tc.usage {
					t.Errorf("usage %+v, want %+v", c.Usage, tc.usage)
				}
				_, u, err := s.SummarizeUsage(context.Background(), summaryDropped())
				if err == nil || u != tc.usage {
					t.Errorf("SummarizeUsage: %+v, %v: want the usage %+v and an error", u, err, tc.usage)
				}
			})
		}
	}
}

// failingClient returns a client of a server that answers every request
// with an HTTP 500.
func failingClient(t *testing.T) openai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"the server is down","type":"server_error"}}`)
	}))
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
}
