package nous_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// ev builds an event for hand-made logs.
func logEv(seq int64, typ nous.EventType, m *nous.Message) nous.Event {
	return nous.Event{Seq: seq, Type: typ, Message: m, CreatedAt: t0}
}

func logEvReplace(seq, first, last int64, m nous.Message) nous.Event {
	e := logEv(seq, nous.EventReplace, &m)
	e.First, e.Last = first, last
	return e
}

func msgPtr(m nous.Message) *nous.Message { return &m }

func TestFold(t *testing.T) {
	u := func(s string) *nous.Message { return msgPtr(mUser(s)) }
	tests := []struct {
		name   string
		events []nous.Event
		want   []string
	}{
		{"empty", nil, []string{}},
		{"messages and bookkeeping", []nous.Event{
			logEv(1, nous.EventTurnStart, nil), logEv(2, nous.EventUserMessage, u("a")), logEv(3, nous.EventStepStart, nil),
			logEv(4, nous.EventAssistantMessage, msgPtr(mAssistant("b"))), logEv(5, nous.EventSystemMessage, msgPtr(mSystem("c"))),
			logEv(6, nous.EventToolResult, msgPtr(mTool("x", "d"))), logEv(7, nous.EventTurnEnd, nil),
		}, []string{"a", "b", "c", "d"}},
		{"replace a range", []nous.Event{
			logEv(1, nous.EventUserMessage, u("a")), logEv(2, nous.EventUserMessage, u("b")), logEv(3, nous.EventUserMessage, u("c")),
			logEvReplace(4, 1, 2, mUser("ab")),
		}, []string{"ab", "c"}},
		{"replace a replacement, anchors out of seq order", []nous.Event{
			logEv(1, nous.EventUserMessage, u("a")), logEv(2, nous.EventUserMessage, u("b")), logEv(3, nous.EventUserMessage, u("c")),
			logEvReplace(4, 1, 1, mUser("A")),
			logEvReplace(5, 4, 3, mUser("all")), // 4 sits before 3 in the view
			logEv(6, nous.EventUserMessage, u("d")),
		}, []string{"all", "d"}},
		{"replace in the middle", []nous.Event{
			logEv(1, nous.EventUserMessage, u("a")), logEv(2, nous.EventUserMessage, u("b")), logEv(3, nous.EventUserMessage, u("c")),
			logEvReplace(4, 2, 2, mUser("B")),
		}, []string{"a", "B", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reftest.Copy(tt.events)
			got, err := nous.Fold(tt.events)
			require.NoError(t, err)
			texts := []string{}
			for _, m := range got {
				texts = append(texts, m.Content)
			}
			assert.Equal(t, tt.want, texts)
			assert.NotNil(t, got)
			assert.Equal(t, before, tt.events, "Fold does not change its input")
		})
	}
}

func TestFoldErrors(t *testing.T) {
	u := func(s string) *nous.Message { return msgPtr(mUser(s)) }
	two := []nous.Event{logEv(1, nous.EventUserMessage, u("a")), logEv(2, nous.EventTurnEnd, nil)}
	with := func(es ...nous.Event) []nous.Event { return append(reftest.Copy(two).([]nous.Event), es...) }
	withFirst := func(e nous.Event, f, l int64) nous.Event { e.First, e.Last = f, l; return e }
	withAfter := func(e nous.Event, after int64) nous.Event { e.After = after; return e }
	tests := []struct {
		name   string
		events []nous.Event
		want   error
	}{
		{"first seq not 1", []nous.Event{logEv(2, nous.EventUserMessage, u("a"))}, nous.ErrInvalidLog},
		{"seq zero", []nous.Event{logEv(0, nous.EventUserMessage, u("a"))}, nous.ErrInvalidLog},
		{"duplicate seq", with(logEv(2, nous.EventUserMessage, u("b"))), nous.ErrInvalidLog},
		{"gap", with(logEv(4, nous.EventUserMessage, u("b"))), nous.ErrInvalidLog},
		{"unknown type", with(logEv(3, "mystery", nil)), nous.ErrUnknownEventType},
		{"empty type", with(logEv(3, "", u("b"))), nous.ErrUnknownEventType},
		{"bookkeeping with a message", with(logEv(3, nous.EventTurnStart, u("b"))), nous.ErrInvalidLog},
		{"bookkeeping with a range", with(withFirst(logEv(3, nous.EventStepEnd, nil), 1, 1)), nous.ErrInvalidLog},
		{"bookkeeping after an entry", with(withAfter(logEv(3, nous.EventStepEnd, nil), 1)), nous.ErrInvalidLog},
		{"message after a negative seq", with(withAfter(logEv(3, nous.EventUserMessage, u("b")), -1)), nous.ErrInvalidLog},
		{"surface without a message", with(logEv(3, nous.EventUserMessage, nil)), nous.ErrInvalidLog},
		{"replace without a message", with(withFirst(logEv(3, nous.EventReplace, nil), 1, 1)), nous.ErrInvalidLog},
		{"invalid message", with(logEv(3, nous.EventUserMessage, msgPtr(nous.Message{Role: nous.RoleUser}))), nous.ErrInvalidMessage},
		{"type and role disagree", with(logEv(3, nous.EventUserMessage, msgPtr(mAssistant("b")))), nous.ErrInvalidLog},
		{"tool result of a user", with(logEv(3, nous.EventToolResult, u("b"))), nous.ErrInvalidLog},
		{"message event with a range", with(withFirst(logEv(3, nous.EventUserMessage, u("b")), 1, 1)), nous.ErrInvalidLog},
		{"replace anchor zero", with(logEvReplace(3, 0, 1, mUser("r"))), nous.ErrInvalidLog},
		{"replace anchor negative", with(logEvReplace(3, 1, -1, mUser("r"))), nous.ErrInvalidLog},
		{"replace anchor is itself", with(logEvReplace(3, 3, 3, mUser("r"))), nous.ErrInvalidLog},
		{"replace anchor in the future", with(logEvReplace(3, 1, 7, mUser("r"))), nous.ErrInvalidLog},
		{"replace anchor is bookkeeping", with(logEvReplace(3, 2, 2, mUser("r"))), nous.ErrInvalidLog},
		{"replace anchor already shadowed", with(logEvReplace(3, 1, 1, mUser("r")), logEvReplace(4, 1, 1, mUser("s"))), nous.ErrInvalidLog},
		{"replace anchors in the wrong order", with(logEv(3, nous.EventUserMessage, u("b")), logEvReplace(4, 3, 1, mUser("r"))), nous.ErrInvalidLog},
		{"replace with an invalid message", with(logEvReplace(3, 1, 1, nous.Message{Role: nous.RoleTool, Content: "x"})), nous.ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reftest.Copy(tt.events)
			got, err := nous.Fold(tt.events)
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, got)
			assert.Equal(t, before, tt.events)
		})
	}
}

func TestEventJSON(t *testing.T) {
	c := nous.NewContext()
	require.NoError(t, c.AddMessage(fullMessage(), nous.WithSource("memory")))
	require.NoError(t, c.LogEvent(nous.EventRequestHeader, map[string]any{"n": 1, "h": map[string]any{"x-id": "abc", "k": []any{1, 2.5}}}))
	mustAddAll(t, c, mUser("u"))
	require.NoError(t, c.ReplaceMessageRange(0, 1, mUser("summary")))
	events := c.Log().Events()

	b, err := json.Marshal(events)
	require.NoError(t, err)
	var got []nous.Event
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, events, got)
	folded, err := nous.Fold(got)
	require.NoError(t, err)
	assert.Equal(t, c.Messages(), folded)

	t.Run("bookkeeping event has no message or range", func(t *testing.T) {
		b, err := json.Marshal(events[1])
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		assert.NotContains(t, m, "message")
		assert.NotContains(t, m, "first")
		assert.Contains(t, m, "data")
	})
	t.Run("errors", func(t *testing.T) {
		for _, s := range []string{`[]`, `{"seq":"one"}`, `{"seq":1,"data":[1]}`, `{"seq":1,"data":"x"}`, `{"seq":1,"message":{"role":"user","metadata":3}}`} {
			var e nous.Event
			assert.Error(t, json.Unmarshal([]byte(s), &e), s)
		}
	})
}

// Log is a live handle: it sees later events, and overwriting it changes
// nothing in the context. Snapshot is a value of its own: the context
// appending after it was taken does not change it.
func TestLogHandleAndSnapshot(t *testing.T) {
	c := nous.NewContext()
	require.NoError(t, c.AddMessage(nous.UserMessage("one")))
	l := c.Log()
	snap := l.Snapshot()
	require.NoError(t, c.AddMessage(nous.UserMessage("two")))
	require.Equal(t, 2, l.Len(), "the handle is live")
	require.Len(t, l.Events(), 2)
	require.Equal(t, 1, snap.Len(), "the snapshot is frozen")
	require.Len(t, snap.Events(), 1)
	require.Equal(t, c.Log().ID(), snap.ID())

	*l = nous.SessionLog{}
	*snap = nous.SessionLog{}
	require.Equal(t, 2, c.Log().Len())
	require.Len(t, c.Messages(), 2)

	var none *nous.SessionLog
	require.Zero(t, none.Snapshot().Len())
	require.Zero(t, none.Len())
}

// A snapshot may be read on another goroutine while the owner keeps
// appending: the owner writes only past what the snapshot sees. Run with
// -race, this fails if a write and a read ever touch the same memory.
func TestLogSnapshotReadWhileOwnerAppends(t *testing.T) {
	c := nous.NewContext()
	for i := range 600 { // past one chunk, so full chunks and a tail exist
		require.NoError(t, c.AddMessage(nous.UserMessage(fmt.Sprint(i))))
	}
	done := make(chan []nous.Event)
	for range 4 {
		l := c.Log().Snapshot()
		go func() { done <- l.Events() }()
	}
	for i := range 1200 {
		require.NoError(t, c.LogEvent(nous.EventStepStart, map[string]any{"i": i}))
	}
	for range 4 {
		events := <-done
		require.Len(t, events, 600)
		for i, e := range events {
			require.Equal(t, int64(i+1), e.Seq)
		}
	}
}

func TestLogSince(t *testing.T) {
	c := nous.NewContext()
	for i := range 700 {
		require.NoError(t, c.LogEvent(nous.EventStepStart, map[string]any{"i": i}))
	}
	all := c.Log().Events()
	for _, seq := range []int64{math.MinInt64, -5, 0, 1, 511, 512, 513, 699, 700, 800, math.MaxInt64} {
		var got []nous.Event
		for e := range c.Log().Since(seq) {
			got = append(got, e)
		}
		from := min(max(seq, 0), 700)
		require.Equal(t, all[from:], append([]nous.Event{}, got...), "since %d", seq)
	}
	n := 0
	for range c.Log().Since(10) {
		n++
		if n == 3 {
			break
		}
	}
	require.Equal(t, 3, n)
}
