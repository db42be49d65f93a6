//go:build !race

// The race detector changes what allocates, so the budgets are checked only
// without it.

package nous_test

import (
	"maps"
	"runtime"
	"testing"

	"github.com/nous-go/nous"
)

// TestAllocationBudgets checks the allocation budgets. Time
// targets are ratios of benchmarks and are not asserted here: they are
// measured by the benchmarks and recorded in BENCHMARKS.md.
func TestAllocationBudgets(t *testing.T) {
	const runs = 2000
	call := nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	data := map[string]any{"tool": "get_weather", "attempt": 1}

	tests := []struct {
		name   string
		max    float64
		setup  func() *nous.Context
		action func(c *nous.Context)
	}{
		{
			// Amortized: the log allocates a chunk every 512 events and the
			// view grows by doubling.
			name:  "AddMessage plain",
			max:   2,
			setup: func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) {
				if err := c.AddMessage(benchMessage); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "AddMessages plain batch of 1",
			max:   2,
			setup: func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) {
				if err := c.AddMessages(benchMessage); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "All",
			max:   0,
			setup: func() *nous.Context { return conversationContext(t, 1000) },
			action: func(c *nous.Context) {
				k := 0
				for _, m := range c.All() {
					k += len(m.Content)
				}
				sinkInt += k
			},
		},
		{
			name:   "Messages plain",
			max:    1,
			setup:  func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) { sinkMsgs = c.Messages() },
		},
		{
			name:   "LastMessage plain",
			max:    0,
			setup:  func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) { sinkMsg, _ = c.LastMessage() },
		},
		{
			name: "LastMessage with a tool call",
			// The caller owns the copy: the ToolCalls slice and its
			// Arguments are copied.
			max: 2,
			setup: func() *nous.Context {
				c := plainContext(t, 1000)
				if err := c.AddMessage(nous.AssistantMessage("", call)); err != nil {
					t.Fatal(err)
				}
				return c
			},
			action: func(c *nous.Context) { sinkMsg, _ = c.LastMessage() },
		},
		{
			// A handful per section of the document, none per event: the
			// size estimate sizes the buffer once (without it, 33).
			name:   "Serialize 1,000 messages",
			max:    24,
			setup:  func() *nous.Context { return conversationContext(t, 1000) },
			action: func(c *nous.Context) { sinkBytes, _ = c.Serialize() },
		},
		{
			name:  "LogEvent without data",
			max:   0,
			setup: func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) {
				if err := c.LogEvent(nous.EventStepStart, nil); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			// No more than copying the event's own data.
			name:  "LogEvent with data",
			max:   testing.AllocsPerRun(runs, func() { sinkMap = maps.Clone(data) }),
			setup: func() *nous.Context { return plainContext(t, 1000) },
			action: func(c *nous.Context) {
				if err := c.LogEvent(nous.EventToolCall, data); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.setup()
			got := testing.AllocsPerRun(runs, func() { tt.action(c) })
			if got > tt.max {
				t.Errorf("%s: %v allocations per call, budget %v", tt.name, got, tt.max)
			}
		})
	}
}

// TestAddMessageAmortizedAllocs checks the per-message allocations of a long
// run exactly, including the log's chunks and the view's growth, which
// AllocsPerRun's integer average would round away.
func TestAddMessageAmortizedAllocs(t *testing.T) {
	const n = 20_000
	c := nous.NewContext()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if err := c.AddMessage(benchMessage); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perMsg := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("AddMessage: %.4f allocations per plain message over %d", perMsg, n)
	if perMsg > 2 {
		t.Errorf("AddMessage: %.4f allocations per plain message, budget 2", perMsg)
	}
}

// TestMemoryFootprint measures the bytes a context of 100k messages holds
// against the bytes of the same messages in a plain []Message, each measured
// as the live heap after a GC. Issue 4's target is at most 2x.
func TestMemoryFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100k messages twice")
	}
	const n = 100_000
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	h0 := heap()
	msgs := conversation(n)
	msgBytes := heap() - h0
	c := nous.NewContext()
	if err := c.AddMessages(msgs...); err != nil {
		t.Fatal(err)
	}
	msgs = nil // the context keeps the strings alive, and its own copies of the rest
	ctxBytes := heap() - h0
	runtime.KeepAlive(c)
	runtime.KeepAlive(msgs)
	ratio := float64(ctxBytes) / float64(msgBytes)
	t.Logf("%d messages: []Message holds %d B (%.0f B/msg), the context %d B (%.0f B/msg): %.2fx",
		n, msgBytes, float64(msgBytes)/n, ctxBytes, float64(ctxBytes)/n, ratio)
	if ratio > 2 {
		t.Errorf("a context of %d messages holds %.2fx the bytes of its messages, budget 2x", n, ratio)
	}
}

// TestAllocsIndependentOfLength checks that Clone, and an Apply that appends
// one item to a list the context already holds, allocate the same at 1k as
// at 100k: neither copies anything proportional to the log or the list.
// (Their times are compared by BenchmarkClone and
// BenchmarkApplyAppendPerTurn.)
func TestAllocsIndependentOfLength(t *testing.T) {
	if testing.Short() {
		t.Skip("builds contexts of 100k messages and lists of 100k items")
	}
	const runs = 1000
	append1 := nous.NewContextUpdate().Append("items", "turn")
	type cost struct{ allocs, bytes float64 }
	measure := func(f func()) cost {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		return cost{float64(after.Mallocs-before.Mallocs) / runs, float64(after.TotalAlloc-before.TotalAlloc) / runs}
	}
	costs := func(n int) map[string]cost {
		c := plainContext(t, n)
		c.MergeDeps(map[string]any{"user": "ada", "city": "Paris"})
		out := map[string]cost{
			"Clone":    measure(func() { sinkCtx = c.Clone() }),
			"Log":      measure(func() { sinkInt += c.Log().Len() }),
			"Snapshot": measure(func() { sinkInt += c.Log().Snapshot().Len() }),
		}
		l := nous.NewContext()
		for i := range n {
			if err := nous.NewContextUpdate().Append("items", i).Apply(l); err != nil {
				t.Fatal(err)
			}
		}
		out["Apply of one Append"] = measure(func() {
			if err := append1.Apply(l); err != nil {
				t.Fatal(err)
			}
		})
		return out
	}
	small, large := costs(1_000), costs(100_000)
	for name, s := range small {
		l := large[name]
		t.Logf("%s: %.1f allocs, %.0f B at 1k; %.1f allocs, %.0f B at 100k", name, s.allocs, s.bytes, l.allocs, l.bytes)
		// Allocation counts must not grow; bytes may vary by a few
		// words (a map's buckets), not by anything proportional to n.
		if l.allocs > s.allocs+0.01 || l.bytes > s.bytes+64 {
			t.Errorf("%s: %.1f allocs, %.0f B at 100k against %.1f, %.0f B at 1k", name, l.allocs, l.bytes, s.allocs, s.bytes)
		}
	}
	if c := small["Log"]; c.allocs != 0 {
		t.Errorf("Log allocates %.1f times per call, want 0", c.allocs)
	}
}
