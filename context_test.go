package nous_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
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
	require.Equal(t, overlaid(folded, c.SystemPromptOverlay(), view), view)
}

// overlaid applies the overlay rule to a folded view: the overlay is
// appended to a leading system message (to its Content after "\n\n", or as
// a text part when it has only parts), or put before the view as a system
// message of its own. That message's CreatedAt is the clock's, so it is
// taken from view, the view under test.
func overlaid(folded []nous.Message, overlay string, view []nous.Message) []nous.Message {
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
			lead.Parts = append(append([]nous.ContentPart(nil), lead.Parts...), nous.TextPart(overlay))
		default:
			lead.Content = overlay
		}
		out[0] = lead
		return out
	}
	lead := nous.Message{Role: nous.RoleSystem, Content: overlay}
	if len(view) > 0 {
		lead.CreatedAt = view[0].CreatedAt
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
			assert.False(t, c.NeedsResponse, "the last message is an assistant's without tool calls")
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
		{"messages decide needs response after the option", []nous.Option{nous.WithMessages(mUser("u")), nous.WithNeedsResponse(false)}, func(t *testing.T, c *nous.Context) {
			assert.True(t, c.NeedsResponse, "a user message is last")
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

func TestNeedsResponse(t *testing.T) {
	call := nous.ToolCall{ID: "c1", Name: "f"}
	tests := []struct {
		name  string
		start bool
		msg   nous.Message
		want  bool
	}{
		{"user sets", false, mUser("u"), true},
		{"user keeps", true, mUser("u"), true},
		{"tool sets", false, mTool("c1", "r"), true},
		{"assistant with calls sets", false, mAssistant("", call), true},
		{"assistant without calls clears", true, mAssistant("done"), false},
		{"empty assistant clears", true, nous.Message{Role: nous.RoleAssistant}, false},
		{"system keeps true", true, mSystem("s"), true},
		{"system keeps false", false, mSystem("s"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, batch := range []bool{false, true} {
				c := nous.NewContext()
				c.NeedsResponse = tt.start
				if batch {
					require.NoError(t, c.AddMessages(tt.msg))
				} else {
					require.NoError(t, c.AddMessage(tt.msg))
				}
				assert.Equal(t, tt.want, c.NeedsResponse, "batch=%v", batch)
			}
		})
	}
}

func TestAddMessage(t *testing.T) {
	t.Run("one surface event per message", func(t *testing.T) {
		c := nous.NewContext()
		msgs := []nous.Message{mSystem("s"), mUser("u"), mAssistant("a", nous.ToolCall{ID: "c"}), mTool("c", "r")}
		mustAddAll(t, c, msgs...)
		assert.Equal(t, msgs, c.Messages())
		events := c.Log().Events()
		require.Len(t, events, 4)
		wantTypes := []nous.EventType{nous.EventSystemMessage, nous.EventUserMessage, nous.EventAssistantMessage, nous.EventToolResult}
		for i, e := range events {
			assert.Equal(t, int64(i+1), e.Seq)
			assert.Equal(t, wantTypes[i], e.Type)
			require.NotNil(t, e.Message)
			assert.Equal(t, msgs[i], *e.Message)
			assert.Nil(t, e.Data)
			assert.False(t, e.CreatedAt.IsZero())
			assert.Zero(t, e.First)
			assert.Zero(t, e.Last)
		}
	})
	t.Run("zero CreatedAt stamped, other kept in UTC", func(t *testing.T) {
		c := nous.NewContext()
		before := time.Now().Add(-time.Second)
		require.NoError(t, c.AddMessage(nous.Message{Role: nous.RoleUser, Content: "x"}))
		zone := time.FixedZone("X", 3600)
		require.NoError(t, c.AddMessage(nous.Message{Role: nous.RoleUser, Content: "y", CreatedAt: t0.In(zone)}))
		ms := c.Messages()
		assert.True(t, ms[0].CreatedAt.After(before))
		assert.Equal(t, time.UTC, ms[0].CreatedAt.Location())
		assert.Equal(t, t0, ms[1].CreatedAt)
	})
	t.Run("invalid message", func(t *testing.T) {
		c := nous.NewContext()
		c.NeedsResponse = false
		err := c.AddMessage(nous.Message{Role: nous.RoleUser})
		assert.ErrorIs(t, err, nous.ErrInvalidMessage)
		assert.Equal(t, 0, c.Len())
		assert.Equal(t, 0, c.Log().Len())
		assert.False(t, c.NeedsResponse)
	})
}

func TestAddMessagesEqualsOneByOne(t *testing.T) {
	call := nous.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}
	batches := map[string][]nous.Message{
		"empty":             {},
		"one":               {mUser("u")},
		"ends with system":  {mUser("u"), mSystem("s")},
		"ends in assistant": {mSystem("s"), mUser("u"), mAssistant("a")},
		"tool round":        {mUser("u"), mAssistant("", call), mTool("c1", "r")},
		"calls then system": {mUser("u"), mAssistant("", call), mSystem("note")},
		"with metadata":     {fullMessage(), mUser("x")},
	}
	for name, batch := range batches {
		for _, start := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				a, b := nous.NewContext(), nous.NewContext()
				a.NeedsResponse, b.NeedsResponse = start, start
				mustAddAll(t, a, mUser("first"))
				mustAddAll(t, b, mUser("first"))
				a.NeedsResponse, b.NeedsResponse = start, start

				require.NoError(t, a.AddMessages(batch...))
				mustAddAll(t, b, batch...)
				assert.Equal(t, b.Messages(), a.Messages())
				assert.Equal(t, b.NeedsResponse, a.NeedsResponse)
				assert.Equal(t, b.Log().Len(), a.Log().Len())
				ea, eb := a.Log().Events(), b.Log().Events()
				for i := range ea {
					assert.Equal(t, eb[i].Type, ea[i].Type)
					assert.Equal(t, eb[i].Message, ea[i].Message)
				}
				requireFolds(t, a)
			})
		}
	}
}

func TestAddMessagesAllOrNothing(t *testing.T) {
	c := nous.NewContext()
	mustAddAll(t, c, mUser("u"), mAssistant("a"))
	before := stateOf(c)
	err := c.AddMessages(mUser("x"), mUser("y"), nous.Message{Role: nous.RoleTool, Content: "no id"}, mUser("z"))
	require.ErrorIs(t, err, nous.ErrInvalidMessage)
	assert.Contains(t, err.Error(), "message 2")
	assert.Equal(t, before, stateOf(c))

	t.Run("empty batch changes nothing", func(t *testing.T) {
		require.NoError(t, c.AddMessages())
		assert.Equal(t, before, stateOf(c))
		assert.False(t, c.NeedsResponse)
	})
}

func TestLastMessage(t *testing.T) {
	c := nous.NewContext()
	_, ok := c.LastMessage()
	assert.False(t, ok)
	mustAddAll(t, c, mUser("hello"))
	m, ok := c.LastMessage()
	require.True(t, ok)
	assert.Equal(t, mUser("hello"), m)
	mustAddAll(t, c, mAssistant("bye"))
	m, _ = c.LastMessage()
	assert.Equal(t, "bye", m.Content)
	require.NoError(t, c.LogEvent(nous.EventTurnEnd, nil))
	m, _ = c.LastMessage()
	assert.Equal(t, "bye", m.Content, "bookkeeping is not a message")

	t.Run("overlay on an empty view", func(t *testing.T) {
		c := nous.NewContext()
		c.SetSystemPromptOverlay("o")
		m, ok := c.LastMessage()
		require.True(t, ok)
		assert.Equal(t, nous.RoleSystem, m.Role)
		assert.Equal(t, "o", m.Content)
	})
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
		assert.Equal(t, 0, c.Log().Len(), "recording a tool call logs nothing")
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

func TestLogEvent(t *testing.T) {
	tests := []struct {
		typ  nous.EventType
		want error
	}{
		{nous.EventTurnStart, nil},
		{nous.EventTurnEnd, nil},
		{nous.EventStepStart, nil},
		{nous.EventStepEnd, nil},
		{nous.EventToolCall, nil},
		{nous.EventRequestHeader, nil},
		{nous.EventUserMessage, nous.ErrSurfaceEvent},
		{nous.EventAssistantMessage, nous.ErrSurfaceEvent},
		{nous.EventSystemMessage, nous.ErrSurfaceEvent},
		{nous.EventToolResult, nous.ErrSurfaceEvent},
		{nous.EventReplace, nous.ErrSurfaceEvent},
		{"bogus", nous.ErrUnknownEventType},
		{"", nous.ErrUnknownEventType},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			c := nous.NewContext()
			mustAddAll(t, c, mUser("u"))
			before := stateOf(c)
			err := c.LogEvent(tt.typ, map[string]any{"turn": 1})
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Contains(t, err.Error(), string(tt.typ))
				assert.Equal(t, before, stateOf(c))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, before.Messages, c.Messages())
			assert.Equal(t, before.NeedsResponse, c.NeedsResponse)
			events := c.Log().Events()
			require.Len(t, events, 2)
			e := events[1]
			assert.Equal(t, int64(2), e.Seq)
			assert.Equal(t, tt.typ, e.Type)
			assert.Equal(t, map[string]any{"turn": 1}, e.Data)
			assert.Nil(t, e.Message)
			assert.False(t, e.CreatedAt.IsZero())
			got, ok := c.Log().Event(2)
			require.True(t, ok)
			assert.Equal(t, e, got)
		})
	}
	t.Run("nil data", func(t *testing.T) {
		c := nous.NewContext()
		require.NoError(t, c.LogEvent(nous.EventStepStart, nil))
		assert.Nil(t, c.Log().Events()[0].Data)
	})
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

func TestReplaceMessageRange(t *testing.T) {
	// build returns a context whose view is u0 a1 u2 a3 u4, each at(i), with
	// bookkeeping events in between so that seqs differ from positions.
	build := func(t *testing.T) (*nous.Context, []int64) {
		c := nous.NewContext()
		var seqs []int64
		for i := range 5 {
			require.NoError(t, c.LogEvent(nous.EventStepStart, nil))
			m := nous.Message{Role: nous.RoleUser, Content: "u" + string(rune('0'+i)), CreatedAt: at(i)}
			if i%2 == 1 {
				m = nous.Message{Role: nous.RoleAssistant, Content: "a" + string(rune('0'+i)), CreatedAt: at(i)}
			}
			require.NoError(t, c.AddMessage(m))
			seqs = append(seqs, int64(c.Log().Len()))
		}
		return c, seqs
	}
	summary := nous.Message{Role: nous.RoleSystem, Content: "summary", Metadata: map[string]any{"compacted": 3}, CreatedAt: at(99)}

	t.Run("range", func(t *testing.T) {
		c, seqs := build(t)
		before := c.Log().Events()
		c.NeedsResponse = true
		require.NoError(t, c.ReplaceMessageRange(1, 3, summary))
		assert.Equal(t, []string{"u0", "summary", "u4"}, viewTexts(c))
		assert.True(t, c.NeedsResponse, "a replacement leaves NeedsResponse alone")
		got := c.Messages()[1]
		assert.Equal(t, at(1), got.CreatedAt, "inherits the CreatedAt of the first shadowed message")
		assert.Equal(t, summary.Metadata, got.Metadata)

		events := c.Log().Events()
		require.Len(t, events, len(before)+1)
		assert.Equal(t, before, events[:len(before)], "the originals stay in the log")
		e := events[len(before)]
		assert.Equal(t, nous.EventReplace, e.Type)
		assert.Equal(t, seqs[1], e.First)
		assert.Equal(t, seqs[3], e.Last)
		require.NotNil(t, e.Message)
		assert.Equal(t, got, *e.Message)
		requireFolds(t, c)
	})
	t.Run("single", func(t *testing.T) {
		c, seqs := build(t)
		require.NoError(t, c.ReplaceMessage(2, mUser("pruned")))
		assert.Equal(t, []string{"u0", "a1", "pruned", "a3", "u4"}, viewTexts(c))
		e := c.Log().Events()[c.Log().Len()-1]
		assert.Equal(t, seqs[2], e.First)
		assert.Equal(t, seqs[2], e.Last)
		assert.Equal(t, at(2), c.Messages()[2].CreatedAt)
		requireFolds(t, c)
	})
	t.Run("whole view", func(t *testing.T) {
		c, seqs := build(t)
		require.NoError(t, c.ReplaceMessageRange(0, 4, summary))
		assert.Equal(t, []string{"summary"}, viewTexts(c))
		e := c.Log().Events()[c.Log().Len()-1]
		assert.Equal(t, []int64{seqs[0], seqs[4]}, []int64{e.First, e.Last})
		requireFolds(t, c)
	})
	t.Run("replacing a replacement", func(t *testing.T) {
		c, seqs := build(t)
		require.NoError(t, c.ReplaceMessageRange(1, 3, summary))
		firstReplace := int64(c.Log().Len())
		require.NoError(t, c.ReplaceMessageRange(0, 1, mSystem("summary of summary")))
		assert.Equal(t, []string{"summary of summary", "u4"}, viewTexts(c))
		assert.Equal(t, at(0), c.Messages()[0].CreatedAt)
		e := c.Log().Events()[c.Log().Len()-1]
		assert.Equal(t, []int64{seqs[0], firstReplace}, []int64{e.First, e.Last})
		requireFolds(t, c)

		// and a replacement as the first anchor
		require.NoError(t, c.ReplaceMessage(0, mSystem("third")))
		e = c.Log().Events()[c.Log().Len()-1]
		assert.Equal(t, firstReplace+1, e.First)
		assert.Equal(t, at(0), c.Messages()[0].CreatedAt)
		requireFolds(t, c)
		// Nothing was ever removed: the five originals are all in the log.
		var originals []string
		for _, e := range c.Log().Events() {
			if e.Message != nil && e.Type != nous.EventReplace {
				originals = append(originals, e.Message.Content)
			}
		}
		assert.Equal(t, []string{"u0", "a1", "u2", "a3", "u4"}, originals)
	})
	t.Run("then append", func(t *testing.T) {
		c, _ := build(t)
		require.NoError(t, c.ReplaceMessageRange(0, 2, summary))
		mustAddAll(t, c, mUser("after"))
		assert.Equal(t, []string{"summary", "a3", "u4", "after"}, viewTexts(c))
		requireFolds(t, c)
	})
	t.Run("out of range", func(t *testing.T) {
		for _, r := range [][2]int{{-1, -1}, {-1, 2}, {5, 5}, {0, 5}, {3, 2}, {4, 100}, {100, 100}} {
			c, _ := build(t)
			before := stateOf(c)
			err := c.ReplaceMessageRange(r[0], r[1], summary)
			require.ErrorIs(t, err, nous.ErrOutOfRange, "%v", r)
			assert.Equal(t, before, stateOf(c), "%v", r)
		}
		c := nous.NewContext()
		assert.ErrorIs(t, c.ReplaceMessage(0, summary), nous.ErrOutOfRange)
		assert.Equal(t, 0, c.Log().Len())
	})
	t.Run("invalid message", func(t *testing.T) {
		c, _ := build(t)
		before := stateOf(c)
		err := c.ReplaceMessageRange(1, 2, nous.Message{Role: nous.RoleTool, Content: "x"})
		require.ErrorIs(t, err, nous.ErrInvalidMessage)
		assert.Equal(t, before, stateOf(c))
		assert.ErrorIs(t, c.ReplaceMessage(0, nous.Message{}), nous.ErrInvalidMessage)
		assert.Equal(t, before, stateOf(c))
	})
}

func TestSystemPromptOverlay(t *testing.T) {
	t.Run("appended to the leading system message", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mSystem("You are helpful."), mUser("hi"))
		c.SetSystemPromptOverlay("Use the search tool.")
		assert.Equal(t, []string{"You are helpful.\n\nUse the search tool.", "hi"}, viewTexts(c))
		assert.Equal(t, 2, c.Len())
		assert.Equal(t, t0, c.Messages()[0].CreatedAt)
		assert.Equal(t, "Use the search tool.", c.SystemPromptOverlay())
		assert.Equal(t, 2, c.Log().Len(), "the overlay is never an event")
		requireFolds(t, c)
	})
	t.Run("a leading system message of its own", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("hi"), mSystem("later system"))
		c.SetSystemPromptOverlay("O")
		ms := c.Messages()
		require.Len(t, ms, 3)
		assert.Equal(t, nous.RoleSystem, ms[0].Role)
		assert.Equal(t, "O", ms[0].Content)
		assert.False(t, ms[0].CreatedAt.IsZero())
		assert.Equal(t, []string{"O", "hi", "later system"}, viewTexts(c))
		assert.Equal(t, 3, c.Len())
		requireFolds(t, c)
	})
	t.Run("on an empty view, then a system message arrives", func(t *testing.T) {
		c := nous.NewContext()
		c.SetSystemPromptOverlay("O")
		assert.Equal(t, []string{"O"}, viewTexts(c))
		mustAddAll(t, c, mSystem("S"))
		assert.Equal(t, []string{"S\n\nO"}, viewTexts(c))
		requireFolds(t, c)
	})
	t.Run("on an empty view, then a user message arrives", func(t *testing.T) {
		c := nous.NewContext()
		c.SetSystemPromptOverlay("O")
		require.NoError(t, c.AddMessages(mUser("u"), mSystem("S")))
		assert.Equal(t, []string{"O", "u", "S"}, viewTexts(c))
		requireFolds(t, c)
	})
	t.Run("replaces, never compounds", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mSystem("S"))
		c.SetSystemPromptOverlay("A")
		c.SetSystemPromptOverlay("B")
		c.Messages()
		assert.Equal(t, []string{"S\n\nB"}, viewTexts(c))
		assert.Equal(t, []string{"S\n\nB"}, viewTexts(c))
		c.SetSystemPromptOverlay("B")
		assert.Equal(t, []string{"S\n\nB"}, viewTexts(c))
	})
	t.Run("empty clears", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("u"))
		c.SetSystemPromptOverlay("O")
		require.Equal(t, 2, c.Len())
		c.SetSystemPromptOverlay("")
		assert.Equal(t, []nous.Message{mUser("u")}, c.Messages())
		assert.Equal(t, 1, c.Len())
		assert.Equal(t, 1, c.Log().Len())
	})
	t.Run("system message with parts", func(t *testing.T) {
		c := nous.NewContext()
		sys := nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{nous.TextPart("P")}, CreatedAt: t0}
		mustAddAll(t, c, sys)
		c.SetSystemPromptOverlay("O")
		m := c.Messages()[0]
		assert.Equal(t, []nous.ContentPart{nous.TextPart("P"), nous.TextPart("O")}, m.Parts)
		assert.Equal(t, "PO", m.Text())
		assert.Equal(t, []nous.Message{sys}, mustFold(t, c), "the log keeps the message as given")
		c.SetSystemPromptOverlay("Q")
		assert.Equal(t, []nous.ContentPart{nous.TextPart("P"), nous.TextPart("Q")}, c.Messages()[0].Parts)
	})
	t.Run("with replace at 0", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mSystem("S"), mUser("u"), mAssistant("a"))
		c.SetSystemPromptOverlay("O")
		require.NoError(t, c.ReplaceMessage(0, mSystem("S2")))
		assert.Equal(t, []string{"S2\n\nO", "u", "a"}, viewTexts(c))
		requireFolds(t, c)
		require.NoError(t, c.ReplaceMessageRange(0, 1, mUser("summary")))
		assert.Equal(t, []string{"O", "summary", "a"}, viewTexts(c))
		requireFolds(t, c)
		// Index 0 is now the overlay's own message, which is not in the log.
		before := stateOf(c)
		assert.ErrorIs(t, c.ReplaceMessage(0, mSystem("x")), nous.ErrOutOfRange)
		assert.ErrorIs(t, c.ReplaceMessageRange(0, 2, mSystem("x")), nous.ErrOutOfRange)
		assert.Equal(t, before, stateOf(c))
		// Index 1 is the first message of the log: replacing it by a system
		// message makes the overlay join it again.
		require.NoError(t, c.ReplaceMessage(1, mSystem("S3")))
		assert.Equal(t, []string{"S3\n\nO", "a"}, viewTexts(c))
		requireFolds(t, c)
		require.NoError(t, c.ReplaceMessageRange(0, 1, mSystem("all")))
		assert.Equal(t, []string{"all\n\nO"}, viewTexts(c))
		requireFolds(t, c)
	})
}

func mustFold(t testing.TB, c *nous.Context) []nous.Message {
	t.Helper()
	ms, err := nous.Fold(c.Log().Events())
	require.NoError(t, err)
	return ms
}

func TestPatchDanglingToolCalls(t *testing.T) {
	const text = "Tool call was interrupted and not executed. Please retry if needed."
	t.Run("patches what no tool answered", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c,
			mUser("find it"),
			mAssistant("", nous.ToolCall{ID: "c1", Name: "search"}, nous.ToolCall{ID: "c2", Name: "fetch"}),
			mTool("c1", "found"),
			mAssistant("and", nous.ToolCall{ID: "c3", Name: "read"}),
		)
		c.NeedsResponse = false
		n := c.PatchDanglingToolCalls()
		assert.Equal(t, 2, n)
		ms := c.Messages()
		require.Len(t, ms, 6)
		for i, want := range []struct{ id, name string }{{"c2", "fetch"}, {"c3", "read"}} {
			p := ms[4+i]
			assert.Equal(t, nous.RoleTool, p.Role)
			assert.Equal(t, want.id, p.ToolCallID)
			assert.Equal(t, want.name, p.Name)
			assert.Equal(t, text, p.Content)
			assert.Equal(t, nous.DanglingToolCallText, p.Content)
			assert.Equal(t, true, p.Metadata["synthesized"])
			assert.False(t, p.CreatedAt.IsZero())
			assert.NoError(t, p.Validate())
		}
		assert.True(t, c.NeedsResponse, "tool results need a response")
		events := c.Log().Events()
		assert.Equal(t, nous.EventToolResult, events[len(events)-1].Type)
		requireFolds(t, c)

		before := stateOf(c)
		assert.Equal(t, 0, c.PatchDanglingToolCalls(), "idempotent")
		assert.Equal(t, before, stateOf(c))
	})
	t.Run("nothing dangles", func(t *testing.T) {
		for name, msgs := range map[string][]nous.Message{
			"empty":                 nil,
			"no calls":              {mUser("u"), mAssistant("a")},
			"answered":              {mAssistant("", nous.ToolCall{ID: "c1"}), mTool("c1", "r")},
			"answered before asked": {mTool("c1", "r"), mAssistant("", nous.ToolCall{ID: "c1"})},
		} {
			c := nous.NewContext()
			mustAddAll(t, c, msgs...)
			before := stateOf(c)
			assert.Equal(t, 0, c.PatchDanglingToolCalls(), name)
			assert.Equal(t, before, stateOf(c), name)
		}
	})
	t.Run("the same id twice is patched once", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mAssistant("", nous.ToolCall{ID: "c1", Name: "a"}), mAssistant("", nous.ToolCall{ID: "c1", Name: "a"}))
		assert.Equal(t, 1, c.PatchDanglingToolCalls())
	})
	t.Run("a call shadowed by a replacement is not dangling", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("u"), mAssistant("", nous.ToolCall{ID: "c1", Name: "a"}))
		require.NoError(t, c.ReplaceMessage(1, mAssistant("summary")))
		assert.Equal(t, 0, c.PatchDanglingToolCalls())
	})
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
	t.Run("a deps snapshot, both ways", func(t *testing.T) {
		c := nous.NewContext(nous.WithDeps(map[string]any{
			"n": 1, "m": map[string]any{"k": "v", "deep": map[string]any{"x": 1}}, "l": []any{1, map[string]any{"y": 2}},
		}))
		rc := c.ToRunContext()
		want := map[string]any{"n": 1, "m": map[string]any{"k": "v", "deep": map[string]any{"x": 1}}, "l": []any{1, map[string]any{"y": 2}}}

		c.Deps["n"] = 2
		c.Deps["new"] = true
		c.Deps["m"].(map[string]any)["k"] = "changed"
		c.Deps["m"].(map[string]any)["deep"].(map[string]any)["x"] = 99
		c.Deps["l"].([]any)[1].(map[string]any)["y"] = 99
		c.MergeDeps(map[string]any{"merged": 1})
		assert.Equal(t, want, rc.Deps, "the snapshot does not see the context's later writes")

		c2 := nous.NewContext(nous.WithDeps(want))
		rc2 := c2.ToRunContext()
		rc2.Deps["n"] = 5
		rc2.Deps["m"].(map[string]any)["deep"].(map[string]any)["x"] = 5
		rc2.Deps["l"].([]any)[0] = 5
		assert.Equal(t, want, c2.Deps, "the context does not see the snapshot's writes")
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
	t.Run("NewRunContext nil deps", func(t *testing.T) {
		rc := nous.NewRunContext(nil)
		assert.NotNil(t, rc.Deps)
		assert.Empty(t, rc.Deps)
	})
	t.Run("sandbox", func(t *testing.T) {
		for _, m := range []nous.SandboxMode{nous.SandboxReadOnly, nous.SandboxWorkspaceWrite, nous.SandboxFullAccess} {
			assert.True(t, m.Valid())
			assert.Equal(t, nous.SandboxPolicy{Mode: m}, nous.NewSandboxPolicy(m))
			var got nous.SandboxMode
			require.NoError(t, got.UnmarshalText([]byte(m)))
			assert.Equal(t, m, got)
		}
		var got nous.SandboxMode = nous.SandboxReadOnly
		assert.Error(t, got.UnmarshalText([]byte("yolo")))
		assert.Equal(t, nous.SandboxReadOnly, got, "unchanged on error")
		assert.False(t, nous.SandboxMode("").Valid())

		var p nous.SandboxPolicy
		require.NoError(t, json.Unmarshal([]byte(`{"mode":"workspace_write","writable_roots":["/w"],"network":true}`), &p))
		assert.Equal(t, nous.SandboxPolicy{Mode: nous.SandboxWorkspaceWrite, WritableRoots: []string{"/w"}, Network: true}, p)
		assert.Error(t, json.Unmarshal([]byte(`{"mode":"root"}`), &p))
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
		assert.Equal(t, int64(4), seq)
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
		assert.Equal(t, 4, c.Log().Len())
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
	t.Run("replace after clone on both sides", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("0"), mUser("1"), mUser("2"), mUser("3"))
		d := c.Clone()
		require.NoError(t, c.ReplaceMessageRange(1, 2, mUser("c12")))
		require.NoError(t, d.ReplaceMessageRange(0, 1, mUser("d01")))
		assert.Equal(t, []string{"0", "c12", "3"}, viewTexts(c))
		assert.Equal(t, []string{"d01", "2", "3"}, viewTexts(d))
		require.NoError(t, c.ReplaceMessage(2, mUser("c3")))
		require.NoError(t, d.ReplaceMessage(2, mUser("d3")))
		mustAddAll(t, c, mUser("c4"))
		mustAddAll(t, d, mUser("d4"))
		assert.Equal(t, []string{"0", "c12", "c3", "c4"}, viewTexts(c))
		assert.Equal(t, []string{"d01", "2", "d3", "d4"}, viewTexts(d))
		requireFolds(t, c)
		requireFolds(t, d)
		// The shared prefix is the same events on both sides.
		assert.Equal(t, c.Log().Events()[:4], d.Log().Events()[:4])
	})
	t.Run("clone of a clone, and a second clone after the original grew", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("0"), mUser("1"))
		d := c.Clone()
		mustAddAll(t, d, mUser("d2"))
		e := d.Clone()
		id, seq, ok := e.Log().Parent()
		require.True(t, ok)
		assert.Equal(t, d.Log().ID(), id)
		assert.Equal(t, int64(3), seq)
		mustAddAll(t, e, mUser("e3"))
		mustAddAll(t, d, mUser("d3"))
		mustAddAll(t, c, mUser("c2"))
		f := c.Clone()
		mustAddAll(t, f, mUser("f3"))
		mustAddAll(t, c, mUser("c3"))

		assert.Equal(t, []string{"0", "1", "c2", "c3"}, viewTexts(c))
		assert.Equal(t, []string{"0", "1", "d2", "d3"}, viewTexts(d))
		assert.Equal(t, []string{"0", "1", "d2", "e3"}, viewTexts(e))
		assert.Equal(t, []string{"0", "1", "c2", "f3"}, viewTexts(f))
		_, seq, _ = f.Log().Parent()
		assert.Equal(t, int64(3), seq)
		for _, x := range []*nous.Context{c, d, e, f} {
			requireFolds(t, x)
			assert.Equal(t, 4, x.Log().Len())
		}
		assert.Equal(t, len(map[uuid.UUID]bool{c.Log().ID(): true, d.Log().ID(): true, e.Log().ID(): true, f.Log().ID(): true}), 4)
	})
	t.Run("long logs across chunk boundaries", func(t *testing.T) {
		// Clone at many lengths around the sizes where the log's storage
		// fills up, then let both sides append and replace.
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 256, 511, 512, 513, 1023, 1024, 1025, 1500} {
			c := nous.NewContext()
			for i := range n {
				if i%3 == 0 {
					require.NoError(t, c.LogEvent(nous.EventStepStart, map[string]any{"i": i}))
				} else {
					mustAddAll(t, c, mUser("m"))
				}
			}
			prefix := c.Log().Events()
			d := c.Clone()
			for i := range 3 {
				mustAddAll(t, c, mUser("c"))
				mustAddAll(t, d, mUser("d"))
				require.NoError(t, d.LogEvent(nous.EventStepEnd, map[string]any{"i": i}))
			}
			if c.Len() > 2 {
				require.NoError(t, c.ReplaceMessageRange(0, 1, mUser("cr")))
				require.NoError(t, d.ReplaceMessageRange(1, 2, mUser("dr")))
			}
			ce, de := c.Log().Events(), d.Log().Events()
			assert.Equal(t, prefix, ce[:n], "n=%d", n)
			assert.Equal(t, prefix, de[:n], "n=%d", n)
			for _, e := range ce[n:] {
				if e.Message != nil {
					assert.NotEqual(t, "d", e.Message.Content, "n=%d: the original sees the clone's event", n)
				}
			}
			for _, e := range de[n:] {
				if e.Message != nil {
					assert.NotEqual(t, "c", e.Message.Content, "n=%d: the clone sees the original's event", n)
				}
			}
			requireFolds(t, c)
			requireFolds(t, d)
		}
	})
	t.Run("overlay carried", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mSystem("S"))
		c.SetSystemPromptOverlay("O")
		d := c.Clone()
		assert.Equal(t, "O", d.SystemPromptOverlay())
		assert.Equal(t, c.Messages(), d.Messages())
		d.SetSystemPromptOverlay("")
		assert.Equal(t, []string{"S\n\nO"}, viewTexts(c))
		assert.Equal(t, []string{"S"}, viewTexts(d))
	})
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
	assert.Equal(t, 2, c.Log().Len())
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
	ops := map[string]func(c *nous.Context) error{
		"AddMessage invalid":              func(c *nous.Context) error { return c.AddMessage(bad, nous.WithSource("memory")) },
		"AddMessages one invalid":         func(c *nous.Context) error { return c.AddMessages(mUser("ok"), mAssistant("ok"), bad) },
		"AddMessages first invalid":       func(c *nous.Context) error { return c.AddMessages(bad, mUser("ok")) },
		"LogEvent surface":                func(c *nous.Context) error { return c.LogEvent(nous.EventUserMessage, map[string]any{"a": 1}) },
		"LogEvent replace":                func(c *nous.Context) error { return c.LogEvent(nous.EventReplace, nil) },
		"LogEvent unknown":                func(c *nous.Context) error { return c.LogEvent("made_up", nil) },
		"ReplaceMessage negative":         func(c *nous.Context) error { return c.ReplaceMessage(-1, mUser("x")) },
		"ReplaceMessage past end":         func(c *nous.Context) error { return c.ReplaceMessage(c.Len(), mUser("x")) },
		"ReplaceMessage invalid":          func(c *nous.Context) error { return c.ReplaceMessage(c.Len()-1, bad) },
		"ReplaceMessageRange reversed":    func(c *nous.Context) error { return c.ReplaceMessageRange(1, 0, mUser("x")) },
		"ReplaceMessageRange past end":    func(c *nous.Context) error { return c.ReplaceMessageRange(0, c.Len(), mUser("x")) },
		"ReplaceMessageRange invalid":     func(c *nous.Context) error { return c.ReplaceMessageRange(0, c.Len()-1, bad) },
		"ReplaceMessageRange bad and OOR": func(c *nous.Context) error { return c.ReplaceMessageRange(-3, 99, bad) },
	}
	for oname, op := range ops {
		for sname, c := range viewShapes(t) {
			t.Run(sname+"/"+oname, func(t *testing.T) {
				before := stateOf(c)
				err := op(c)
				require.Error(t, err)
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

func TestErrorTexts(t *testing.T) {
	c := nous.NewContext()
	mustAddAll(t, c, mUser("a"), mUser("b"))
	err := c.ReplaceMessageRange(1, 5, mUser("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1..5")
	assert.Contains(t, err.Error(), "2 messages")
	assert.ErrorIs(t, err, nous.ErrOutOfRange)
	assert.NotErrorIs(t, err, nous.ErrInvalidMessage)
}

// The overlay's own system message is stamped like the message it goes
// before, so the view's timestamps never decrease.
func TestOverlayMessageKeepsTimestampsInOrder(t *testing.T) {
	c := nous.NewContext()
	first := nous.UserMessage("hi")
	first.CreatedAt = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, c.AddMessage(first))
	c.SetSystemPromptOverlay("be brief")
	msgs := c.Messages()
	require.Len(t, msgs, 2)
	require.Equal(t, nous.RoleSystem, msgs[0].Role)
	require.Equal(t, first.CreatedAt, msgs[0].CreatedAt)

	// Set on an empty context, it takes the first message's time once
	// there is one.
	d := nous.NewContext()
	d.SetSystemPromptOverlay("be brief")
	require.NoError(t, d.AddMessage(first))
	require.Equal(t, first.CreatedAt, d.Messages()[0].CreatedAt)
}

// On an empty view the overlay's own message carries the start of the run.
func TestOverlayOnEmptyViewCarriesStartedAt(t *testing.T) {
	c := nous.NewContext()
	c.SetSystemPromptOverlay("be brief")
	m, ok := c.LastMessage()
	require.True(t, ok)
	require.Equal(t, c.StartedAt, m.CreatedAt)
}
