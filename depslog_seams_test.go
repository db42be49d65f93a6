package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// The seams of the deps record: direct changes and updates mixed, typed
// values, redaction rules that change, odd keys and numbers.

// depsAtHead returns the deps the log of c folds to at its head.
func depsAtHead(t *testing.T, c *nous.Context) map[string]any {
	t.Helper()
	deps, err := c.Log().Deps(int64(c.Log().Len()))
	require.NoError(t, err)
	return deps
}

// requireFoldIsState checks that the deps of the stored state (what Load
// reads) are the fold of the stored log at its head, as FORMAT says.
func requireFoldIsState(t *testing.T, s nous.Store, c *nous.Context) {
	t.Helper()
	loaded := mustLoad(t, s, c.Log().ID())
	require.JSONEq(t, string(mustJSON(t, loaded.Deps)), string(mustJSON(t, depsAtHead(t, loaded))),
		"the stored state's deps are not the fold of the stored log")
}

// A key changed directly, then appended to by an update before any save:
// the log records what the deps hold, and the session saves and loads.
func TestDirectChangeThenAppend(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["notes"] = "none yet"
	require.NoError(t, c.Save(ctx, s))

	c.Deps["notes"] = []any{} // reset to a list, directly: recorded at the next save
	require.NoError(t, nous.NewContextUpdate().Append("notes", "likes tea").Apply(c))
	require.Equal(t, []any{"likes tea"}, c.Deps["notes"])

	require.NoError(t, c.Save(ctx, s), "a context Apply accepted cannot be saved")
	requireFoldIsState(t, s, c)

	data, err := c.Serialize()
	require.NoError(t, err)
	_, err = nous.Deserialize(data)
	require.NoError(t, err, "Deserialize(Serialize()) refuses the context's own log")
}

// A key deleted directly, then appended to by an update: the same.
func TestDirectDeleteThenAppend(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["todo"] = 3
	require.NoError(t, c.Save(ctx, s))
	delete(c.Deps, "todo")
	require.NoError(t, nous.NewContextUpdate().Append("todo", "x").Apply(c))
	require.NoError(t, c.Save(ctx, s))
	requireFoldIsState(t, s, c)
}

// An append to a []byte, which is written as a string: the log records
// the value as written, and the session saves on.
func TestAppendToByteSlice(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["raw"] = []byte("hi")
	require.NoError(t, c.Save(ctx, s))
	require.NoError(t, nous.NewContextUpdate().Append("raw", byte('!')).Apply(c))
	require.Equal(t, []byte("hi!"), c.Deps["raw"])
	require.NoError(t, c.Save(ctx, s), "a context Apply accepted cannot be saved")
	requireFoldIsState(t, s, c)
}

// A redaction rule that names "key", "value", "op" or "ops" leaves a
// deps_update's own fields alone: the stored log loads.
func TestRuleNamingOpFields(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	cautious := func(k string) bool { return strings.Contains(strings.ToLower(k), "key") || nous.IsSecretKey(k) }
	c := nous.NewContext(nous.WithLogger(quietLogger()), nous.WithRedaction(cautious))
	require.NoError(t, nous.NewContextUpdate().Set("user", "ada").Apply(c))
	require.NoError(t, c.Save(ctx, s))

	loaded, err := nous.Load(ctx, s, c.Log().ID())
	require.NoError(t, err, "the context's own saved log does not load")
	require.Equal(t, map[string]any{"user": "ada"}, depsAtHead(t, loaded))

	data, err := c.Serialize()
	require.NoError(t, err)
	_, err = nous.Deserialize(data)
	require.NoError(t, err)
}

// A key that a rule set after its update names a secret is not written
// in the update's recorded operation either.
func TestRuleChangeKeepsSecretOutOfOps(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	require.NoError(t, nous.NewContextUpdate().Set("session", "sess-SECRET-123").Apply(c))
	c.Redact = func(k string) bool { return k == "session" || nous.IsSecretKey(k) }
	require.NoError(t, c.Save(ctx, s))

	st, err := s.Read(ctx, c.Log().ID(), 0)
	require.NoError(t, err)
	require.NotContains(t, string(st.State), "sess-SECRET-123") // the state holds
	for i, e := range st.Events {
		require.NotContains(t, string(e), "sess-SECRET-123", "stored event %d holds the secret", i)
	}
	data, err := c.Serialize()
	require.NoError(t, err)
	require.False(t, bytes.Contains(data, []byte("sess-SECRET-123")), "Serialize writes the secret in a deps_update")
}

// A rule that comes to name a key inside a recorded value: the next save
// records the value as now written, in memory and in the store.
func TestRuleChangeNestedKey(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["cfg"] = map[string]any{"region": "eu", "session": "s-1"}
	require.NoError(t, c.Save(ctx, s))
	c.Redact = func(k string) bool { return k == "session" || nous.IsSecretKey(k) }
	require.NoError(t, c.Save(ctx, s))
	requireFoldIsState(t, s, c)
	require.Equal(t, map[string]any{"cfg": map[string]any{"region": "eu"}}, depsAtHead(t, c))
}

// A string dep that is not valid UTF-8 is recorded as written, each bad
// byte U+FFFD, as the state holds it.
func TestInvalidUTF8Dep(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["s"] = "a\xffb"
	require.NoError(t, c.Save(ctx, s))
	requireFoldIsState(t, s, c)
}

// A number past a float64's range is recorded once: a save with nothing
// new records and stores nothing.
func TestHugeJSONNumberRecordedOnce(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["n"] = json.Number("1e400")
	require.NoError(t, c.Save(ctx, s))
	n := c.Log().Len()
	st, err := s.Read(ctx, c.Log().ID(), 0)
	require.NoError(t, err)
	require.NoError(t, c.Save(ctx, s))
	require.NoError(t, c.Save(ctx, s))
	require.Equal(t, n, c.Log().Len(), "saves with nothing new recorded deps_update events")
	st2, err := s.Read(ctx, c.Log().ID(), 0)
	require.NoError(t, err)
	require.Equal(t, st.Info.Head, st2.Info.Head, "saves with nothing new stored batches")
}

// Loading a log of n appends to one list costs linear in n: the fold
// appends in place.
func TestLoadFoldOfAppendsIsLinear(t *testing.T) {
	build := func(n int) []byte {
		c := nous.NewContext(nous.WithLogger(quietLogger()))
		for i := range n {
			require.NoError(t, nous.NewContextUpdate().Append("notes", i).Apply(c))
		}
		data, err := c.Serialize()
		require.NoError(t, err)
		return data
	}
	allocated := func(data []byte) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := nous.Deserialize(data)
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := build(1000), build(4000)
	a, b := allocated(small), allocated(large)
	ratio := float64(b) / float64(a)
	t.Logf("Deserialize allocates %d bytes for 1000 appends, %d for 4000: x%.1f", a, b, ratio)
	require.Less(t, ratio, 8.0, "loading a log of appends costs more than linear in its length")
}

// Two keys written as one (they differ only in invalid UTF-8) are in
// neither the state nor the log.
func TestCollidingInvalidKeys(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.Deps["k\xff"] = 1
	c.Deps["k\xfe"] = 2
	require.NoError(t, c.Save(ctx, s))
	requireFoldIsState(t, s, c)
}
