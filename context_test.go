package nous_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// Messages with a fixed CreatedAt, so that views compare field by field.
func mSystem(s string) nous.Message {
	return nous.Message{Role: nous.RoleSystem, Content: s, CreatedAt: t0}
}
func mUser(s string) nous.Message {
	return nous.Message{Role: nous.RoleUser, Content: s, CreatedAt: t0}
}
func mAssistant(s string, calls ...nous.ToolCall) nous.Message {
	return nous.Message{Role: nous.RoleAssistant, Content: s, ToolCalls: calls, CreatedAt: t0}
}
func mTool(id, s string) nous.Message {
	return nous.Message{Role: nous.RoleTool, ToolCallID: id, Content: s, CreatedAt: t0}
}

// at returns t0 plus n seconds.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

// viewTexts returns the Text of every message of c's view.
func viewTexts(c *nous.Context) []string {
	var out []string
	for _, m := range c.Messages() {
		out = append(out, m.Text())
	}
	return out
}

// mustAddAll adds msgs one by one and fails the test on any error.
func mustAddAll(t testing.TB, c *nous.Context, msgs ...nous.Message) {
	t.Helper()
	for _, m := range msgs {
		require.NoError(t, c.AddMessage(m))
	}
}

// ctxState is everything an operation that fails must leave as it was.
type ctxState struct {
	Messages      []nous.Message
	Events        []nous.Event
	Len, LogLen   int
	NeedsResponse bool
	Overlay       string
}

func stateOf(c *nous.Context) ctxState {
	return ctxState{c.Messages(), c.Log().Events(), c.Len(), c.Log().Len(), c.NeedsResponse, c.SystemPromptOverlay()}
}

// requireFolds checks that c's view is the fold of its log plus the overlay.
func requireFolds(t testing.TB, c *nous.Context) {
	t.Helper()
	folded, err := nous.Fold(c.Log().Events())
	require.NoError(t, err)
	view := c.Messages()
	require.Equal(t, overlaid(folded, c.SystemPromptOverlay(), c.StartedAt), view)
}

// overlaid applies the overlay rule to a folded view: the overlay is
// appended to a leading system message (to its Content after "\n\n", or as
// a text part starting with "\n\n" when it has only parts), or put before the view as a system
// message of its own, stamped like the message it goes before or, on an
// empty view, with the start of the run, so that the view's timestamps do
// not decrease.
func overlaid(folded []nous.Message, overlay string, startedAt time.Time) []nous.Message {
	if overlay == "" {
		return folded
	}
	out := append([]nous.Message(nil), folded...)
	if len(out) > 0 && out[0].Role == nous.RoleSystem {
		lead := out[0]
		switch {
		case lead.Content != "":
			lead.Content += "\n\n" + overlay
		case len(lead.Parts) > 0:
			lead.Parts = append(append([]nous.ContentPart(nil), lead.Parts...), nous.TextPart("\n\n"+overlay))
		default:
			lead.Content = overlay
		}
		out[0] = lead
		return out
	}
	lead := nous.Message{Role: nous.RoleSystem, Content: overlay, CreatedAt: startedAt}
	if len(out) > 0 {
		lead.CreatedAt = out[0].CreatedAt
	}
	return append([]nous.Message{lead}, out...)
}

// viewShapes returns a new context of every shape a view takes: empty and
// zero, messages with maps and slices and bookkeeping between them, an
// overlay joined to a system message or standing alone, and a log of two
// chunks with a long range replaced, whose view a clone shares, and the
// clone that went on.
func viewShapes(t testing.TB) map[string]*nous.Context {
	plain := nous.NewContext()
	mustAddAll(t, plain, mSystem("s"))
	for range 50 {
		mustAddAll(t, plain, mUser("u"), fullMessage())
		require.NoError(t, plain.LogEvent(nous.EventTurnEnd, nil))
	}
	overlaid, synthetic := nous.NewContext(), nous.NewContext()
	mustAddAll(t, overlaid, mSystem("s"), mUser("u"))
	overlaid.SetSystemPromptOverlay("o")
	mustAddAll(t, synthetic, mUser("u"), mAssistant("a"))
	synthetic.SetSystemPromptOverlay("o")
	replaced := nous.NewContext()
	for range 600 {
		mustAddAll(t, replaced, mUser("u"))
	}
	require.NoError(t, replaced.ReplaceMessageRange(10, 500, mUser("summary")))
	clone := replaced.Clone()
	mustAddAll(t, clone, mUser("d"))
	return map[string]*nous.Context{"empty": nous.NewContext(), "zero": {}, "plain": plain, "overlaid": overlaid,
		"synthetic overlay": synthetic, "replaced and cloned": replaced, "a clone that went on": clone}
}

func TestNewContextDefaults(t *testing.T) {
	before := time.Now().Add(-time.Second)
	c := nous.NewContext()
	after := time.Now().Add(time.Second)

	assert.Empty(t, c.Messages())
	assert.Equal(t, 0, c.Len())
	assert.NotNil(t, c.Deps)
	assert.Empty(t, c.Deps)
	assert.Equal(t, nous.Usage{}, c.Usage)
	assert.True(t, c.NeedsResponse)
	assert.Equal(t, 0, c.Iteration)
	assert.Equal(t, 10, c.MaxIterations)
	assert.False(t, c.Stream)
	assert.Empty(t, c.SystemPrompt)
	assert.Empty(t, c.AgentName)
	assert.Empty(t, c.ToolCalls)
	assert.Nil(t, c.CancellationCheck)
	assert.NoError(t, c.Canceled())
	assert.Equal(t, time.UTC, c.StartedAt.Location())
	assert.True(t, c.StartedAt.After(before) && c.StartedAt.Before(after), "StartedAt %v", c.StartedAt)
	assert.Equal(t, 0, c.Log().Len())
	assert.Equal(t, uuid.Version(7), c.Log().ID().Version())
	_, _, ok := c.Log().Parent()
	assert.False(t, ok)
	assert.NotEqual(t, c.Log().ID(), nous.NewContext().Log().ID(), "every context has its own log ID")
}

func TestNewContextOptions(t *testing.T) {
	stop := errors.New("stop")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	notified := 0
	tests := []struct {
		name  string
		opts  []nous.Option
		check func(t *testing.T, c *nous.Context)
	}{
		{"system prompt", []nous.Option{nous.WithSystemPrompt("be kind")}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, "be kind", c.SystemPrompt)
			assert.Empty(t, c.Messages(), "the system prompt is not a message")
		}},
		{"deps", []nous.Option{nous.WithDeps(map[string]any{"user_id": 123})}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, map[string]any{"user_id": 123}, c.Deps)
		}},
		{"nil deps", []nous.Option{nous.WithDeps(nil)}, func(t *testing.T, c *nous.Context) {
			assert.NotNil(t, c.Deps)
			assert.Empty(t, c.Deps)
		}},
		{"max iterations", []nous.Option{nous.WithMaxIterations(15)}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, 15, c.MaxIterations)
		}},
		{"later option wins", []nous.Option{nous.WithMaxIterations(3), nous.WithMaxIterations(5)}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, 5, c.MaxIterations)
		}},
		{"iteration", []nous.Option{nous.WithMaxIterations(5), nous.WithIteration(5)}, func(t *testing.T, c *nous.Context) {
			assert.True(t, c.MaxIterationsReached())
		}},
		{"usage", []nous.Option{nous.WithUsage(nous.Usage{InputTokens: 4})}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, nous.Usage{InputTokens: 4}, c.Usage)
		}},
		{"agent name", []nous.Option{nous.WithAgentName("scout")}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, "scout", c.AgentName)
		}},
		{"cancellation check", []nous.Option{nous.WithCancellationCheck(func() error { return stop })}, func(t *testing.T, c *nous.Context) {
			assert.ErrorIs(t, c.Canceled(), stop)
		}},
		{"stream", []nous.Option{nous.WithStream(true)}, func(t *testing.T, c *nous.Context) {
			assert.True(t, c.Stream)
		}},
		{"runtime fields", []nous.Option{
			nous.WithCallbacks(map[string]nous.Callback{"delta": func(string, any) {}}),
			nous.WithNotify(func(string, any) { notified++ }),
			nous.WithApprovalHandler(func(tc nous.ToolCall) (nous.ToolCall, bool) { return tc, false }),
			nous.WithLogger(logger),
		}, func(t *testing.T, c *nous.Context) {
			assert.Contains(t, c.Callbacks, "delta")
			c.Notify("x", nil)
			assert.Equal(t, 1, notified)
			_, ok := c.ApprovalHandler(nous.ToolCall{ID: "c"})
			assert.False(t, ok)
			assert.Same(t, logger, c.Logger)
		}},
		{"messages", []nous.Option{nous.WithMessages(mSystem("s"), mUser("u"), mAssistant("a"))}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, []nous.Message{mSystem("s"), mUser("u"), mAssistant("a")}, c.Messages())
			assert.True(t, c.NeedsResponse, "seeding messages leave it at its default, as in the reference")
			assert.Equal(t, 3, c.Log().Len())
		}},
		{"invalid message skipped with a warning", []nous.Option{nous.WithLogger(logger), nous.WithMessages(mUser("u"), nous.Message{Role: "bogus"}, mUser("v"))}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, []string{"u", "v"}, viewTexts(c))
			assert.Contains(t, logs.String(), "skipped")
			assert.Contains(t, logs.String(), "bogus")
		}},
		{"messages add up", []nous.Option{nous.WithMessages(mUser("u")), nous.WithMessages(mAssistant("a"))}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, []string{"u", "a"}, viewTexts(c))
		}},
		{"needs response off", []nous.Option{nous.WithNeedsResponse(false)}, func(t *testing.T, c *nous.Context) {
			assert.False(t, c.NeedsResponse)
		}},
		{"messages leave needs response as the option sets it", []nous.Option{nous.WithMessages(mUser("u")), nous.WithNeedsResponse(false)}, func(t *testing.T, c *nous.Context) {
			assert.False(t, c.NeedsResponse, "a user message is last, and the option decides")
		}},
		{"warned on a logger set after the messages", []nous.Option{nous.WithMessages(nous.Message{Role: "later"}), nous.WithLogger(logger)}, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, 0, c.Len())
			assert.Contains(t, logs.String(), "later")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := nous.NewContext(tt.opts...)
			tt.check(t, c)
		})
	}
}

// AddMessage stamps a zero CreatedAt with the clock and keeps any other, in
// UTC. (TestFoldModel checks everything else it does.)
func TestAddMessageCreatedAt(t *testing.T) {
	c := nous.NewContext()
	before := time.Now().Add(-time.Second)
	require.NoError(t, c.AddMessage(nous.Message{Role: nous.RoleUser, Content: "x"}))
	require.NoError(t, c.AddMessage(nous.Message{Role: nous.RoleUser, Content: "y", CreatedAt: t0.In(time.FixedZone("X", 3600))}))
	ms := c.Messages()
	assert.True(t, ms[0].CreatedAt.After(before))
	assert.Equal(t, time.UTC, ms[0].CreatedAt.Location())
	assert.Equal(t, t0, ms[1].CreatedAt)
}

func TestAssistantMessages(t *testing.T) {
	c := nous.NewContext()
	assert.Empty(t, c.AssistantMessages())
	call := nous.ToolCall{ID: "c", Name: "f"}
	mustAddAll(t, c, mSystem("s"), mUser("u"), mAssistant("a1", call), mTool("c", "r"), mAssistant("a2"))
	assert.Equal(t, []nous.Message{mAssistant("a1", call), mAssistant("a2")}, c.AssistantMessages())
	require.NoError(t, c.ReplaceMessage(4, mAssistant("a2'")))
	assert.Equal(t, []string{"a1", "a2'"}, []string{c.AssistantMessages()[0].Content, c.AssistantMessages()[1].Content})
}

func TestLoopControl(t *testing.T) {
	t.Run("AddToolCall", func(t *testing.T) {
		c := nous.NewContext()
		c.AddToolCall(nous.ToolCall{ID: "call_123", Name: "search", Arguments: json.RawMessage(`{"q":"test"}`)})
		c.AddToolCall(nous.ToolCall{ID: "call_124", Name: "fetch"})
		require.Len(t, c.ToolCalls, 2)
		assert.Equal(t, "call_123", c.ToolCalls[0].ID)
		assert.Equal(t, `{"q":"test"}`, string(c.ToolCalls[0].Arguments))
		assert.Equal(t, "fetch", c.ToolCalls[1].Name)
		require.Equal(t, 2, c.Log().Len(), "each call recorded is a tool_call event")
		for i, e := range c.Log().Events() {
			assert.Equal(t, nous.EventToolCall, e.Type)
			assert.Equal(t, c.ToolCalls[i], *e.Call, "event %d records call %d", i+1, i)
		}
		assert.Equal(t, c.ToolCalls, c.Log().ToolCalls())
	})
	t.Run("AddUsage field by field", func(t *testing.T) {
		c := nous.NewContext(nous.WithUsage(nous.Usage{1, 2, 3, 4, 5, 6, 7, 8}))
		c.AddUsage(nous.Usage{10, 20, 30, 40, 50, 60, 70, 80})
		assert.Equal(t, nous.Usage{11, 22, 33, 44, 55, 66, 77, 88}, c.Usage)
		c.AddUsage(nous.Usage{})
		assert.Equal(t, nous.Usage{11, 22, 33, 44, 55, 66, 77, 88}, c.Usage)
		assert.Equal(t, nous.Usage{InputTokens: 100, OutputTokens: 50}, nous.Usage{}.Add(nous.Usage{InputTokens: 100, OutputTokens: 50}))
	})
	t.Run("MergeDeps shallow, new keys win", func(t *testing.T) {
		c := nous.NewContext(nous.WithDeps(map[string]any{"count": 0, "keep": "k", "nested": map[string]any{"a": 1, "b": 2}}))
		c.MergeDeps(map[string]any{"count": 1, "new_key": "value", "nested": map[string]any{"a": 9}})
		assert.Equal(t, map[string]any{"count": 1, "keep": "k", "new_key": "value", "nested": map[string]any{"a": 9}}, c.Deps)
		c.MergeDeps(nil)
		assert.Len(t, c.Deps, 4)
	})
	t.Run("MergeDeps on nil deps", func(t *testing.T) {
		c := nous.NewContext()
		c.Deps = nil
		c.MergeDeps(map[string]any{"a": 1})
		assert.Equal(t, map[string]any{"a": 1}, c.Deps)
	})
	t.Run("iterations", func(t *testing.T) {
		tests := []struct{ iter, max int }{{0, 10}, {9, 10}, {10, 10}, {11, 10}, {0, 0}, {3, 5}, {5, 5}}
		for _, tt := range tests {
			c := nous.NewContext(nous.WithMaxIterations(tt.max), nous.WithIteration(tt.iter))
			assert.Equal(t, tt.iter >= tt.max, c.MaxIterationsReached(), "%d of %d", tt.iter, tt.max)
		}
		c := nous.NewContext(nous.WithMaxIterations(2))
		c.IncrementIteration()
		assert.Equal(t, 1, c.Iteration)
		assert.False(t, c.MaxIterationsReached())
		c.IncrementIteration()
		assert.True(t, c.MaxIterationsReached())
	})
}

func TestEventTypeKinds(t *testing.T) {
	surface := []nous.EventType{nous.EventUserMessage, nous.EventAssistantMessage, nous.EventSystemMessage, nous.EventToolResult, nous.EventReplace}
	bookkeeping := []nous.EventType{nous.EventTurnStart, nous.EventTurnEnd, nous.EventStepStart, nous.EventStepEnd, nous.EventToolCall, nous.EventRequestHeader}
	for _, e := range surface {
		assert.True(t, e.IsSurface(), e)
		assert.False(t, e.IsBookkeeping(), e)
	}
	for _, e := range bookkeeping {
		assert.False(t, e.IsSurface(), e)
		assert.True(t, e.IsBookkeeping(), e)
	}
	for _, e := range []nous.EventType{"", "turn", "USER_MESSAGE"} {
		assert.False(t, e.IsSurface(), e)
		assert.False(t, e.IsBookkeeping(), e)
	}
}

func TestWithSource(t *testing.T) {
	c := nous.NewContext()
	m := mUser("the user likes tea")
	require.NoError(t, c.AddMessage(m, nous.WithSource("memory")))
	require.NoError(t, c.AddMessage(mUser("plain")))
	require.NoError(t, c.AddMessage(mUser("empty source"), nous.WithSource("")))
	events := c.Log().Events()
	assert.Equal(t, map[string]any{"source": "memory"}, events[0].Data)
	assert.Equal(t, "memory", events[0].Data[nous.DataSource])
	assert.Nil(t, events[1].Data)
	assert.Nil(t, events[2].Data)
	assert.Equal(t, m, *events[0].Message, "the source is not in the message")
	assert.Equal(t, m, c.Messages()[0])
	requireFolds(t, c)
}

func mustFold(t testing.TB, c *nous.Context) []nous.Message {
	t.Helper()
	ms, err := nous.Fold(c.Log().Events())
	require.NoError(t, err)
	return ms
}

func TestToAndFromRunContext(t *testing.T) {
	t.Run("ToRunContext", func(t *testing.T) {
		c := nous.NewContext(nous.WithDeps(map[string]any{"db": "postgres"}), nous.WithUsage(nous.Usage{Requests: 2}))
		rc := c.ToRunContext()
		assert.Equal(t, map[string]any{"db": "postgres"}, rc.Deps)
		assert.Equal(t, nous.Usage{Requests: 2}, rc.Usage)
		assert.Equal(t, 0, rc.Retry)
		assert.Nil(t, rc.Sandbox)

		rc = c.ToRunContext(nous.WithSandbox(nous.NewSandboxPolicy(nous.SandboxReadOnly)), nous.WithRetry(2), nous.WithRunUsage(nous.Usage{Requests: 7}))
		require.NotNil(t, rc.Sandbox)
		assert.Equal(t, nous.SandboxReadOnly, rc.Sandbox.Mode)
		assert.Equal(t, 2, rc.Retry)
		assert.Equal(t, nous.Usage{Requests: 7}, rc.Usage, "options come after the context's usage")
	})
	t.Run("FromRunContext", func(t *testing.T) {
		deps := map[string]any{"key": "value", "m": map[string]any{"a": 1}}
		rc := nous.NewRunContext(deps, nous.WithRunUsage(nous.Usage{InputTokens: 3}), nous.WithRetry(1))
		c := nous.FromRunContext(rc, nous.WithAgentName("a"), nous.WithMaxIterations(3))
		assert.Equal(t, "value", c.Deps["key"])
		assert.Equal(t, nous.Usage{InputTokens: 3}, c.Usage)
		assert.Equal(t, "a", c.AgentName)
		assert.Equal(t, 3, c.MaxIterations)
		assert.True(t, c.NeedsResponse)
		assert.Empty(t, c.Messages())

		rc.Deps["m"].(map[string]any)["a"] = 2
		c.Deps["key"] = "mine"
		assert.Equal(t, map[string]any{"key": "value", "m": map[string]any{"a": 1}}, deps, "NewRunContext copies its input")
		assert.Equal(t, map[string]any{"a": 1}, c.Deps["m"])
		assert.Equal(t, "value", rc.Deps["key"])

		c = nous.FromRunContext(nous.RunContext{})
		assert.NotNil(t, c.Deps)
		assert.Equal(t, 10, c.MaxIterations)
	})
}

func TestClone(t *testing.T) {
	call := nous.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`), Metadata: map[string]any{"sig": "s"}}
	newCtx := func(t *testing.T) *nous.Context {
		c := nous.NewContext(nous.WithDeps(map[string]any{"m": map[string]any{"k": 1}, "l": []any{1}}), nous.WithAgentName("orig"))
		mustAddAll(t, c, mSystem("s"), mUser("u"), mAssistant("", call))
		require.NoError(t, c.LogEvent(nous.EventTurnStart, map[string]any{"turn": 1}))
		c.AddToolCall(call)
		c.AddUsage(nous.Usage{Requests: 1})
		return c
	}

	t.Run("equal at first, new log id, parent", func(t *testing.T) {
		c := newCtx(t)
		d := c.Clone()
		assert.Equal(t, c.Messages(), d.Messages())
		assert.Equal(t, c.Log().Events(), d.Log().Events())
		assert.Equal(t, c.Deps, d.Deps)
		assert.Equal(t, c.ToolCalls, d.ToolCalls)
		assert.Equal(t, c.Usage, d.Usage)
		assert.Equal(t, c.NeedsResponse, d.NeedsResponse)
		assert.Equal(t, c.AgentName, d.AgentName)
		assert.Equal(t, c.StartedAt, d.StartedAt)
		assert.NotEqual(t, c.Log().ID(), d.Log().ID())
		assert.Equal(t, uuid.Version(7), d.Log().ID().Version())
		id, seq, ok := d.Log().Parent()
		require.True(t, ok)
		assert.Equal(t, c.Log().ID(), id)
		assert.Equal(t, int64(5), seq)
		_, _, ok = c.Log().Parent()
		assert.False(t, ok, "the original is not a fork")
	})
	t.Run("independent both ways", func(t *testing.T) {
		c := newCtx(t)
		want := newCtx(t)
		d := c.Clone()
		// change the clone every way there is
		mustAddAll(t, d, mUser("d only"))
		require.NoError(t, d.LogEvent(nous.EventTurnEnd, nil))
		require.NoError(t, d.ReplaceMessage(0, mSystem("d system")))
		d.SetSystemPromptOverlay("d overlay")
		d.Deps["m"].(map[string]any)["k"] = 2
		d.Deps["l"].([]any)[0] = 2
		d.MergeDeps(map[string]any{"x": 1})
		d.ToolCalls[0].Metadata["sig"] = "changed"
		d.ToolCalls[0].Arguments[1] = 'X'
		d.AddToolCall(nous.ToolCall{ID: "d"})
		d.AddUsage(nous.Usage{Requests: 5})
		d.IncrementIteration()
		d.NeedsResponse = !c.NeedsResponse
		d.PatchDanglingToolCalls()

		assert.Equal(t, want.Messages(), c.Messages())
		assert.Equal(t, want.Deps, c.Deps)
		assert.Equal(t, want.ToolCalls, c.ToolCalls)
		assert.Equal(t, want.Usage, c.Usage)
		assert.Equal(t, 0, c.Iteration)
		assert.Equal(t, want.NeedsResponse, c.NeedsResponse)
		assert.Equal(t, "", c.SystemPromptOverlay())
		assert.Equal(t, 5, c.Log().Len())
		requireFolds(t, d)

		// and the original every way there is
		dBefore := stateOf(d)
		dDeps := d.Deps["m"].(map[string]any)["k"]
		mustAddAll(t, c, mUser("c only"))
		require.NoError(t, c.ReplaceMessage(1, mUser("c replaced")))
		c.SetSystemPromptOverlay("c overlay")
		c.Deps["m"].(map[string]any)["k"] = 3
		c.PatchDanglingToolCalls()
		assert.Equal(t, dBefore, stateOf(d))
		assert.Equal(t, dDeps, d.Deps["m"].(map[string]any)["k"])
		requireFolds(t, c)
		requireFolds(t, d)
	})
	t.Run("long logs across chunk boundaries", func(t *testing.T) {
		// Clone twice at many lengths around the sizes where the log's
		// storage fills up, then let all three append and replace: each
		// sees only its own.
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 256, 511, 512, 513, 1023, 1024, 1025, 1500} {
			c := nous.NewContext()
			for i := range n {
				if i%3 == 0 {
					require.NoError(t, c.LogEvent(nous.EventStepStart, map[string]any{"i": i}))
				} else {
					mustAddAll(t, c, mUser("m"))
				}
			}
			prefix, view := c.Log().Events(), viewTexts(c)
			d, e := c.Clone(), c.Clone() // two clones of one length: they share spare capacity, if any
			for i, x := range []*nous.Context{c, d, e} {
				name := string(rune('c' + i))
				for range 4 {
					mustAddAll(t, x, mUser(name))
					require.NoError(t, x.LogEvent(nous.EventStepEnd, nil))
				}
				require.NoError(t, x.ReplaceMessage(x.Len()-1, mUser(name+"!")))
				if x.Len() > 6 {
					require.NoError(t, x.ReplaceMessageRange(x.Len()-6, x.Len()-5, mUser(name+"r")))
				}
			}
			for i, x := range []*nous.Context{c, d, e} {
				name := string(rune('c' + i))
				assert.Equal(t, prefix, x.Log().Events()[:n], "n=%d %s", n, name)
				want := append(slices.Clone(view), name, name, name, name+"!")
				if len(want) > 6 {
					want = slices.Replace(want, len(want)-6, len(want)-4, name+"r")
				}
				assert.Equal(t, want, viewTexts(x), "n=%d %s", n, name)
				requireFolds(t, x)
			}
		}
	})
}

// TestPatchDanglingToolCalls pins the edge cases of what dangles, beside
// TestFoldModel, which patches random conversations: a call answered before
// it was asked, a call shadowed by a replacement, the same id twice.
func TestPatchDanglingToolCalls(t *testing.T) {
	call := nous.ToolCall{ID: "c1", Name: "a"}
	for name, tc := range map[string]struct {
		msgs    []nous.Message
		replace bool
		want    int
	}{
		"answered before asked": {[]nous.Message{mTool("c1", "r"), mAssistant("", call)}, false, 1},
		"shadowed":              {[]nous.Message{mUser("u"), mAssistant("", call)}, true, 0},
		"the same id twice":     {[]nous.Message{mAssistant("", call), mAssistant("", call)}, false, 2},
	} {
		c := nous.NewContext()
		mustAddAll(t, c, tc.msgs...)
		if tc.replace {
			require.NoError(t, c.ReplaceMessage(1, mAssistant("summary")))
		}
		assert.Equal(t, tc.want, c.PatchDanglingToolCalls(), name)
		assert.Equal(t, 0, c.PatchDanglingToolCalls(), name)
	}
}

// TestAll walks every shape of view: indices 0, 1, 2, ..., the messages of
// Messages, and a loop may stop early.
func TestAll(t *testing.T) {
	for name, c := range viewShapes(t) {
		var got []nous.Message
		for i, m := range c.All() {
			require.Equal(t, len(got), i, name)
			got = append(got, m)
		}
		want := c.Messages()
		assert.Equal(t, len(want), c.Len(), name)
		assert.Equal(t, want, append([]nous.Message{}, got...), name)
		n := 0
		for i := range c.All() {
			if n++; i == 1 {
				break
			}
		}
		assert.Equal(t, min(2, len(want)), n, name)
	}
}

func TestZeroContext(t *testing.T) {
	var c nous.Context
	assert.Equal(t, 0, c.Len())
	assert.Empty(t, c.Messages())
	_, ok := c.LastMessage()
	assert.False(t, ok)
	for range c.All() {
		t.Fatal("the zero context has no messages")
	}
	assert.Equal(t, 0, c.PatchDanglingToolCalls())
	assert.ErrorIs(t, c.ReplaceMessage(0, mUser("x")), nous.ErrOutOfRange)
	assert.True(t, c.MaxIterationsReached(), "MaxIterations 0: reached at once")
	assert.Equal(t, 0, c.Log().Len())
	assert.Empty(t, c.Log().Events())

	d := c.Clone()
	require.NoError(t, c.AddMessage(mUser("hi")))
	require.NoError(t, c.LogEvent(nous.EventTurnStart, nil))
	c.MergeDeps(map[string]any{"a": 1})
	c.AddToolCall(nous.ToolCall{ID: "x"})
	c.SetSystemPromptOverlay("o")
	assert.Equal(t, []string{"o", "hi"}, viewTexts(&c))
	assert.NotEqual(t, uuid.Nil, c.Log().ID())
	assert.Equal(t, 3, c.Log().Len())
	assert.True(t, c.NeedsResponse)
	requireFolds(t, &c)
	assert.Equal(t, 0, d.Len(), "a clone of the zero context is independent")

	var e nous.Context
	id := e.Log().ID()
	assert.NotEqual(t, uuid.Nil, id, "Log gives the zero context its ID")
	require.NoError(t, e.AddMessage(mUser("x")))
	assert.Equal(t, id, e.Log().ID(), "the ID is made once")
}

func TestNilSessionLog(t *testing.T) {
	var l *nous.SessionLog
	assert.Equal(t, 0, l.Len())
	assert.Equal(t, uuid.Nil, l.ID())
	_, _, ok := l.Parent()
	assert.False(t, ok)
	assert.Empty(t, l.Events())
	_, ok = l.Event(1)
	assert.False(t, ok)
	for range l.All() {
		t.Fatal("a nil log has no events")
	}
}

func TestSessionLogEventLookup(t *testing.T) {
	c := nous.NewContext()
	mustAddAll(t, c, mUser("a"))
	require.NoError(t, c.LogEvent(nous.EventTurnEnd, map[string]any{"k": 1}))
	for _, seq := range []int64{-1, 0, 3} {
		_, ok := c.Log().Event(seq)
		assert.False(t, ok, seq)
	}
	events := c.Log().Events()
	for i, want := range events {
		got, ok := c.Log().Event(int64(i + 1))
		require.True(t, ok)
		assert.Equal(t, want, got)
	}
	var viaAll []nous.Event
	for e := range c.Log().All() {
		viaAll = append(viaAll, e)
	}
	assert.Equal(t, events, viaAll)
	for range c.Log().All() {
		break // stopping early is allowed
	}
}

// TestFailureLeavesNoTrace runs every operation that can fail, in every
// shape of view, and checks that the context is exactly as before.
func TestFailureLeavesNoTrace(t *testing.T) {
	bad := nous.Message{Role: nous.RoleUser}
	sentinels := []error{nous.ErrInvalidMessage, nous.ErrOutOfRange, nous.ErrSurfaceEvent, nous.ErrUnknownEventType}
	type failing struct {
		name string
		want error  // nil: depends on the view
		text string // in the error; %[1]d is the length of the view
		op   func(c *nous.Context) error
	}
	ops := []failing{
		{"AddMessage invalid", nous.ErrInvalidMessage, "empty content", func(c *nous.Context) error { return c.AddMessage(bad, nous.WithSource("memory")) }},
		{"AddMessages one invalid", nous.ErrInvalidMessage, "message 2 of 3", func(c *nous.Context) error { return c.AddMessages(mUser("ok"), mAssistant("ok"), bad) }},
		{"AddMessages first invalid", nous.ErrInvalidMessage, "message 0 of 2", func(c *nous.Context) error { return c.AddMessages(bad, mUser("ok")) }},
		{"LogEvent unknown", nous.ErrUnknownEventType, `"made_up"`, func(c *nous.Context) error { return c.LogEvent("made_up", nil) }},
		{"LogEvent no type", nous.ErrUnknownEventType, `""`, func(c *nous.Context) error { return c.LogEvent("", nil) }},
		{"ReplaceMessage negative", nous.ErrOutOfRange, "-1..-1", func(c *nous.Context) error { return c.ReplaceMessage(-1, mUser("x")) }},
		{"ReplaceMessage past end", nous.ErrOutOfRange, "%[1]d..%[1]d of %[1]d messages", func(c *nous.Context) error { return c.ReplaceMessage(c.Len(), mUser("x")) }},
		{"ReplaceMessage invalid", nil, "", func(c *nous.Context) error { return c.ReplaceMessage(c.Len()-1, bad) }},
		{"ReplaceMessageRange reversed", nous.ErrOutOfRange, "1..0", func(c *nous.Context) error { return c.ReplaceMessageRange(1, 0, mUser("x")) }},
		{"ReplaceMessageRange past end", nous.ErrOutOfRange, "0..%[1]d of %[1]d messages", func(c *nous.Context) error { return c.ReplaceMessageRange(0, c.Len(), mUser("x")) }},
		{"ReplaceMessageRange invalid", nil, "", func(c *nous.Context) error { return c.ReplaceMessageRange(0, c.Len()-1, bad) }},
		{"ReplaceMessageRange bad and OOR", nous.ErrOutOfRange, "-3..99", func(c *nous.Context) error { return c.ReplaceMessageRange(-3, 99, bad) }},
	}
	for _, typ := range []nous.EventType{nous.EventUserMessage, nous.EventAssistantMessage, nous.EventSystemMessage, nous.EventToolResult, nous.EventReplace} {
		ops = append(ops, failing{"LogEvent " + string(typ), nous.ErrSurfaceEvent, string(typ),
			func(c *nous.Context) error { return c.LogEvent(typ, map[string]any{"a": 1}) }})
	}
	for _, op := range ops {
		for sname, c := range viewShapes(t) {
			t.Run(sname+"/"+op.name, func(t *testing.T) {
				before := stateOf(c)
				text := op.text
				if strings.Contains(text, "%") {
					text = fmt.Sprintf(text, c.Len())
				}
				err := op.op(c)
				require.Error(t, err)
				assert.Contains(t, err.Error(), text)
				for _, s := range sentinels {
					if op.want != nil {
						assert.Equal(t, s == op.want, errors.Is(err, s), "%v is %v", err, s)
					}
				}
				assert.Equal(t, before, stateOf(c))
				requireFolds(t, c)
			})
		}
	}
	t.Run("overlay message is not replaceable", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("u"))
		c.SetSystemPromptOverlay("o")
		before := stateOf(c)
		err := c.ReplaceMessage(0, mSystem("x"))
		require.ErrorIs(t, err, nous.ErrOutOfRange)
		assert.Contains(t, err.Error(), "overlay")
		assert.Equal(t, before, stateOf(c))
	})
}
