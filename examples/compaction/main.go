// Command compaction runs a long agent conversation against a small token
// budget: before every model request the runtime compacts the view, so the
// request fits, every tool call keeps its result, and nothing leaves the
// log. With a target of half the budget the summarizer runs once every few
// turns, not on every request once the window is full; a tool result too
// large for the window (a whole file read) is shortened in place first.
//
// The summaries come from a model through the OpenAI adapter's
// summarizer, one line: here the model is a stand-in on a local server
// (no network, no key), which lists the questions of the transcript it is
// sent and reports the usage the API would, which reaches c.Usage.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/nous-go/nous"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// budget is the model's window, in tokens as ApproxCounter counts them;
// target, what a compaction brings the view down to.
const (
	budget = 600
	target = budget / 2
)

const summaryPrefix = "Earlier, the user asked: "

func main() {
	model := newSummaryModel()
	defer model.Close()
	c := run(model, true)
	withTarget := model.calls.Swap(0)
	run(model, false)
	fmt.Printf("\nthe summarizer ran %d times in 12 turns (%d without a target); c.Usage counts its calls: %d requests, %d tokens\n",
		withTarget, model.calls.Load(), c.Usage.Requests, c.Usage.TotalTokens)
	fmt.Printf("the view: %d messages, %d tokens; the log: %d events\n", c.Len(), tokens(c), c.Log().Len())
	for _, m := range c.All() {
		fmt.Printf("  %-9s %.90s\n", m.Role, describe(m))
	}
}

// run runs the conversation, compacting with a target or without, and
// returns the context.
func run(model *summaryModel, withTarget bool) *nous.Context {
	ctx := context.Background()
	c := nous.NewContext(nous.WithSystemPrompt("You are a research assistant."))
	check(c.AddMessage(nous.SystemMessage(c.SystemPrompt)))

	client := openai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	summarizer := nousopenai.NewChatSummarizer(client, openai.ChatCompletionNewParams{Model: "gpt-5-mini"})
	opts := []nous.CompactOption{nous.WithSummarizer(summarizer), nous.WithReserve(100), nous.WithSummaryReserve(60), nous.WithToolResultLimit(60)}
	if withTarget {
		opts = append(opts, nous.WithTarget(target))
	}

	for turn := 1; turn <= 12; turn++ {
		check(c.AddMessage(nous.UserMessage(fmt.Sprintf("topic %d?", turn))))
		// The model answers with a tool call, the tool runs; on turn 7 it
		// reads a whole file, larger than the window.
		call := nous.ToolCall{ID: fmt.Sprint("call_", turn), Name: "search", Arguments: []byte(fmt.Sprintf(`{"q":"topic %d"}`, turn))}
		result := strings.Repeat("a finding about the topic. ", 4)
		if turn == 7 {
			call.Name, result = "read_file", strings.Repeat("a line of a long file\n", 500)
		}
		check(c.AddMessages(nous.AssistantMessage("", call), nous.ToolMessage(call.ID, call.Name, result)))
		// Before each request: compact into the window, keeping room for
		// the reply.
		p, err := c.Compact(ctx, budget, opts...)
		check(err)
		check(c.CheckToolPairing()) // the request is valid
		if withTarget && (len(p.Dropped) > 0 || len(p.Pruned) > 0) {
			fmt.Printf("turn %2d: %d tokens -> %d (%d messages summarized, %d tool results shortened)\n",
				turn, p.TokensBefore, tokens(c), len(p.Dropped), len(p.Pruned))
		}
		check(c.AddMessage(nous.AssistantMessage(fmt.Sprintf("Here is what I found on topic %d.", turn))))
	}
	return c
}

// summaryModel is a stand-in for a model behind OpenAI's Chat Completions
// API: it answers each request with the questions of the transcript it was
// sent (those of an earlier summary too) and the usage the API would
// report, and counts its calls.
type summaryModel struct {
	*httptest.Server
	calls atomic.Int64
}

func newSummaryModel() *summaryModel {
	m := &summaryModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		var req struct{ Messages []struct{ Content string } }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 {
			http.Error(w, `{"error":{"message":"want a prompt and a transcript"}}`, http.StatusBadRequest)
			return
		}
		var topics []string
		for entry := range strings.SplitSeq("\n\n"+req.Messages[1].Content, "\n\n[") { // "[role]" starts each message
			text, ok := strings.CutPrefix(entry, "user]\n")
			if !ok {
				continue
			}
			if earlier, ok := strings.CutPrefix(text, nous.SummaryPrefix); ok {
				text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(earlier), summaryPrefix), ".")
			}
			topics = append(topics, text)
		}
		in := (len(req.Messages[0].Content) + len(req.Messages[1].Content)) / 4
		reply, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5-mini",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": summaryPrefix + strings.Join(topics, " ") + "."}}},
			"usage": map[string]int{"prompt_tokens": in, "completion_tokens": 20, "total_tokens": in + 20},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	return m
}

func tokens(c *nous.Context) int {
	n := 0
	for _, m := range c.All() {
		n += nous.ApproxCounter{}.CountTokens(m)
	}
	return n
}

func describe(m nous.Message) string {
	if len(m.ToolCalls) > 0 {
		return "calls " + m.ToolCalls[0].Name
	}
	return strings.ReplaceAll(m.Content, "\n", " ")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
