package nous_test

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// nest wraps leaf in n maps: {"d": {"d": ... leaf}}.
func nest(n int, leaf map[string]any) map[string]any {
	for range n {
		leaf = map[string]any{"d": leaf}
	}
	return leaf
}

// leafOf returns the map n levels down m.
func leafOf(t *testing.T, n int, m map[string]any) map[string]any {
	t.Helper()
	for range n {
		next, ok := m["d"].(map[string]any)
		require.True(t, ok)
		m = next
	}
	return m
}

// A merge never writes a map it did not make, however deep: deeper than the
// 1,000 levels deep copies go, the maps it writes along its path are still
// its own.
func TestMergeBeyondCopyDepthWritesNothingShared(t *testing.T) {
	const depth = 1_002
	for _, name := range []string{"ToDeps", "Apply on a clone", "ApplyToRunContext"} {
		t.Run(name, func(t *testing.T) {
			initial := map[string]any{"k": nest(depth, map[string]any{"v": "initial"})}
			u := nous.NewContextUpdate().Merge("k", nest(depth, map[string]any{"v": "merged", "w": 1}))
			var got map[string]any
			switch name {
			case "ToDeps":
				var err error
				got, err = u.ToDeps(initial)
				require.NoError(t, err)
			case "Apply on a clone":
				c := nous.NewContext()
				c.Deps = initial
				d := c.Clone()
				require.NoError(t, u.Apply(d))
				got = d.Deps
			case "ApplyToRunContext":
				rc := nous.RunContext{Deps: initial}
				out, err := u.ApplyToRunContext(rc)
				require.NoError(t, err)
				got = out.Deps
			}
			assert.Equal(t, map[string]any{"v": "initial"}, leafOf(t, depth, initial["k"].(map[string]any)))
			assert.Equal(t, map[string]any{"v": "merged", "w": 1}, leafOf(t, depth, got["k"].(map[string]any)))
		})
	}
}

// Serialize's warning and AppendEventJSON's each name the method that
// dropped the values.
func TestDroppedValuesWarningNamesTheMethod(t *testing.T) {
	rec := &nous.LogRecorder{}
	c := nous.NewContext(nous.WithLogger(slog.New(rec)), nous.WithDeps(map[string]any{"f": func() {}}))
	require.NoError(t, c.LogEvent(nous.EventToolCall, map[string]any{"ch": make(chan int)}))
	_, err := c.Serialize()
	require.NoError(t, err)
	_, err = c.AppendEventJSON(nil, 1)
	require.NoError(t, err)
	warnings := rec.Warnings()
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "Serialize dropped")
	assert.Contains(t, warnings[0], "deps.f")
	assert.Contains(t, warnings[1], "AppendEventJSON dropped")
	assert.Contains(t, warnings[1], "log.events[0].data.ch")

	_, err = c.AppendEventJSON(nil, 2)
	require.ErrorIs(t, err, nous.ErrOutOfRange)
}

// A recorded tool call whose arguments are JSON but not an object (AddToolCall
// does not validate) is written without them, so the document reads back.
func TestSerializeDropsToolCallArgumentsThatAreNotAnObject(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
	c.AddToolCall(nous.ToolCall{ID: "1", Name: "f", Arguments: json.RawMessage(`[1]`)})
	data, err := c.Serialize()
	require.NoError(t, err)
	d, err := nous.Deserialize(data)
	require.NoError(t, err)
	assert.Equal(t, []nous.ToolCall{{ID: "1", Name: "f"}}, d.ToolCalls)
}
