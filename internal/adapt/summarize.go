package adapt

import (
	"fmt"
	"strings"

	"github.com/nous-go/nous"
)

// Summarize is what the provider modules' summarizers share: a context of
// its own, prompt as its system prompt ([nous.DefaultSummaryPrompt] when
// blank) and [nous.Transcript] of dropped as its one user message, which
// send fills, sends and reads as the adapter does any request; then the
// [nous.SummaryMessage] of the reply's text, and its usage. A reply without
// text, or a refusal (Metadata["refusal"]: its text would take the
// conversation's place), is an error wrapping noSummary, the adapter's
// sentinel, that names the reply's stop reason; it comes with the usage,
// as an error of send does. The usage counts no tool call: the reply's, if
// the caller's params offer tools, are never run.
func Summarize(provider, prompt string, dropped []nous.Message, noSummary error, send func(*nous.Context) (nous.Message, nous.Usage, error)) (nous.Message, nous.Usage, error) {
	if strings.TrimSpace(prompt) == "" {
		prompt = nous.DefaultSummaryPrompt
	}
	c := nous.NewContext(nous.WithSystemPrompt(prompt))
	if err := c.AddMessage(nous.UserMessage(nous.Transcript(dropped))); err != nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("%s: summarize %d messages: %w", provider, len(dropped), err)
	}
	m, u, err := send(c)
	u.ToolCalls = 0
	if err != nil {
		return nous.Message{}, u, fmt.Errorf("%s: summarize: %w", provider, err)
	}
	text := strings.TrimSpace(m.Text())
	if m.Metadata["refusal"] == true {
		return nous.Message{}, u, fmt.Errorf("%s: summarize: the model refused (%q): %w", provider, text, noSummary)
	}
	if text == "" {
		why := ""
		for _, k := range []string{"stop_reason", "finish_reason"} {
			if r, _ := m.Metadata[k].(string); r != "" {
				why = fmt.Sprintf(" (%s %s: thinking or a tool call may have taken the reply)", strings.ReplaceAll(k, "_", " "), r)
			}
		}
		return nous.Message{}, u, fmt.Errorf("%s: summarize: a reply without text%s: %w", provider, why, noSummary)
	}
	return nous.SummaryMessage(text), u, nil
}
