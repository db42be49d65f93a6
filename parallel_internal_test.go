package nous

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous/internal/reftest"
)

// The concurrency contract: a Context is owned by one goroutine; the
// run-context snapshots it hands out may be read (and written: they are the
// tool's own) on any number of tool goroutines while the owner goes on
// adding messages and changing its deps; the owner applies the tools'
// updates in tool-call order. These tests check it under -race, and that the
// result does not depend on the order in which the tools finish.

const parTools = 12

// parTool is a tool: it reads all of its snapshot, nested maps and typed
// slices included, scribbles on it (it is the tool's own), and returns an
// update that depends on what it read and on which call it is.
func parTool(i int, rc RunContext) ContextUpdate {
	counter, _ := Dep[int](rc.Deps, "counter")
	config := rc.Deps["config"].(map[string]any)
	limit, _ := Dep[int](config["limits"].(map[string]any), "max")
	tags := config["tags"].([]any)
	labels := rc.Deps["labels"].([]string)
	label := labels[len(labels)-1]
	summary := fmt.Sprint(rc.Deps) // reads every value, at every depth
	for range i % 4 {
		runtime.Gosched()
	}

	// The snapshot is the tool's to change.
	rc.Deps["scratch"] = i
	config["limits"].(map[string]any)["scratch"] = i
	config["tags"] = append(tags, "tool")
	labels[0] = "tool"

	id := fmt.Sprintf("call_%02d", i)
	return NewContextUpdate().
		Append("results", map[string]any{"tool": i, "counter": counter, "max": limit, "tags": len(tags), "label": label, "summary_len": len(summary) > 0}).
		Merge("stats", map[string]any{"by_tool": map[string]any{id: counter}}).
		Set("last", i).
		LogEvent(EventToolCall, map[string]any{"id": id})
}

// parRun runs parTools tools in parallel against one context and returns
// the final deps, the ids of the tool_call events in log order, and the
// order in which the tools finished. With reverse set, tool i finishes only
// after tool i+1 has, so completion order is the reverse of call order.
func parRun(t *testing.T, reverse bool) (map[string]any, []any, []int) {
	c := NewContext(WithDeps(map[string]any{
		"counter": 0,
		"config":  map[string]any{"limits": map[string]any{"max": 3}, "tags": reftest.Spare(8, "a")},
		"labels":  []string{"l0"},
	}))
	require.NoError(t, c.AddMessage(UserMessage("run the tools")))
	calls := make([]ToolCall, parTools)
	for i := range calls {
		calls[i] = ToolCall{ID: fmt.Sprintf("call_%02d", i), Name: "tool"}
	}
	require.NoError(t, c.AddMessage(AssistantMessage("", calls...)))

	updates := make([]ContextUpdate, parTools) // by call index
	gates := make([]chan struct{}, parTools+1)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	close(gates[parTools])
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		finished []int
	)
	for i := range parTools {
		rc := c.ToRunContext(WithRetry(0))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if reverse {
				<-gates[i+1]
				defer close(gates[i])
			}
			u := parTool(i, rc)
			mu.Lock()
			finished = append(finished, i)
			mu.Unlock()
			updates[i] = u
		}()

		// The owner goes on while the tool runs: in-place writes into the
		// nested maps and lists of its deps, and new messages and events.
		cfg := c.Deps["config"].(map[string]any)
		cfg["limits"].(map[string]any)["max"] = i
		cfg["tags"] = append(cfg["tags"].([]any), i) // into spare capacity
		c.Deps["labels"].([]string)[0] = fmt.Sprintf("owner%d", i)
		c.Deps["labels"] = append(c.Deps["labels"].([]string), fmt.Sprintf("l%d", i+1))
		c.Deps["counter"] = i + 1
		require.NoError(t, c.LogEvent(EventStepStart, map[string]any{"i": i}))
	}
	for j := range 100 {
		c.Deps["config"].(map[string]any)["limits"].(map[string]any)["max"] = 1000 + j
		c.Deps["counter"] = parTools + j
		c.AddUsage(Usage{Requests: 1})
		runtime.Gosched()
	}
	c.Deps["counter"] = parTools
	c.Deps["config"].(map[string]any)["limits"].(map[string]any)["max"] = parTools
	wg.Wait()

	// Apply in tool-call order, whatever the completion order was.
	require.NoError(t, Combine(updates...).Apply(c))
	for _, call := range calls {
		require.NoError(t, c.AddMessage(ToolMessage(call.ID, call.Name, "done")))
	}
	var ids []any
	for _, e := range c.Log().Events() {
		if e.Type == EventToolCall {
			ids = append(ids, e.Data["id"])
		}
	}
	return reftest.Copy(c.Deps).(map[string]any), ids, finished
}

func TestParallelToolsDeterministic(t *testing.T) {
	var first map[string]any
	for run := range 20 {
		reverse := run%2 == 0
		deps, ids, finished := parRun(t, reverse)
		if reverse {
			for k, i := range finished {
				require.Equal(t, parTools-1-k, i, "the tools did not finish in reverse order: %v", finished)
			}
		}
		if first == nil {
			first = deps
			continue
		}
		require.Equal(t, first, deps, "run %d (reverse completion %v) differs from run 0", run, reverse)

		wantIDs := make([]any, parTools)
		for i := range wantIDs {
			wantIDs[i] = fmt.Sprintf("call_%02d", i)
		}
		require.Equal(t, wantIDs, ids, "tool_call events not in call order")
	}

	// What each tool saw is the context as it was when its snapshot was
	// taken, and the updates landed in call order.
	results := first["results"].([]any)
	require.Len(t, results, parTools)
	for i, r := range results {
		wantMax := i - 1
		if i == 0 {
			wantMax = 3
		}
		assert.Equal(t, map[string]any{"tool": i, "counter": i, "max": wantMax, "tags": 1 + i, "label": fmt.Sprintf("l%d", i), "summary_len": true}, r, "result %d", i)
	}
	assert.Equal(t, parTools-1, first["last"], "the last tool call's Set must win")
	byTool := first["stats"].(map[string]any)["by_tool"].(map[string]any)
	assert.Len(t, byTool, parTools)
	assert.Equal(t, 5, byTool["call_05"])
	_, scribbled := first["scratch"]
	assert.False(t, scribbled, "a tool's write into its snapshot reached the context")
	assert.NotContains(t, first["config"].(map[string]any)["limits"], "scratch")
	assert.Equal(t, parTools+1, len(first["config"].(map[string]any)["tags"].([]any)))
	assert.NotContains(t, first["labels"], "tool")
}

// TestParallelSnapshotsOfOneContext reads many snapshots of one context at
// once while the owner applies updates to it.
func TestParallelSnapshotsOfOneContext(t *testing.T) {
	c := NewContext(WithDeps(map[string]any{"m": map[string]any{"n": map[string]any{"v": 0}}, "l": []any{0}}))
	var wg sync.WaitGroup
	for i := range 8 {
		rc := c.ToRunContext()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				v := rc.Deps["m"].(map[string]any)["n"].(map[string]any)["v"]
				if v != i {
					t.Errorf("snapshot %d saw v = %v", i, v)
					return
				}
				if got := len(rc.Deps["l"].([]any)); got != i+1 {
					t.Errorf("snapshot %d saw %d items", i, got)
					return
				}
				runtime.Gosched()
			}
		}()
		u := NewContextUpdate().Merge("m", map[string]any{"n": map[string]any{"v": i + 1}}).Append("l", i+1)
		require.NoError(t, u.Apply(c))
		c.Deps["m"].(map[string]any)["n"].(map[string]any)["w"] = i // in place, too
	}
	wg.Wait()
	assert.Equal(t, 8, c.Deps["m"].(map[string]any)["n"].(map[string]any)["v"])
	assert.Len(t, c.Deps["l"], 9)
}
