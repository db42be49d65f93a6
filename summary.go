package nous

import (
	"context"
	"fmt"
	"strings"
)

// DefaultSummaryPrompt is the instruction a summarizer built on a model
// (each provider module's NewSummarizer) gives it when its caller gives
// none: what the summary must keep for the run to go on without the
// messages it replaces.
const DefaultSummaryPrompt = `You are compacting an agent's conversation. Below is the part of it that will be removed. ` +
	`Write a summary that lets the agent go on without it: the user's goals and constraints, decisions made and why, ` +
	`facts learned (names, paths, numbers, identifiers, as they were), tool calls made and what they returned, ` +
	`what was tried and failed, and what is still to do. Be concise, keep what matters exactly, and add nothing ` +
	`that is not in the conversation. Answer with the summary only.`

// SummaryPrefix opens the text of a [SummaryMessage], so that the model
// that reads it later knows what it is.
const SummaryPrefix = "Summary of the earlier conversation:\n\n"

// SummaryMessage returns the message that replaces a compacted range, of a
// summary's text: a user message, the role every provider adapter sends as
// it is (Anthropic and Gemini want the messages to begin with a user turn,
// and a system summary joins the system instruction, after the overlay),
// its text SummaryPrefix then text.
func SummaryMessage(text string) Message {
	return Message{Role: RoleUser, Content: SummaryPrefix + strings.TrimSpace(text)}
}

// Transcript returns msgs as plain text for a model to summarize, one
// entry per message: its role, its text, each tool call with its name and
// arguments, a tool result with its call's name and ID; thinking is left
// out, and an image or a file is named by its kind. A model reads a
// transcript whatever the range holds (results whose calls are not in it,
// thinking another provider signed), where the messages themselves might
// not send.
func Transcript(msgs []Message) string {
	var b strings.Builder
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b.WriteString("\n\n")
		}
		switch m.Role {
		case RoleTool:
			what := "result"
			if m.Metadata[MetadataIsError] == true {
				what = "error"
			}
			fmt.Fprintf(&b, "[tool %s of %s, call %s]", what, m.Name, m.ToolCallID)
		default:
			fmt.Fprintf(&b, "[%s]", m.Role)
		}
		if m.Content != "" {
			b.WriteString("\n" + m.Content)
		}
		for _, p := range m.Parts {
			switch p.Type {
			case PartText:
				if p.Content != "" {
					b.WriteString("\n" + p.Content)
				}
			case PartThinking:
			default:
				fmt.Fprintf(&b, "\n(%s)", p.Type)
			}
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "\n(calls %s with %s, call %s)", tc.Name, argumentsText(tc.Arguments), tc.ID)
		}
	}
	return b.String()
}

func argumentsText(args []byte) string {
	if len(args) == 0 {
		return "{}"
	}
	return string(args)
}

// Summarizer writes the message that replaces a compacted range.
//
// The summary's role matters to the providers: a user message
// ([SummaryMessage] makes one) is sent as it is by every adapter, and is the
// role to prefer. A system summary at the head of the view joins the
// system instruction (Anthropic, Gemini), after the overlay, and the view
// then goes on with the assistant's turn, which those adapters send after a
// user message "Continue."; an assistant summary is sent so too. Each
// provider module offers a summarizer built on its SDK client
// (NewSummarizer; NewChatSummarizer and NewResponsesSummarizer for
// OpenAI's two APIs), which writes a user summary and reports its usage.
type Summarizer interface {
	// Summarize returns the summary of dropped, its own copy of the range
	// the compaction replaces. It may take long and run on any goroutine:
	// [Context.Compact] calls it without holding anything.
	Summarize(ctx context.Context, dropped []Message) (Message, error)
}

// SummarizerFunc is a function that is a [Summarizer].
type SummarizerFunc func(ctx context.Context, dropped []Message) (Message, error)

// Summarize implements [Summarizer].
func (f SummarizerFunc) Summarize(ctx context.Context, dropped []Message) (Message, error) {
	return f(ctx, dropped)
}

// UsageSummarizer is a [Summarizer] whose summary is a model call it
// accounts for. [Context.Compact] calls SummarizeUsage in place of
// Summarize and adds the usage it returns to the context's Usage, on the
// caller's goroutine once it returns, whether the summary is applied or
// not: the call was billed, also when it failed or its summary is refused;
// a summary applied has its call logged as a step_end after its replace
// event. A summarizer never touches the context itself (when planning and
// applying are apart, it runs on another goroutine): it returns what it
// cost, and a runtime that calls it itself adds that with
// [Context.AddUsage], or with [Context.EndStep] after applying it. The
// provider modules' summarizers are UsageSummarizers.
type UsageSummarizer interface {
	Summarizer
	SummarizeUsage(ctx context.Context, dropped []Message) (Message, Usage, error)
}

// UsageSummarizerFunc is a function that is a [UsageSummarizer].
type UsageSummarizerFunc func(ctx context.Context, dropped []Message) (Message, Usage, error)

// Summarize implements [Summarizer]: the summary without its usage.
func (f UsageSummarizerFunc) Summarize(ctx context.Context, dropped []Message) (Message, error) {
	m, _, err := f(ctx, dropped)
	return m, err
}

// SummarizeUsage implements [UsageSummarizer].
func (f UsageSummarizerFunc) SummarizeUsage(ctx context.Context, dropped []Message) (Message, Usage, error) {
	return f(ctx, dropped)
}
