package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// The deps as of each seq are the fold of the log's deps_update events:
// an update's operations as it applies, a direct change once a save
// records it.
func TestDepsAsOfEachSeq(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()), nous.WithDeps(map[string]any{"user": "ada", "api_key": "sk-1"}))
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))                           // 1
	require.NoError(t, nous.NewContextUpdate().Append("notes", "tea").Apply(c))        // 2
	c.Deps["user"] = "grace"                                                           // recorded by the save
	require.NoError(t, c.AddMessage(nous.UserMessage("again")))                        // 3
	require.NoError(t, c.Save(ctx, s))                                                 // 4, and 5 its batch
	require.NoError(t, nous.NewContextUpdate().Delete("notes").Set("n", 2.0).Apply(c)) // 6
	require.NoError(t, c.Save(ctx, s))                                                 // 7, the batch, with nothing new to record
	want := []string{
		`{}`,
		`{}`,
		`{"notes":["tea"]}`,
		`{"notes":["tea"]}`,
		`{"notes":["tea"],"user":"grace"}`,
		`{"notes":["tea"],"user":"grace"}`,
		`{"n":2,"user":"grace"}`,
		`{"n":2,"user":"grace"}`,
	}
	for _, l := range []*nous.SessionLog{c.Log(), mustLoad(t, s, c.Log().ID()).Log()} {
		require.Equal(t, len(want)-1, l.Len())
		for seq, w := range want {
			deps, err := l.Deps(int64(seq))
			require.NoError(t, err)
			require.JSONEq(t, w, string(mustJSON(t, deps)), "as of seq %d", seq)
		}
		_, err := l.Deps(int64(l.Len()) + 1)
		require.ErrorIs(t, err, nous.ErrOutOfRange)
		_, err = l.Deps(-1)
		require.ErrorIs(t, err, nous.ErrOutOfRange)
	}
	data, err := c.Serialize()
	require.NoError(t, err)
	require.False(t, bytes.Contains(data, []byte("sk-1")), "a secret in the log")
}

// A key that a rule changed since names a secret is taken out of what the
// log records, as it is out of what a save writes.
func TestDepsRecordForgetsANewSecret(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()), nous.WithDeps(map[string]any{"sync_token": "abc", "user": "ada"}),
		nous.WithRedaction(func(string) bool { return false }))
	require.NoError(t, c.Save(ctx, s))
	deps, err := c.Log().Deps(int64(c.Log().Len()))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"sync_token": "abc", "user": "ada"}, deps)
	c.Redact = nil // IsSecretKey names sync_token
	require.NoError(t, c.Save(ctx, s))
	deps, err = c.Log().Deps(int64(c.Log().Len()))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"user": "ada"}, deps)
}

// deps_update events are recorded by Apply and Save only.
func TestLogEventRefusesDepsUpdate(t *testing.T) {
	c := nous.NewContext()
	err := c.LogEvent(nous.EventDepsUpdate, map[string]any{nous.DataOps: []any{}})
	require.ErrorIs(t, err, nous.ErrUnknownEventType)
	require.Zero(t, c.Log().Len())
}

// A deps_update event that does not hold operations does not load: the
// deps of the log could not be told.
func TestMalformedDepsUpdate(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	require.NoError(t, nous.NewContextUpdate().Set("a", 1).Apply(c))
	data, err := c.Serialize()
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"not a list":      `"ops":"set"`,
		"no key":          `"ops":[{"op":"set","value":1}]`,
		"unknown op":      `"ops":[{"op":"rename","key":"a","value":1}]`,
		"set, no value":   `"ops":[{"op":"set","key":"a"}]`,
		"delete, a value": `"ops":[{"op":"delete","key":"a","value":1}]`,
		"merge of a list": `"ops":[{"op":"merge","key":"a","value":[1]}]`,
		"append onto 1":   `"ops":[{"op":"set","key":"a","value":1},{"op":"append","key":"a","value":2}]`,
	} {
		t.Run(name, func(t *testing.T) {
			doc := strings.Replace(string(data), `"ops":[{"key":"a","op":"set","value":1}]`, bad, 1)
			require.NotEqual(t, string(data), doc, "the test's document holds no such event")
			_, err := nous.Deserialize([]byte(doc))
			require.ErrorIs(t, err, nous.ErrInvalidLog)
			require.Contains(t, err.Error(), "events[0]")
		})
	}
}

// A save refused before it stores anything records nothing either.
func TestRefusedSaveRecordsNothing(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["user"] = "ada"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Save(ctx, storetest.NewMemory())
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	require.Zero(t, c.Log().Len())
	c.SetBatchKey("no NUL\x00 in a key")
	require.ErrorIs(t, c.Save(context.Background(), storetest.NewMemory()), nous.ErrInvalidKey)
	require.Zero(t, c.Log().Len())
}

func mustLoad(t *testing.T, s nous.Store, id uuid.UUID) *nous.Context {
	t.Helper()
	c, err := nous.Load(context.Background(), s, id)
	require.NoError(t, err)
	return c
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// A clone and its original append to the same recorded list apart: the
// room the record keeps to append in place is the original's alone.
func TestDepsRecordOfAClone(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	for i := range 5 {
		require.NoError(t, nous.NewContextUpdate().Append("l", i).Apply(c))
		require.NoError(t, c.Save(ctx, s)) // the record's fold appends to its list
	}
	d := c.Clone()
	require.NoError(t, nous.NewContextUpdate().Append("l", "clone").Apply(d))
	require.NoError(t, d.Save(ctx, s))
	require.NoError(t, nous.NewContextUpdate().Append("l", "original").Apply(c))
	require.NoError(t, c.Save(ctx, s))
	require.NoError(t, d.Save(ctx, s))
	for name, x := range map[string]*nous.Context{"original": c, "clone": d} {
		deps, err := x.Log().Deps(int64(x.Log().Len()))
		require.NoError(t, err)
		require.Equal(t, x.Deps["l"], deps["l"], "the %s's record", name)
		x.Deps["other"] = 1 // a save compares the deps with the record
		require.NoError(t, x.Save(ctx, s))
		loaded := mustLoad(t, s, x.Log().ID())
		require.Equal(t, x.Deps["l"], loaded.Deps["l"], "the %s as stored", name)
	}
}
