package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/storetest"
)

// benchStores are the stores the turn benchmarks run on: in memory, and
// the file store with fsync.
func benchStores(b *testing.B) map[string]func() nous.Store {
	return map[string]func() nous.Store{
		"memory": func() nous.Store { return storetest.NewMemory() },
		"file": func() nous.Store {
			s, err := filestore.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// benchModel is the turn of the benchmarks: to a user's message, two
// calls of the tool "echo"; to their results, a reply.
var benchModel = toolLoop(nous.ToolCall{ID: "x", Name: "echo", Arguments: []byte(`{}`)}, nous.ToolCall{ID: "y", Name: "echo", Arguments: []byte(`{}`)})

func echoTool() agent.Tool {
	def, _ := nous.NewTool("echo", "Echo.", nil)
	return agent.Tool{Def: def, Run: func(context.Context, nous.RunContext) nous.ToolResult { return nous.ToolResult{Content: "echo"} }}
}

// BenchmarkTurn is a turn of a stored session, one user message, two tool
// calls and a reply, five saves: by the runner (runner), and written by
// hand on the same primitives, the same saves in the same order (hand),
// so that their ratio is the runner's own cost; and by hand without the
// write-ahead save of the calls' starts (no-write-ahead), so that the
// difference is what the write-ahead costs, per tool call half of it.
func BenchmarkTurn(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name+"/runner", func(b *testing.B) {
			r := &agent.Runner{Model: &fakeModel{reply: benchModel}, Tools: []agent.Tool{echoTool()}, Store: open(),
				Options: []nous.Option{nous.WithMaxIterations(1 << 30)}}
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
			label := map[bool]string{true: "/hand", false: "/no-write-ahead"}[writeAhead]
			b.Run(name+label, func(b *testing.B) {
				s, ctx, i := open(), context.Background(), 0
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
}

// handTurn is BenchmarkTurn's turn written by hand on nous's primitives,
// as a user without the runner would, on c, the session the last turn
// left (nil for none): resume it or refresh it, add the message and save
// it under its key; call the model and save; start the calls and save
// (when writeAhead); run them and save; call the model and save.
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
	return c, handSteps(ctx, s, c, msg, key, writeAhead)
}

// handSteps are the steps of handTurn once c is up to date.
func handSteps(ctx context.Context, s nous.Store, c *nous.Context, msg, key string, writeAhead bool) error {
	if err := c.AddMessage(nous.UserMessage(msg)); err != nil {
		return err
	}
	c.SetBatchKey(key)
	if err := c.Save(ctx, s); err != nil {
		return err
	}
	model, tool := &fakeModel{reply: benchModel}, echoTool()
	req := nous.ModelRequest{Tools: []nous.Tool{tool.Def}}
	if _, err := model.Call(ctx, c, req); err != nil {
		return err
	}
	if err := c.Save(ctx, s); err != nil {
		return err
	}
	p := c.Pending()
	calls := make([]nous.ToolCall, len(p.Calls))
	for i, pc := range p.Calls {
		calls[i] = pc.Call
		if writeAhead {
			if _, err := c.StartToolCall(pc.Call.ID, nous.Lease{Owner: "hand"}); err != nil {
				return err
			}
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
	if _, err := model.Call(ctx, c, req); err != nil {
		return err
	}
	return c.Save(ctx, s)
}
