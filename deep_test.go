package nous_test

import (
	"encoding/json"
	"log/slog"
	"strings"
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

// AppendEventJSON's warning and Serialize's each name the method that
// dropped the values, and a path a warning named is not named again by the
// same context: a credential kept in deps warns once, not at every save.
func TestDroppedValuesWarningNamesTheMethod(t *testing.T) {
	rec := &nous.LogRecorder{}
	c := nous.NewContext(nous.WithLogger(slog.New(rec)), nous.WithDeps(map[string]any{"f": func() {}, "api_key": "sk"}))
	require.NoError(t, c.LogEvent(nous.EventToolCall, map[string]any{"ch": make(chan int)}))
	_, err := c.AppendEventJSON(nil, 1)
	require.NoError(t, err)
	_, err = c.Serialize()
	require.NoError(t, err)
	for range 3 {
		_, err = c.Serialize()
		require.NoError(t, err)
	}
	warnings := rec.Warnings()
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "AppendEventJSON dropped")
	assert.Contains(t, warnings[0], "log.events[0].data.ch")
	assert.Contains(t, warnings[1], "Serialize dropped")
	assert.Contains(t, warnings[1], "deps.f")
	assert.NotContains(t, warnings[1], "deps.api_key", "a secret kept in deps is not warned of")
	assert.NotContains(t, warnings[1], "log.events[0]", "named before")
	_, _ = c.Clone().Serialize() // a clone is another context: it warns on its own
	assert.Len(t, rec.Warnings(), 3)

	_, err = c.AppendEventJSON(nil, 2)
	require.ErrorIs(t, err, nous.ErrOutOfRange)
}

// Tool-call arguments survive a save and a load byte for byte, whatever the
// model sent: white space, JSON that is not an object, no JSON at all; the
// reply is kept, and ParseArguments says when the arguments are unusable.
func TestArgumentsSurviveExactly(t *testing.T) {
	for _, args := range []string{`{"city":"Rome","n":1.50}`, `{"city": "Rome",  "n": 1.50}`, "{\n\t\"a\": [1, 2]\n}",
		`[1]`, `"q"`, `{"q":`, `{}{}`, `not json at all`, `{"deep":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`} {
		call := nous.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(args)}
		c := nous.NewContext()
		require.NoError(t, c.AddMessage(nous.AssistantMessage("", call)), args)
		c.AddToolCall(call)
		d := saveAndLoad(t, c)
		m, _ := d.LastMessage()
		assert.Equal(t, args, string(m.ToolCalls[0].Arguments), "in the log")
		assert.Equal(t, args, string(d.ToolCalls[0].Arguments), "in the recorded calls")
		b, err := c.AppendEventJSON(nil, 1)
		require.NoError(t, err)
		var e nous.Event
		require.NoError(t, json.Unmarshal(b, &e))
		assert.Equal(t, args, string(e.Message.ToolCalls[0].Arguments), "one event")

		var v map[string]any
		err = call.ParseArguments(&v)
		if json.Valid([]byte(args)) && args[0] == '{' {
			assert.NoError(t, err, args)
		} else {
			assert.ErrorIs(t, err, nous.ErrInvalidArguments, args)
			assert.Contains(t, err.Error(), `"c1"`)
		}
	}
	var v struct{ N int }
	assert.ErrorIs(t, nous.ToolCall{ID: "c", Arguments: json.RawMessage(`{"N":"x"}`)}.ParseArguments(&v), nous.ErrInvalidArguments, "a value that does not fit")
	assert.NoError(t, nous.ToolCall{ID: "c"}.ParseArguments(&v), "no arguments are {}")

	// The reference library keeps arguments it could not parse beside {}.
	d, err := nous.Deserialize([]byte(`{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"f","arguments":{},"_invalid_arguments":"{oops"}]}]}`))
	require.NoError(t, err)
	m, _ := d.LastMessage()
	assert.Equal(t, "{oops", string(m.ToolCalls[0].Arguments))
}

// A tool result may report an error, and says so after a save and a load.
func TestToolErrorMessage(t *testing.T) {
	m := nous.ToolErrorMessage("c1", "f", "arguments are not a JSON object")
	require.NoError(t, m.Validate())
	assert.True(t, m.IsError())
	assert.False(t, nous.ToolMessage("c1", "f", "ok").IsError())
	c := nous.NewContext(nous.WithMessages(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"}), m))
	got, _ := saveAndLoad(t, c).LastMessage()
	assert.True(t, got.IsError())
}
