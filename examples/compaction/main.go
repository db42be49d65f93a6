// Command compaction runs a long agent conversation against a small token
// budget: before every model request the runtime compacts the view with a
// summarizer, so the request fits, every tool call keeps its result, and
// nothing leaves the log.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/nous-go/nous"
)

// budget is the model's window, in tokens as ApproxCounter counts them.
const budget = 600

const summaryPrefix = "Earlier, the user asked: "

func main() {
	ctx := context.Background()
	c := nous.NewContext(nous.WithSystemPrompt("You are a research assistant."))
	check(c.AddMessage(nous.SystemMessage(c.SystemPrompt)))

	// A summarizer would call a model; this one lists the questions it was
	// given, those of an earlier summary (which a compaction takes into its
	// range) included.
	summarizer := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		var topics []string
		for _, m := range dropped {
			switch {
			case m.Role == nous.RoleUser:
				topics = append(topics, m.Content)
			case strings.HasPrefix(m.Content, summaryPrefix):
				topics = append(topics, strings.TrimSuffix(strings.TrimPrefix(m.Content, summaryPrefix), "."))
			}
		}
		return nous.SystemMessage(summaryPrefix + strings.Join(topics, " ") + "."), nil
	})

	for turn := 1; turn <= 12; turn++ {
		check(c.AddMessage(nous.UserMessage(fmt.Sprintf("topic %d?", turn))))
		// Before each request: compact into the window, keeping room for
		// the reply.
		p, err := c.Compact(ctx, budget, nous.WithSummarizer(summarizer), nous.WithReserve(100), nous.WithSummaryReserve(60))
		check(err)
		check(c.CheckToolPairing()) // the request is valid
		if len(p.Dropped) > 0 {
			fmt.Printf("turn %2d: compacted messages %d..%d, %d tokens -> %d\n", turn, p.First, p.Last, p.TokensBefore, tokens(c))
		}
		// The model answers with a tool call, the tool runs, the model answers.
		call := nous.ToolCall{ID: fmt.Sprint("call_", turn), Name: "search", Arguments: []byte(fmt.Sprintf(`{"q":"topic %d"}`, turn))}
		check(c.AddMessages(
			nous.AssistantMessage("", call),
			nous.ToolMessage(call.ID, call.Name, strings.Repeat("a finding about the topic. ", 8)),
			nous.AssistantMessage(fmt.Sprintf("Here is what I found on topic %d.", turn)),
		))
	}
	fmt.Printf("\nthe view: %d messages, %d tokens; the log: %d events\n", c.Len(), tokens(c), c.Log().Len())
	for _, m := range c.All() {
		fmt.Printf("  %-9s %.70s\n", m.Role, describe(m))
	}
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
	return m.Content
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
