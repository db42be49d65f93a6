package nous

import (
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
