package nous_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// Sixteen tools run at once, each on its own snapshot, while nothing writes
// the context; their results and updates land in call order whatever order
// they finish in; a panic and a failed update become error results; the
// view pairs. Run it with -race.
func TestRunToolCallsSixteenInParallel(t *testing.T) {
	rec := &nous.LogRecorder{}
	c := nous.NewContext(nous.WithLogger(slog.New(rec)), nous.WithDeps(map[string]any{"items": []any{}, "scalar": "x"}))
	require.NoError(t, c.AddMessage(nous.UserMessage("go")))
	var calls []nous.ToolCall
	for i := range 16 {
		calls = append(calls, nous.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "work", Arguments: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
	}
	require.NoError(t, c.AddMessage(nous.AssistantMessage("", calls...)))

	var running, most atomic.Int32
	err := c.RunToolCalls(context.Background(), calls, func(ctx context.Context, rc nous.RunContext) nous.ToolResult {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		var args struct{ I int }
		if err := rc.Call.ParseArguments(&args); err != nil {
			return nous.ToolResult{Err: err}
		}
		time.Sleep(time.Duration(16-args.I) * time.Millisecond)          // the last call finishes first
		rc.Deps["items"] = append(rc.Deps["items"].([]any), "scribbled") // its own copy
		switch args.I {
		case 3:
			panic("tool 3 blew up")
		case 5:
			return nous.ToolResult{Err: fmt.Errorf("no network")}
		case 7:
			return nous.ToolResult{Content: "seven", Update: nous.NewContextUpdate().Append("scalar", 1)} // fails to apply
		}
		return nous.ToolResult{Content: fmt.Sprint("done ", args.I), Update: nous.NewContextUpdate().Append("items", args.I)}
	})
	require.Error(t, err)
	require.ErrorIs(t, err, nous.ErrTypeMismatch)
	assert.Contains(t, err.Error(), `"call_7"`)
	assert.NotContains(t, err.Error(), `"call_3"`, "a tool's own failure is its result, not an error of the run")
	assert.Greater(t, most.Load(), int32(1), "the tools ran at once")

	var want []any
	for i := range 16 {
		if i != 3 && i != 5 && i != 7 {
			want = append(want, i)
		}
	}
	assert.Equal(t, want, c.Deps["items"], "updates in call order")
	assert.Equal(t, "x", c.Deps["scalar"], "the failed update changed nothing")

	view := c.Messages()
	require.Len(t, view, 18)
	for i, m := range view[2:] {
		require.Equal(t, fmt.Sprintf("call_%d", i), m.ToolCallID, "results in call order")
		switch i {
		case 3:
			assert.True(t, m.IsError())
			assert.Contains(t, m.Content, "failed: tool 3 blew up")
		case 5:
			assert.True(t, m.IsError())
			assert.Equal(t, "no network", m.Content)
		case 7:
			assert.True(t, m.IsError(), "its update failed")
			assert.Contains(t, m.Content, "seven")
			assert.Contains(t, m.Content, "was not made", "it says why")
		default:
			assert.False(t, m.IsError())
			assert.Equal(t, fmt.Sprint("done ", i), m.Content)
		}
	}
	require.NoError(t, c.CheckToolPairing())
	assert.True(t, c.NeedsResponse)
	assert.NotEmpty(t, rec.Matching("panicked"), "the panic's stack is logged")
	assert.True(t, strings.Contains(strings.Join(rec.Matching("panicked"), ""), "call_3"))
}

// A context already done runs nothing and changes nothing; a tool that
// honours ctx gives its error as its result.
func TestRunToolCallsCanceled(t *testing.T) {
	c := nous.NewContext()
	calls := []nous.ToolCall{{ID: "a", Name: "slow"}}
	require.NoError(t, c.AddMessage(nous.AssistantMessage("", calls...)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := c.RunToolCalls(ctx, calls, func(context.Context, nous.RunContext) nous.ToolResult { ran = true; return nous.ToolResult{} })
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran)
	assert.Equal(t, 1, c.Len())

	// Done while the tool runs (not before: a deadline would race the
	// check above on a slow machine).
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	err = c.RunToolCalls(ctx, calls, func(ctx context.Context, _ nous.RunContext) nous.ToolResult {
		cancel()
		<-ctx.Done()
		return nous.ToolResult{Err: ctx.Err()}
	})
	require.NoError(t, err)
	last, _ := c.LastMessage()
	assert.True(t, last.IsError())
	assert.Contains(t, last.Content, "context canceled")
}

// A call without an id is refused before anything runs: no result could
// answer it, and the context saved would not load. A tool writing its call
// writes its own copy.
func TestRunToolCallsRefusesAndCopies(t *testing.T) {
	c := nous.NewContext()
	calls := []nous.ToolCall{{ID: "a", Name: "f", Metadata: map[string]any{"sig": "x"}}, {Name: "g"}}
	require.ErrorIs(t, c.RunToolCalls(context.Background(), calls, func(context.Context, nous.RunContext) nous.ToolResult { return nous.ToolResult{} }), nous.ErrInvalidMessage)
	assert.Zero(t, c.Len())
	require.Error(t, c.RunToolCalls(context.Background(), calls[:1], nil))

	require.NoError(t, c.AddMessage(nous.AssistantMessage("", calls[0])))
	require.NoError(t, c.RunToolCalls(context.Background(), calls[:1], func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		rc.Call.Metadata["sig"] = "scribbled"
		return nous.ToolResult{Content: "ok"}
	}))
	assert.Equal(t, "x", c.Messages()[0].ToolCalls[0].Metadata["sig"])
	assert.Equal(t, "x", calls[0].Metadata["sig"])
}

// Arguments keep their bytes through json.Marshal of a tool call too, which
// escapes HTML characters and U+2028, and a document stays valid UTF-8.
func TestArgumentsThroughJSONMarshal(t *testing.T) {
	for _, args := range []string{`{"q":"a<b && c>d"}`, "{\"s\":\"\u2028\"}", "{\"a\":\"\xff\"}"} {
		b, err := json.Marshal(nous.ToolCall{ID: "c", Arguments: json.RawMessage(args)})
		require.NoError(t, err)
		var tc nous.ToolCall
		require.NoError(t, json.Unmarshal(b, &tc))
		if utf8.ValidString(args) {
			assert.Equal(t, args, string(tc.Arguments))
		}
		c := nous.NewContext(nous.WithMessages(nous.AssistantMessage("", nous.ToolCall{ID: "c", Arguments: json.RawMessage(args)})))
		data, err := c.Serialize()
		require.NoError(t, err)
		assert.True(t, utf8.Valid(data), "the document is UTF-8")
	}
}

// A tool that fails has its update dropped: the result is an error result
// with the tool's content, and neither the deps nor the log get what the
// update carried; the other calls' updates apply.
func TestRunToolCallsFailedToolUpdateNotApplied(t *testing.T) {
	c := nous.NewContext(nous.WithDeps(map[string]any{"n": 0}))
	calls := []nous.ToolCall{{ID: "ok", Name: "f"}, {ID: "bad", Name: "f"}}
	require.NoError(t, c.AddMessage(nous.AssistantMessage("", calls...)))
	before := c.Log().Len()
	err := c.RunToolCalls(context.Background(), calls, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		if rc.Call.ID == "bad" {
			return nous.ToolResult{Content: "it broke", Err: fmt.Errorf("boom"),
				Update: nous.NewContextUpdate().Set("failed", true).LogEvent(nous.EventStepEnd, map[string]any{"from": "bad"})}
		}
		return nous.ToolResult{Content: "done", Update: nous.NewContextUpdate().Set("n", 1)}
	})
	require.NoError(t, err, "a tool's own error is its result, not RunToolCalls' error")
	assert.Equal(t, 1, c.Deps["n"], "the good call's update applies")
	_, ok := c.Deps["failed"]
	assert.False(t, ok, "the failed call's update does not")
	assert.Equal(t, before+5, c.Log().Len(), "two recorded calls, two results, the good update's deps_update and no event of the failed update")
	deps, err := c.Log().Deps(int64(c.Log().Len()))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": 1}, deps, "the log records the good update, not the failed one")
	assert.Equal(t, []nous.ToolCall{calls[0], calls[1]}, c.ToolCalls, "every call run is recorded")
	last, _ := c.LastMessage()
	assert.Equal(t, "bad", last.ToolCallID)
	assert.Equal(t, "it broke", last.Content)
	assert.Equal(t, true, last.Metadata[nous.MetadataIsError])
}

// RunToolCalls runs only calls the view ends waiting for: a call no
// assistant message made, one already answered, or one given twice is
// refused before anything runs, and nothing changes.
func TestRunToolCallsRefusesCallsTheViewDoesNotWaitFor(t *testing.T) {
	run := func(context.Context, nous.RunContext) nous.ToolResult { return nous.ToolResult{Content: "ok"} }
	a, b := nous.ToolCall{ID: "a", Name: "f"}, nous.ToolCall{ID: "b", Name: "f"}
	for name, tt := range map[string]struct {
		view  []nous.Message
		calls []nous.ToolCall
	}{
		"no assistant message":      {[]nous.Message{nous.UserMessage("hi")}, []nous.ToolCall{a}},
		"a call of another message": {[]nous.Message{nous.AssistantMessage("", b)}, []nous.ToolCall{a}},
		"a call answered already":   {[]nous.Message{nous.AssistantMessage("", a, b), nous.ToolMessage("a", "f", "done")}, []nous.ToolCall{a}},
		"one call given twice":      {[]nous.Message{nous.AssistantMessage("", a)}, []nous.ToolCall{a, a}},
		"a call of an earlier turn": {[]nous.Message{nous.AssistantMessage("", a), nous.UserMessage("next")}, []nous.ToolCall{a}},
	} {
		t.Run(name, func(t *testing.T) {
			c := nous.NewContext()
			require.NoError(t, c.AddMessages(tt.view...))
			before := c.Log().Len()
			var ran atomic.Int32
			err := c.RunToolCalls(context.Background(), tt.calls, func(ctx context.Context, rc nous.RunContext) nous.ToolResult {
				ran.Add(1)
				return run(ctx, rc)
			})
			require.ErrorIs(t, err, nous.ErrUnpaired)
			assert.Zero(t, ran.Load(), "nothing ran")
			assert.Equal(t, before, c.Log().Len(), "nothing changed")
		})
	}
	c := nous.NewContext()
	require.NoError(t, c.AddMessages(nous.AssistantMessage("", a, b), nous.ToolMessage("a", "f", "done")))
	require.NoError(t, c.RunToolCalls(context.Background(), []nous.ToolCall{b}, run), "the call still waiting runs")
	require.NoError(t, c.CheckToolPairing())
}
