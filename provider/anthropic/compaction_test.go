package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

func words(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }

// agentRun returns the context of a run its system prompt started (no user
// message): work items called and answered, then the user's word.
func agentRun(t *testing.T) *nous.Context {
	t.Helper()
	c := nous.NewContext()
	must(t, c.AddMessage(msg(nous.SystemMessage("You are an agent. Work through the queue."))))
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		x := nous.ToolCall{ID: "toolu_" + id, Name: "work", Arguments: json.RawMessage(`{"item":"` + id + `"}`)}
		must(t, c.AddMessages(msg(nous.AssistantMessage(words(30), x)), msg(nous.ToolMessage(x.ID, "work", words(30)))))
	}
	return c
}

// A compacted run, its range replaced by a summary of each role (or by the
// marker compaction writes without a summarizer), made by the library's
// Compact: the request goes, its first message a user one. A summary that
// is a system message joins the system blocks, and one that is the
// assistant's joins the assistant turn after it, so that "Continue." leads;
// a user summary leads itself.
func TestCompactedViewStartsWithUser(t *testing.T) {
	for _, tt := range []struct {
		name   string
		role   nous.Role // "" for the marker
		system int       // the system blocks
		first  string    // the text of the first message
		second string    // the first text of the second message, the assistant's
	}{
		{"system summary", nous.RoleSystem, 2, "Continue.", words(30)},
		{"the marker", "", 2, "Continue.", words(30)},
		{"user summary", nous.RoleUser, 1, "Summary: items a to d are done.", words(30)},
		{"assistant summary", nous.RoleAssistant, 1, "Continue.", "Summary: items a to d are done."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := agentRun(t)
			var opts []nous.CompactOption
			if tt.role != "" {
				opts = append(opts, nous.WithSummarizer(nous.SummarizerFunc(func(context.Context, []nous.Message) (nous.Message, error) {
					return nous.Message{Role: tt.role, Content: "Summary: items a to d are done."}, nil
				})))
			}
			p, err := c.PlanCompaction(1 << 30)
			must(t, err)
			_, err = c.Compact(context.Background(), p.TokensBefore/2, append(opts, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(20))...)
			must(t, err)
			view := c.Messages()
			if len(view) < 3 || view[1].Metadata[nous.MetadataSummary] != true || view[2].Role != nous.RoleAssistant {
				t.Fatalf("setup: the compacted view is %v", roles(view))
			}
			must(t, c.AddMessage(msg(nous.UserMessage("Also do g."))))
			body := send(t, c)
			if p := checkRequest(body); p != "" {
				t.Errorf("%s:\n%s", p, body)
			}
			s := sentOf(t, body)
			if len(s.System) != tt.system {
				t.Errorf("system blocks %v, want %d", s.System, tt.system)
			}
			if got := s.Messages[0].Content[0]["text"]; s.Messages[0].Role != "user" || got != tt.first {
				t.Errorf("the first message is %s %q, want user %q", s.Messages[0].Role, got, tt.first)
			}
			if got := s.Messages[1].Content[0]["text"]; s.Messages[1].Role != "assistant" || got != tt.second {
				t.Errorf("the second message starts %s %q, want assistant %q", s.Messages[1].Role, got, tt.second)
			}
		})
	}
}

func roles(v []nous.Message) string {
	var out []string
	for _, m := range v {
		out = append(out, fmt.Sprint(m.Role, len(m.ToolCalls)))
	}
	return strings.Join(out, " ")
}

// A view of system messages only (the task is in the instructions) sends
// them as system blocks and "Continue." as its one message, which the API
// needs.
func TestSystemOnlyViewSendsContinue(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("You are a poet."))
	must(t, c.AddMessages(msg(nous.SystemMessage("Write a haiku about the sea."))))
	s := sentOf(t, send(t, c))
	if len(s.System) != 2 || len(s.Messages) != 1 || s.Messages[0].Role != "user" || s.Messages[0].Content[0]["text"] != "Continue." {
		t.Errorf("sent system %v, messages %+v", s.System, s.Messages)
	}
}
