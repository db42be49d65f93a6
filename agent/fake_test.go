package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nous-go/nous"
)

// fakeModel is a nous.Model that replies by a function of the view, as a
// provider's adapter does: the reply added to the context, the step ended.
// It streams the reply's text a word at a time when asked, and a stream
// whose ctx ends is cut there, its partial reply added.
type fakeModel struct {
	reply func(view []nous.Message) nous.Message
	calls atomic.Int64
	// cut, when set, is called before each word streams: a stream ends
	// once ctx is done.
	cut func(word int)
}

func (m *fakeModel) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	if err := ctx.Err(); err != nil {
		return nous.Message{}, err
	}
	m.calls.Add(1)
	reply := m.reply(c.Messages())
	if req.OnDelta != nil && reply.Content != "" {
		var sent string
		for i, word := range splitWords(reply.Content) {
			if m.cut != nil {
				m.cut(i)
			}
			if ctx.Err() != nil {
				partial := nous.AssistantMessage(sent)
				partial.Metadata = map[string]any{nous.MetadataInterrupted: true}
				if err := c.AddMessage(partial); err != nil {
					return nous.Message{}, err
				}
				c.EndStep(nous.Step{Provider: "fake", Model: "fake", Error: "cut"})
				return partial, fmt.Errorf("fake: %w: %w", nous.ErrInterrupted, ctx.Err())
			}
			sent += word
			req.OnDelta(nous.Delta{Kind: nous.DeltaText, Text: word})
		}
	}
	if err := c.AddMessage(reply); err != nil {
		return nous.Message{}, err
	}
	c.EndStep(nous.Step{Provider: "fake", Model: "fake", Usage: nous.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}})
	return reply, nil
}

// splitWords splits s after each space.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if r == ' ' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// toolLoop is a model that, to a user's message, calls each of calls (IDs
// made unique by the count of user messages), then, once every result is
// in, replies "done: <the results>".
func toolLoop(calls ...nous.ToolCall) func(view []nous.Message) nous.Message {
	return func(view []nous.Message) nous.Message {
		last := view[len(view)-1]
		if last.Role == nous.RoleUser {
			turn := 0
			for _, m := range view {
				if m.Role == nous.RoleUser {
					turn++
				}
			}
			made := make([]nous.ToolCall, len(calls))
			for i, c := range calls {
				made[i] = c
				made[i].ID = fmt.Sprint(c.ID, "-", turn)
			}
			return nous.AssistantMessage("", made...)
		}
		var results string
		for i := len(view) - 1; i >= 0 && view[i].Role == nous.RoleTool; i-- {
			results = view[i].Content + ";" + results
		}
		return nous.AssistantMessage("done: " + results)
	}
}

// counter counts the runs of each call of a tool, safe for concurrent use.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) add(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[id]++
	return c.runs[id]
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

// args returns JSON arguments of v.
func args(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
