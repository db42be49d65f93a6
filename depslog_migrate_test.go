package nous_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// A store written before deps_update events existed (testdata: a file
// store of a session with deps, one update applied, two saves, made by
// the code of that time) loads as it was; its log records no deps until
// the first save, which records the deps it has then, so that from that
// event on the deps as of each seq are the log's. The store kept its
// batches' keys apart: the log ends with the batch event that lists them.
func TestStoreWrittenBeforeDepsUpdate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "store_before_deps_update"), dir)
	s, err := filestore.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	c, err := nous.LoadByName(ctx, s, "written before deps_update")
	require.NoError(t, err)
	c.Logger = quietLogger()
	require.Equal(t, map[string]any{"user": "ada", "n": 2, "notes": []any{"tea"}}, c.Deps)
	head := int64(c.Log().Len())
	deps, err := c.Log().Deps(head)
	require.NoError(t, err)
	require.Empty(t, deps, "the old log records no deps")
	last, _ := c.Log().Event(head)
	require.Equal(t, nous.EventBatch, last.Type, "the keys the store kept apart are a batch event")
	require.Len(t, last.Data[nous.DataKeys], 2, "one key a save")
	for _, k := range last.Data[nous.DataKeys].([]any) {
		require.True(t, c.HasBatch(k.(string)))
	}

	require.NoError(t, c.Save(ctx, s), "an unchanged context's first save records its deps")
	require.Equal(t, head+2, int64(c.Log().Len()), "a deps_update and the batch event")
	again, err := nous.LoadByName(ctx, s, "written before deps_update")
	require.NoError(t, err)
	deps, err = again.Log().Deps(head + 1)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"user": "ada", "n": 2, "notes": []any{"tea"}}, deps)
	again.Logger = quietLogger()
	require.NoError(t, again.Save(ctx, s))
	require.Equal(t, head+2, int64(again.Log().Len()), "then a save with nothing new records nothing")
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	require.NoError(t, err)
}
