// Command compaction runs a long agent conversation against a small token
// budget: before every model request the runtime compacts the view, so the
// request fits, every tool call keeps its result, and nothing leaves the
// log. With a target of half the budget the summarizer runs once every few
// turns, not on every request once the window is full; a tool result too
// large for the window (a whole file read) is shortened in place first.
// Each provider module's NewSummarizer is the summarizer to use with a
// real model; this one is a stand-in that reports what a model call would
// cost.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/nous-go/nous"
)

// budget is the model's window, in tokens as ApproxCounter counts them;
// target, what a compaction brings the view down to.
const (
	budget = 600
	target = budget / 2
)

const summaryPrefix = "Earlier, the user asked: "

func main() {
	calls, c := run(true)
	without, _ := run(false)
	fmt.Printf("\nthe summarizer ran %d times in 12 turns (%d without a target); c.Usage counts its calls: %d requests, %d tokens\n",
		calls, without, c.Usage.Requests, c.Usage.TotalTokens)
	fmt.Printf("the view: %d messages, %d tokens; the log: %d events\n", c.Len(), tokens(c), c.Log().Len())
	for _, m := range c.All() {
		fmt.Printf("  %-9s %.90s\n", m.Role, describe(m))
	}
}

// run runs the conversation, compacting with a target or without, and
// returns how many times the summarizer ran, and the context.
func run(withTarget bool) (int, *nous.Context) {
	ctx := context.Background()
	c := nous.NewContext(nous.WithSystemPrompt("You are a research assistant."))
	check(c.AddMessage(nous.SystemMessage(c.SystemPrompt)))

	// A summarizer calls a model; this one lists the questions it was
	// given, those of an earlier summary (which a compaction takes into its
	// range) included, and reports the usage a model call would have.
	calls := 0
	summarizer := nous.UsageSummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, nous.Usage, error) {
		calls++
		var topics []string
		for _, m := range dropped {
			text := strings.TrimPrefix(m.Content, nous.SummaryPrefix)
			switch {
			case m.Role == nous.RoleUser && text != m.Content: // an earlier summary
				topics = append(topics, strings.TrimSuffix(strings.TrimPrefix(text, summaryPrefix), "."))
			case m.Role == nous.RoleUser:
				topics = append(topics, m.Content)
			}
		}
		in := len(nous.Transcript(dropped)) / 4
		return nous.SummaryMessage(summaryPrefix + strings.Join(topics, " ") + "."),
			nous.Usage{Requests: 1, InputTokens: in, OutputTokens: 20, TotalTokens: in + 20}, nil
	})
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
	return calls, c
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
