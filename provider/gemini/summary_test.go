package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

const summaryReply = `{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking it over","thought":true},
{"text":"The user booked a hotel "},{"text":"in Paris.","thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],
"usageMetadata":{"promptTokenCount":300,"candidatesTokenCount":20,"thoughtsTokenCount":7}}`

// summaryAPI is a fake API answering every request with status and
// reply, keeping the path and body of each.
type summaryAPI struct {
	mu     sync.Mutex
	paths  []string
	bodies [][]byte
}

// summarizerOf returns a summarizer of params on a client of a fake API
// that answers status and reply.
func summarizerOf(t *testing.T, params nousgemini.Params, status int, reply string) (*nousgemini.Summarizer, *summaryAPI) {
	t.Helper()
	for _, v := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL"} {
		t.Setenv(v, "")
	}
	api := &summaryAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		api.mu.Lock()
		api.paths, api.bodies = append(api.paths, r.URL.Path), append(api.bodies, body)
		api.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	must(t, err)
	return nousgemini.NewSummarizer(c, params), api
}

// conversation returns a context of older turns, a tool call among them,
// and a last question, which a small budget compacts, with a usage so far.
func conversation(t *testing.T) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithSystemPrompt("You are a travel agent."))
	long := strings.Repeat("More about the trip. ", 60)
	must(t, c.AddMessages(
		nous.UserMessage("Find me a hotel in Paris. "+long),
		nous.AssistantMessage("", nous.ToolCall{ID: "call_1", Name: "book", Arguments: []byte(`{"city":"Paris"}`)}),
		nous.ToolMessage("call_1", "book", "booked: Hotel du Nord. "+long),
		nous.AssistantMessage("Booked the Hotel du Nord. "+long),
		nous.UserMessage("What is the weather there?"),
	))
	c.AddUsage(nous.Usage{Requests: 2, InputTokens: 1000, OutputTokens: 50})
	return c
}

// The request is the prompt as the system instruction and the transcript
// of the range as the one user content, with the caller's model and
// config, which stay as they were; the summary is a user message of the
// reply's text, its tokens counted into the context's Usage.
func TestSummarizerCompact(t *testing.T) {
	for name, prompt := range map[string]string{"default prompt": "", "custom prompt": "Summarize in French."} {
		t.Run(name, func(t *testing.T) { summarize(t, prompt) })
	}
}

// summarize compacts a conversation with a summarizer of prompt and
// checks the request, the caller's params, the view and the usage.
func summarize(t *testing.T, prompt string) {
	config := &genai.GenerateContentConfig{MaxOutputTokens: 300, Temperature: genai.Ptr[float32](0.2),
		SystemInstruction: genai.NewContentFromText("the caller's", genai.RoleUser)}
	params := nousgemini.Params{Model: "gemini-sum", Config: config}
	kept := params
	keptConfig := *config
	s, api := summarizerOf(t, params, http.StatusOK, summaryReply)
	s.Prompt = prompt

	c := conversation(t)
	plan, err := c.Compact(context.Background(), 600, nous.WithSummarizer(s))
	must(t, err)
	if len(plan.Dropped) == 0 || len(api.bodies) != 1 {
		t.Fatalf("dropped %d messages with %d requests", len(plan.Dropped), len(api.bodies))
	}
	if want := "/v1beta/models/gemini-sum:generateContent"; api.paths[0] != want {
		t.Errorf("path %s, want %s", api.paths[0], want)
	}
	sent := decodeBody(t, api.bodies[0])
	want := prompt
	if want == "" {
		want = nous.DefaultSummaryPrompt
	}
	if si := sent.SystemInstruction; si == nil || len(si.Parts) != 1 || si.Parts[0].Text != want {
		t.Errorf("system instruction %+v, want the prompt %q", si, want)
	}
	if len(sent.Contents) != 1 || sent.Contents[0].Role != genai.RoleUser || len(sent.Contents[0].Parts) != 1 ||
		sent.Contents[0].Parts[0].Text != nous.Transcript(plan.Dropped) {
		t.Errorf("contents %s, want the transcript of the range as one user content", api.bodies[0])
	}
	var gen struct {
		GenerationConfig struct {
			MaxOutputTokens int     `json:"maxOutputTokens"`
			Temperature     float32 `json:"temperature"`
		} `json:"generationConfig"`
	}
	must(t, json.Unmarshal(api.bodies[0], &gen))
	if g := gen.GenerationConfig; g.MaxOutputTokens != 300 || g.Temperature != 0.2 {
		t.Errorf("generation config %+v, want the caller's", g)
	}
	if !reflect.DeepEqual(s.Params, kept) || !reflect.DeepEqual(*config, keptConfig) {
		t.Errorf("the caller's params became %+v, config %+v", s.Params, *config)
	}

	msgs := c.Messages()
	if want := nous.SummaryMessage("The user booked a hotel in Paris."); len(msgs) != 2 ||
		msgs[0].Role != want.Role || msgs[0].Content != want.Content {
		t.Errorf("view %+v, want the summary then the last question", msgs)
	}
	if want := (nous.Usage{Requests: 3, InputTokens: 1300, OutputTokens: 77, TotalTokens: 327, ReasoningTokens: 7}); c.Usage != want {
		t.Errorf("usage %+v, want %+v", c.Usage, want)
	}
}

// A call that fails, or a reply without text, changes nothing but the
// usage of what was billed.
func TestSummarizerRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		reply  string
		is     []error
		usage  nous.Usage
	}{
		{"http error", http.StatusBadRequest, `{"error":{"code":400,"message":"bad model","status":"INVALID_ARGUMENT"}}`, nil, nous.Usage{}},
		{"thoughts only", http.StatusOK, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true}]},"finishReason":"MAX_TOKENS"}],
		  "usageMetadata":{"promptTokenCount":300,"thoughtsTokenCount":100}}`, []error{nousgemini.ErrNoSummary},
			nous.Usage{Requests: 1, InputTokens: 300, OutputTokens: 100, TotalTokens: 400, ReasoningTokens: 100}},
		{"blocked", http.StatusOK, `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":300}}`,
			[]error{nousgemini.ErrNoSummary, nousgemini.ErrNoCandidate}, nous.Usage{Requests: 1, InputTokens: 300, TotalTokens: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := summarizerOf(t, nousgemini.Params{Model: "gemini-sum"}, tc.status, tc.reply)
			c := conversation(t)
			before, usage := c.Messages(), c.Usage
			_, err := c.Compact(context.Background(), 600, nous.WithSummarizer(s))
			if err == nil {
				t.Fatal("no error")
			}
			var apiErr genai.APIError
			if tc.is == nil && (!errors.As(err, &apiErr) || apiErr.Code != tc.status) {
				t.Errorf("error %v, want the SDK's APIError", err)
			}
			for _, is := range tc.is {
				if !errors.Is(err, is) {
					t.Errorf("error %v, want %v", err, is)
				}
			}
			if !reflect.DeepEqual(c.Messages(), before) {
				t.Errorf("the view changed: %+v", c.Messages())
			}
			if want := usage.Add(tc.usage); c.Usage != want {
				t.Errorf("usage %+v, want %+v", c.Usage, want)
			}
		})
	}
}
