package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

const summaryReply = `{"id":"msg_s","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
"content":[{"type":"thinking","thinking":"What matters here?","signature":"c2ln"},{"type":"text","text":" Items a to d are done. "}],
"usage":{"input_tokens":200,"output_tokens":30,"cache_read_input_tokens":50}}`

// summaryUsage is the usage of summaryReply as Usage counts it.
var summaryUsage = nous.Usage{Requests: 1, InputTokens: 250, OutputTokens: 30, TotalTokens: 280, CacheReadInputTokens: 50}

// dropped is a range as a compaction hands it to a summarizer: a call and
// its result, the user's text.
func dropped() []nous.Message {
	x := nous.ToolCall{ID: "toolu_a", Name: "work", Arguments: json.RawMessage(`{"item":"a"}`)}
	return []nous.Message{nous.UserMessage("Work through the queue."), nous.AssistantMessage("On it.", x), nous.ToolMessage(x.ID, "work", "a done")}
}

// The request the summarizer sends: the prompt as its one system block
// (the default one, or the caller's), the transcript of the range as its
// one user message, the caller's model, max tokens and thinking; the
// caller's Params are not changed. The summary is a user message of the
// reply's text, without its thinking.
func TestSummarizerRequest(t *testing.T) {
	for _, tt := range []struct{ name, prompt, want string }{
		{"default prompt", "", nous.DefaultSummaryPrompt},
		{"custom prompt", "Summarize in French.", "Summarize in French."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cl, f := client(t, summaryReply)
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 777,
				Thinking: anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}}
			s := nousanthropic.NewSummarizer(cl, params)
			s.Prompt = tt.prompt
			before, err := json.Marshal(s.Params)
			must(t, err)

			m, u, err := s.SummarizeUsage(context.Background(), dropped())
			must(t, err)
			if want := nous.SummaryMessage("Items a to d are done."); !reflect.DeepEqual(m, want) {
				t.Errorf("summary %+v, want %+v", m, want)
			}
			if u != summaryUsage {
				t.Errorf("usage %+v, want %+v", u, summaryUsage)
			}
			if after, _ := json.Marshal(s.Params); string(after) != string(before) || s.Params.Messages != nil || s.Params.System != nil {
				t.Errorf("Params changed: %s, was %s", after, before)
			}

			var sent struct {
				Model     string
				MaxTokens int `json:"max_tokens"`
				Thinking  struct{ Type string }
				System    []struct{ Type, Text string }
				Messages  []struct {
					Role    string
					Content []struct{ Type, Text string }
				}
			}
			must(t, json.Unmarshal(f.Bodies[0], &sent))
			if sent.Model != "claude-test" || sent.MaxTokens != 777 || sent.Thinking.Type != "adaptive" {
				t.Errorf("sent model %q, max tokens %d, thinking %q", sent.Model, sent.MaxTokens, sent.Thinking.Type)
			}
			if len(sent.System) != 1 || sent.System[0].Text != tt.want {
				t.Errorf("system %+v, want the one block %q", sent.System, tt.want)
			}
			transcript := nous.Transcript(dropped())
			if len(sent.Messages) != 1 || sent.Messages[0].Role != "user" || len(sent.Messages[0].Content) != 1 ||
				sent.Messages[0].Content[0].Text != transcript {
				t.Errorf("messages %+v, want one user message %q", sent.Messages, transcript)
			}
		})
	}
}

// compacting returns a context to compact, with usage of its own, and the
// options that compact it with s, the range all but its system prompt and
// last turn.
func compacting(t *testing.T, s nous.Summarizer) (*nous.Context, []nous.CompactOption) {
	t.Helper()
	c := agentRun(t)
	must(t, c.AddMessage(msg(nous.UserMessage("Also do g."))))
	c.AddUsage(nous.Usage{Requests: 3, InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100})
	return c, []nous.CompactOption{nous.WithSummarizer(s), nous.WithSummaryReserve(20)}
}

// compact compacts c to half its size.
func compact(t *testing.T, c *nous.Context, opts []nous.CompactOption) error {
	t.Helper()
	p, err := c.PlanCompaction(1 << 30)
	must(t, err)
	_, err = c.Compact(context.Background(), p.TokensBefore/2, opts...)
	return err
}

// Compact with the summarizer puts its summary in place of the range and
// adds the call's usage to c.Usage.
func TestSummarizerCompact(t *testing.T) {
	cl, f := client(t, summaryReply)
	c, opts := compacting(t, nousanthropic.NewSummarizer(cl, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}))
	want := c.Usage.Add(summaryUsage)
	must(t, compact(t, c, opts))
	if len(f.Bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(f.Bodies))
	}
	view := c.Messages()
	if view[1].Role != nous.RoleUser || view[1].Content != nous.SummaryMessage("Items a to d are done.").Content || view[1].Metadata[nous.MetadataSummary] != true {
		t.Errorf("the view is %s, its second message %+v", roles(view), view[1])
	}
	if c.Usage != want {
		t.Errorf("c.Usage %+v, want %+v", c.Usage, want)
	}
}

// A summary that fails leaves the view as it was: an HTTP error is an
// error wrapping the SDK's, with no usage; a reply without text is
// ErrNoSummary, its usage counted.
func TestSummarizerFails(t *testing.T) {
	noText := `{"id":"msg_s","type":"message","role":"assistant","model":"claude-test","stop_reason":"max_tokens",
"content":[{"type":"thinking","thinking":"Let me think","signature":"c2ln"},{"type":"text","text":"  "}],"usage":{"input_tokens":200,"output_tokens":1024}}`
	for _, tt := range []struct {
		name   string
		status int
		body   string
		is     func(error) bool
		usage  nous.Usage // what the call adds to c.Usage
	}{
		{"HTTP error", http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`,
			func(err error) bool {
				var e *anthropic.Error
				return errors.As(err, &e) && e.StatusCode == http.StatusBadRequest
			}, nous.Usage{}},
		{"no text", http.StatusOK, noText,
			func(err error) bool { return errors.Is(err, nousanthropic.ErrNoSummary) },
			nous.Usage{Requests: 1, InputTokens: 200, OutputTokens: 1024, TotalTokens: 1224}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			cl := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
			s := nousanthropic.NewSummarizer(cl, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024})

			_, u, err := s.SummarizeUsage(context.Background(), dropped())
			if !tt.is(err) || u != tt.usage {
				t.Errorf("SummarizeUsage: %v with usage %+v, want usage %+v", err, u, tt.usage)
			}
			c, opts := compacting(t, s)
			view, want := c.Messages(), c.Usage.Add(tt.usage)
			if err := compact(t, c, opts); !tt.is(err) {
				t.Errorf("Compact: %v", err)
			}
			if !reflect.DeepEqual(c.Messages(), view) {
				t.Errorf("the view changed: %s, was %s", roles(c.Messages()), roles(view))
			}
			if c.Usage != want {
				t.Errorf("c.Usage %+v, want %+v", c.Usage, want)
			}
		})
	}
}
