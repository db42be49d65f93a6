//go:build !race

// The race detector changes what allocates, so the allocation budgets and
// the memory footprint are checked only without it: here, and for what only
// the package sees, in depscache_alloc_internal_test.go.

package nous_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// wantAllocs fails t unless f allocates at most max times per call, on
// average.
func wantAllocs(t *testing.T, name string, max float64, f func()) {
	t.Helper()
	if got := testing.AllocsPerRun(2000, f); got > max {
		t.Errorf("%s: %v allocations per call, budget %v", name, got, max)
	}
}

// TestAllocationBudgets checks the allocation budgets. Time targets are
// ratios of benchmarks and are not asserted here: they are measured by the
// benchmarks and recorded in BENCHMARKS.md.
func TestAllocationBudgets(t *testing.T) {
	call := nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	data := map[string]any{"tool": "get_weather", "attempt": 1}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	withCall := plainContext(t, 1000)
	must(withCall.AddMessage(nous.AssistantMessage("", call)))
	for _, tt := range []struct {
		name   string
		max    float64
		c      *nous.Context
		action func(c *nous.Context)
	}{
		// Amortized: the log allocates a chunk every 512 events and the
		// view grows by doubling.
		{"AddMessage plain", 2, plainContext(t, 1000), func(c *nous.Context) { must(c.AddMessage(benchMessage)) }},
		{"AddMessages plain batch of 1", 2, plainContext(t, 1000), func(c *nous.Context) { must(c.AddMessages(benchMessage)) }},
		{"All", 0, conversationContext(t, 1000), func(c *nous.Context) { sinkInt += walkAll(c) }},
		{"Messages plain", 1, plainContext(t, 1000), func(c *nous.Context) { sinkMsgs = c.Messages() }},
		{"LastMessage plain", 0, plainContext(t, 1000), func(c *nous.Context) { sinkMsg, _ = c.LastMessage() }},
		// The caller owns the copy: the ToolCalls slice and its Arguments
		// are copied.
		{"LastMessage with a tool call", 2, withCall, func(c *nous.Context) { sinkMsg, _ = c.LastMessage() }},
		// A handful per section of the document, none per event: the size
		// estimate sizes the buffer once (without it, 33).
		{"Serialize 1,000 messages", 24, conversationContext(t, 1000), func(c *nous.Context) { sinkBytes, _ = c.Serialize() }},
		{"LogEvent without data", 0, plainContext(t, 1000), func(c *nous.Context) { must(c.LogEvent(nous.EventStepStart, nil)) }},
		// No more than copying the event's own data.
		{"LogEvent with data", testing.AllocsPerRun(2000, func() { sinkMap = maps.Clone(data) }), plainContext(t, 1000),
			func(c *nous.Context) { must(c.LogEvent(nous.EventToolCall, data)) }},
	} {
		wantAllocs(t, tt.name, tt.max, func() { tt.action(tt.c) })
	}

	// All allocates nothing whatever the view holds and however the overlay
	// shows in it, nor when the loop breaks early.
	for name, c := range viewShapes(t) {
		wantAllocs(t, "All over "+name, 0, func() { sinkInt += walkAll(c) })
		wantAllocs(t, "All with an early break over "+name, 0, func() {
			for _, m := range c.All() {
				sinkInt += len(m.Content)
				break
			}
		})
	}

	// Clone shares the log and the view instead of copying them: a few
	// allocations, as many for a long conversation as for a short one.
	cloneAllocs := func(n int) float64 {
		c := nous.NewContext()
		for range n {
			mustAddAll(t, c, fullMessage())
		}
		return testing.AllocsPerRun(20, func() { sinkCtx = c.Clone() })
	}
	if short, long := cloneAllocs(10), cloneAllocs(5000); long != short || long > 10 {
		t.Errorf("Clone allocates %v times for 5000 messages, %v for 10: want the same, at most 10", long, short)
	}

	wantAllocs(t, "IsSecretKey of a plain key", 0, func() { nous.IsSecretKey("iteration") })
	wantAllocs(t, "IsSecretKey of a canonical header name", 0, func() { nous.IsSecretKey("Content-Type") })
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

// Appending to a list once per Apply costs O(1) amortized: the context keeps
// the list's spare capacity for itself instead of copying the list on every
// Apply. Copying would allocate about 16 bytes per item per Apply: 1,000
// Applies onto a 20,000-item list would allocate over 300 MB.
func TestApplyAppendIsAmortizedConstant(t *testing.T) {
	c := nous.NewContext()
	for i := range 20_000 {
		if err := nous.NewContextUpdate().Append("log", i).Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 1_000 {
		if err := nous.NewContextUpdate().Append("log", i).Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The budget holds the deps_update event the Apply records (its
	// record, data and operation, some 600 bytes).
	if perApply := (after.TotalAlloc - before.TotalAlloc) / 1_000; perApply >= 4_600 {
		t.Errorf("an Apply of one Append allocates %d bytes, budget 4,600", perApply)
	}
	if l, _ := nous.Dep[[]any](c.Deps, "log"); len(l) != 21_000 || l[19_999] != 19_999 || l[20_999] != 999 {
		t.Errorf("the list holds %d items, wrong ones", len(l))
	}
}

// TestMemoryFootprint measures the bytes a context of 100k messages holds
// against the bytes of the same messages in a plain []Message, each measured
// as the live heap after a GC: at most 2x.
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

// An idle Save (nothing new) compares the stored tool calls without
// allocating for them: 1,000 calls with metadata cost what 10 do.
func TestIdleSaveAllocations(t *testing.T) {
	idle := func(n int) func() {
		c := nous.NewContext()
		for i := range n {
			c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "f", Arguments: []byte(`{"a":1}`),
				Metadata: map[string]any{"thought_signature": "c2ln", "usage": map[string]any{"n": 1.5, "list": []any{"x", true, nil}}}})
		}
		s := storetest.NewMemory()
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := c.Save(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantAllocs(t, "idle Save with 1,000 tool calls", testing.AllocsPerRun(200, idle(10)), idle(1000))
}

// A save of a new message allocates what it allocates whatever the number
// of tool calls recorded before: they are events the save does not read
// again.
func TestSaveAllocationsIgnoreRecordedToolCalls(t *testing.T) {
	turn := func(n int) func() {
		c := nous.NewContext()
		for i := range n {
			c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "f", Arguments: []byte(`{"a":1}`),
				Metadata: map[string]any{"thought_signature": "c2ln"}})
		}
		s := storetest.NewMemory()
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := c.AddMessage(nous.UserMessage("next")); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantAllocs(t, "a save of a turn with 10,000 tool calls recorded", testing.AllocsPerRun(200, turn(10)), turn(10_000))
}

// A delta nobody listens to costs nothing.
func TestEmitDeltaUnheardAllocatesNothing(t *testing.T) {
	c := nous.NewContext(nous.WithCallbacks(map[string]nous.Callback{nous.CallbackLLMNewMessage: func(string, any) {}}))
	d := nous.Delta{Kind: nous.DeltaText, Text: "a piece of text"}
	if n := testing.AllocsPerRun(100, func() { c.EmitDelta(d) }); n != 0 {
		t.Errorf("%v allocations a delta", n)
	}
}
