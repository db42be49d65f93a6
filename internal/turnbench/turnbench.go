// Package turnbench is the benchmark of a turn on any store: the runner's
// own cost against the same turn written by hand on nous's primitives,
// and the cost of the write-ahead of tool calls.
package turnbench

import (
	"context"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
)

// Run runs the benchmarks of a turn (one user message, two tool calls, a
// reply: five saves) on stores open gives, each sub-benchmark its own:
// the runner's turn (runner); the same turn by hand on the same
// primitives, the same saves in the same order (hand), so that their ratio
// is the runner's own cost; and by hand without the write-ahead save of
// the calls' starts (no-write-ahead), so that the difference with hand is
// what the write-ahead costs, half of it per tool call.
func Run(b *testing.B, open func(b *testing.B) nous.Store) {
	b.Run("runner", func(b *testing.B) {
		r := &agent.Runner{Model: model{}, Tools: []agent.Tool{echo()}, Store: open(b), Options: []nous.Option{nous.WithMaxIterations(1 << 30)}}
		ctx, i := context.Background(), 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			if _, err := r.Run(ctx, "bench", agent.Input{Messages: []nous.Message{nous.UserMessage(fmt.Sprint("turn ", i))}, Key: fmt.Sprint("k", i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, writeAhead := range []bool{true, false} {
		b.Run(map[bool]string{true: "hand", false: "no-write-ahead"}[writeAhead], func(b *testing.B) {
			s, ctx, i := open(b), context.Background(), 0
			var c *nous.Context
			b.ReportAllocs()
			for b.Loop() {
				i++
				var err error
				if c, err = handTurn(ctx, s, c, fmt.Sprint("turn ", i), fmt.Sprint("k", i), writeAhead); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// model is the turn's model: to a user's message, two calls of echo; to
// their results, a reply. It looks at the view's last message only, so
// that it costs the same however long the session grows.
type model struct{}

func (model) Call(_ context.Context, c *nous.Context, _ nous.ModelRequest) (nous.Message, error) {
	last, _ := c.LastMessage()
	reply := nous.AssistantMessage("done")
	if last.Role == nous.RoleUser {
		n := c.Log().Len()
		reply = nous.AssistantMessage("", nous.ToolCall{ID: fmt.Sprint("x", n), Name: "echo", Arguments: []byte(`{}`)},
			nous.ToolCall{ID: fmt.Sprint("y", n), Name: "echo", Arguments: []byte(`{}`)})
	}
	if err := c.AddMessage(reply); err != nil {
		return nous.Message{}, err
	}
	c.EndStep(nous.Step{Provider: "bench", Model: "bench", Usage: nous.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}})
	return reply, nil
}

// echo is the turn's tool.
func echo() agent.Tool {
	def, _ := nous.NewTool("echo", "Echo.", nil)
	return agent.Tool{Def: def, Run: func(context.Context, nous.RunContext) nous.ToolResult { return nous.ToolResult{Content: "echo"} }}
}

// handTurn is the turn written by hand on nous's primitives, as a user
// without the runner would, on c, the session the last turn left (nil for
// none): resume it or refresh it, add the message and save it under its
// key; call the model and save; start the calls and save (when
// writeAhead); run them and save; call the model and save.
func handTurn(ctx context.Context, s nous.Store, c *nous.Context, msg, key string, writeAhead bool) (*nous.Context, error) {
	var err error
	if c == nil {
		c, _, err = nous.Resume(ctx, s, "bench", nous.WithMaxIterations(1<<30))
	} else {
		err = c.Refresh(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	return c, steps(ctx, s, c, msg, key, writeAhead)
}

// steps are handTurn's steps once c is up to date.
func steps(ctx context.Context, s nous.Store, c *nous.Context, msg, key string, writeAhead bool) error {
	if err := c.AddMessage(nous.UserMessage(msg)); err != nil {
		return err
	}
	c.SetBatchKey(key)
	if err := c.Save(ctx, s); err != nil {
		return err
	}
	tool := echo()
	req := nous.ModelRequest{Tools: []nous.Tool{tool.Def}}
	if _, err := (model{}).Call(ctx, c, req); err != nil {
		return err
	}
	if err := c.Save(ctx, s); err != nil {
		return err
	}
	p := c.Pending()
	calls := make([]nous.ToolCall, len(p.Calls))
	for i, pc := range p.Calls {
		calls[i] = pc.Call
		if !writeAhead {
			continue
		}
		if _, err := c.StartToolCall(pc.Call.ID, nous.Lease{Owner: "hand"}); err != nil {
			return err
		}
	}
	if writeAhead {
		if err := c.Save(ctx, s); err != nil {
			return err
		}
	}
	if err := c.RunToolCalls(ctx, calls, tool.Run); err != nil {
		return err
	}
	if err := c.Save(ctx, s); err != nil {
		return err
	}
	if _, err := (model{}).Call(ctx, c, req); err != nil {
		return err
	}
	return c.Save(ctx, s)
}
