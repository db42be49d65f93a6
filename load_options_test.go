package nous_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// appendCounter counts the batches a store is given.
type appendCounter struct {
	nous.Store
	n atomic.Int32
}

func (s *appendCounter) Append(ctx context.Context, b nous.Batch) error {
	s.n.Add(1)
	return s.Store.Append(ctx, b)
}

// keepSyncToken is a rule that keeps a key the default drops.
func keepSyncToken(k string) bool { return k != "sync_token" && nous.IsSecretKey(k) }

// A session loaded under a rule that keeps a key the default drops
// (sync_token) has, when it changed nothing, nothing to save: its idle
// Save writes nothing, and its Refresh takes another writer's turn. Load,
// LoadByName and Resume take the rule before they record what they read.
func TestLoadTakesTheRuleFirst(t *testing.T) {
	ctx := context.Background()
	loads := map[string]func(s nous.Store, id uuid.UUID, opts ...nous.Option) (*nous.Context, error){
		"Load": func(s nous.Store, id uuid.UUID, opts ...nous.Option) (*nous.Context, error) {
			return nous.LoadWith(ctx, s, id, opts...)
		},
		"LoadByName": func(s nous.Store, _ uuid.UUID, opts ...nous.Option) (*nous.Context, error) {
			return nous.LoadByName(ctx, s, "s", opts...)
		},
		"Resume": func(s nous.Store, _ uuid.UUID, opts ...nous.Option) (*nous.Context, error) {
			c, resumed, err := nous.Resume(ctx, s, "s", opts...)
			if err == nil && !resumed {
				err = errors.New("not resumed")
			}
			return c, err
		},
	}
	for name, load := range loads {
		t.Run(name, func(t *testing.T) {
			store := &appendCounter{Store: storetest.NewMemory()}
			first := nous.NewContext(nous.WithLogName("s"), nous.WithRedaction(keepSyncToken),
				nous.WithDeps(map[string]any{"sync_token": "st-1", "region": "eu"}))
			require.NoError(t, first.AddMessage(nous.UserMessage("hi")))
			require.NoError(t, first.Save(ctx, store))

			mine, err := load(store, first.Log().ID(), nous.WithRedaction(keepSyncToken))
			require.NoError(t, err)
			other, err := load(store, first.Log().ID(), nous.WithRedaction(keepSyncToken))
			require.NoError(t, err)
			assert.Equal(t, "st-1", mine.Deps["sync_token"])

			before := store.n.Load()
			require.NoError(t, mine.Save(ctx, store))
			assert.Equal(t, before, store.n.Load(), "an idle save wrote")

			require.NoError(t, other.AddMessage(nous.UserMessage("from the other writer")))
			require.NoError(t, other.Save(ctx, store))
			require.NoError(t, mine.Refresh(ctx, store), "a context that changed nothing conflicts")
			assert.Equal(t, other.Messages(), mine.Messages())
		})
	}
}

// Every option no store keeps applies to a loaded session as to a new
// one: Load, LoadByName and Resume give the loaded context the observer,
// the callbacks, the notify target, the approval handler, the logger, the
// cancellation check, the stream flag and the rule.
func TestLoadedSessionTakesRuntimeOptions(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewMemory()
	c := nous.NewContext(nous.WithLogName("s"))
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	require.NoError(t, c.Save(ctx, store))

	var observed []nous.EventType
	called := map[string]int{}
	stop := errors.New("stop")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := []nous.Option{
		nous.WithObserver(func(e nous.Event) { observed = append(observed, e.Type) }),
		nous.WithCallbacks(map[string]nous.Callback{"on_x": func(string, any) { called["callback"]++ }}),
		nous.WithNotify(func(string, any) { called["notify"]++ }),
		nous.WithApprovalHandler(func(tc nous.ToolCall) (nous.ToolCall, bool) { called["approval"]++; return tc, true }),
		nous.WithLogger(logger),
		nous.WithCancellationCheck(func() error { return stop }),
		nous.WithStream(true),
		nous.WithRedaction(keepSyncToken),
	}
	loads := map[string]func() (*nous.Context, error){
		"Load":       func() (*nous.Context, error) { return nous.LoadWith(ctx, store, c.Log().ID(), opts...) },
		"LoadByName": func() (*nous.Context, error) { return nous.LoadByName(ctx, store, "s", opts...) },
		"Resume": func() (*nous.Context, error) {
			r, _, err := nous.Resume(ctx, store, "s", opts...)
			return r, err
		},
	}
	for name, load := range loads {
		t.Run(name, func(t *testing.T) {
			observed, called = nil, map[string]int{}
			r, err := load()
			require.NoError(t, err)
			require.NoError(t, r.AddMessage(nous.AssistantMessage("hello")))
			assert.Equal(t, []nous.EventType{nous.EventAssistantMessage}, observed, "the observer")
			r.Callbacks["on_x"]("on_x", nil)
			r.Notify("x", nil)
			r.ApprovalHandler(nous.ToolCall{})
			assert.Equal(t, map[string]int{"callback": 1, "notify": 1, "approval": 1}, called)
			assert.Same(t, logger, r.Logger)
			assert.ErrorIs(t, r.Canceled(), stop)
			assert.True(t, r.Stream)
			require.NotNil(t, r.Redact)
			assert.False(t, r.Redact("sync_token"), "the rule")
		})
	}
}

// A context that was never saved (Resume just made it) has nothing to
// pull: its Refresh is nil, and it stays as it is. One whose log was
// deleted after it saved it still learns so.
func TestRefreshOfANeverSavedContext(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewMemory()
	c, resumed, err := nous.Resume(ctx, store, "new")
	require.NoError(t, err)
	require.False(t, resumed)
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	require.NoError(t, c.Refresh(ctx, store))
	assert.Equal(t, 1, c.Len())
	require.NoError(t, c.Save(ctx, store), "it saves as a new session after")

	require.NoError(t, store.Delete(ctx, c.Log().ID()))
	assert.ErrorIs(t, c.Refresh(ctx, store), nous.ErrNotFound)
}
