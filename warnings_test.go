package nous_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// A secret kept in deps, as documented, is not warned of, nor one nested
// in a dep, nor a secret value masked in a message: a save warns only of
// what JSON cannot hold, naming it.
func TestSaveWarnsOnlyOfWhatJSONCannotHold(t *testing.T) {
	ctx := context.Background()
	rec := &nous.LogRecorder{}
	store := storetest.NewMemory()
	c, _, err := nous.Resume(ctx, store, "s", nous.WithLogger(slog.New(rec)),
		nous.WithDeps(map[string]any{"api_key": "sk-live-0123456789", "db": map[string]any{"password": "hunter2-horse"}}))
	require.NoError(t, err)
	require.NoError(t, c.AddMessage(nous.UserMessage("my key is sk-live-0123456789")))
	require.NoError(t, c.Save(ctx, store))
	assert.Empty(t, rec.Warnings(), "secrets are dropped as documented")

	c.Deps["client"] = func() {}
	require.NoError(t, c.AddMessage(nous.UserMessage("again")))
	require.NoError(t, c.Save(ctx, store))
	warnings := rec.Warnings()
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "unencodable=[deps.client]")
	assert.NotContains(t, warnings[0], "secret")
	assert.NotContains(t, warnings[0], "api_key")
}
