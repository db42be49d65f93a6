package nous_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// A secret a process supplies nested in a dep (db.password through
// WithDeps) survives a Refresh that takes another writer's change to the
// same dep (db.host): what the store never held is kept at every depth,
// in maps and in lists of one length; what the other writer changed is
// taken, and what it deleted stays deleted.
func TestRefreshKeepsSecretsAtEveryDepth(t *testing.T) {
	ctx := context.Background()
	handle := make(chan int) // what JSON cannot hold: a store never holds it
	for _, tc := range []struct {
		name   string
		deps   func() map[string]any
		change func(deps map[string]any)
		want   map[string]any // the deps the first process has after the second's change
	}{
		{
			name:   "a map",
			deps:   func() map[string]any { return map[string]any{"db": map[string]any{"host": "h1", "password": "pw-1"}} },
			change: func(d map[string]any) { d["db"].(map[string]any)["host"] = "h2" },
			want:   map[string]any{"db": map[string]any{"host": "h2", "password": "pw-1"}},
		},
		{
			name: "two levels deep",
			deps: func() map[string]any {
				return map[string]any{"svc": map[string]any{"db": map[string]any{"host": "h1", "password": "pw-1"}, "name": "a"}}
			},
			change: func(d map[string]any) { d["svc"].(map[string]any)["db"].(map[string]any)["host"] = "h2" },
			want:   map[string]any{"svc": map[string]any{"db": map[string]any{"host": "h2", "password": "pw-1"}, "name": "a"}},
		},
		{
			name: "a list of one length",
			deps: func() map[string]any {
				return map[string]any{"dbs": []any{map[string]any{"host": "h1", "password": "pw-1"}, map[string]any{"host": "g1", "password": "pw-2"}}}
			},
			change: func(d map[string]any) { d["dbs"].([]any)[1].(map[string]any)["host"] = "g2" },
			want: map[string]any{"dbs": []any{map[string]any{"host": "h1", "password": "pw-1"},
				map[string]any{"host": "g2", "password": "pw-2"}}},
		},
		{
			name: "a key the other writer deleted",
			deps: func() map[string]any {
				return map[string]any{"db": map[string]any{"host": "h1", "port": 5432, "password": "pw-1"}}
			},
			change: func(d map[string]any) { delete(d["db"].(map[string]any), "port") },
			want:   map[string]any{"db": map[string]any{"host": "h1", "password": "pw-1"}},
		},
		{
			name: "a value the other writer set where this one holds a handle",
			deps: func() map[string]any {
				return map[string]any{"db": map[string]any{"host": "h1", "conn": handle}}
			},
			change: func(d map[string]any) { d["db"].(map[string]any)["conn"] = "c2" },
			want:   map[string]any{"db": map[string]any{"host": "h1", "conn": "c2"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storetest.NewMemory()
			first, _, err := nous.Resume(ctx, store, "s", nous.WithDeps(tc.deps()))
			require.NoError(t, err)
			require.NoError(t, first.AddMessage(nous.UserMessage("hi")))
			require.NoError(t, first.Save(ctx, store))

			second, _, err := nous.Resume(ctx, store, "s", nous.WithDeps(tc.deps()))
			require.NoError(t, err)
			tc.change(second.Deps)
			require.NoError(t, second.AddMessage(nous.UserMessage("changed")))
			require.NoError(t, second.Save(ctx, store))

			require.NoError(t, first.Refresh(ctx, store))
			assert.Equal(t, tc.want, first.Deps)
			assert.Equal(t, second.Messages(), first.Messages())
			require.NoError(t, first.AddMessage(nous.UserMessage("on")))
			require.NoError(t, first.Save(ctx, store), "nothing left to conflict")
		})
	}
}
