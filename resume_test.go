package nous_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// A session is started by name, saved, and resumed by the same call: the
// stored state wins over the options, the secrets and runtime fields come
// back from them.
func TestResume(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewMemory()
	client := &struct{ n int }{7}
	notified := 0
	opts := func(prompt string) []nous.Option {
		return []nous.Option{
			nous.WithSystemPrompt(prompt),
			nous.WithDeps(map[string]any{"api_key": "sk-1", "client": client}),
			nous.WithNotify(func(string, any) { notified++ }),
			nous.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			nous.WithStream(true),
			nous.WithMaxIterations(3),
		}
	}

	c, resumed, err := nous.Resume(ctx, store, "user 42/chat 7", opts("first prompt")...)
	require.NoError(t, err)
	assert.False(t, resumed)
	assert.Equal(t, "user 42/chat 7", c.Log().Name())
	assert.Equal(t, "first prompt", c.SystemPrompt)
	assert.Equal(t, 3, c.MaxIterations)
	assert.True(t, c.Stream)
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	c.Deps["city"] = "Rome"
	c.SetSystemPromptOverlay("be brief")
	require.NoError(t, c.Save(ctx, store))

	st0, err := nous.Load(ctx, store, c.Log().ID())
	require.NoError(t, err)
	again, resumed, err := nous.Resume(ctx, store, "user 42/chat 7", opts("second prompt")...)
	require.NoError(t, err)
	assert.True(t, resumed)
	assert.Equal(t, c.Log().ID(), again.Log().ID())
	assert.Equal(t, "first prompt", again.SystemPrompt, "the stored prompt wins")
	assert.Equal(t, "Rome", again.Deps["city"], "a stored dep keeps its value")
	assert.Equal(t, map[string]any{}, st0.Deps["client"], "the store holds what JSON makes of the client")
	assert.Equal(t, "sk-1", again.Deps["api_key"], "a secret comes back from the options")
	assert.Same(t, client, again.Deps["client"], "the handle replaces what the store made of it")
	assert.Equal(t, 3, again.MaxIterations)
	assert.True(t, again.Stream)
	assert.NotNil(t, again.Logger)
	require.NotNil(t, again.Notify)
	again.Notify("x", nil)
	assert.Equal(t, 1, notified)
	assert.Empty(t, again.SystemPromptOverlay(), "the overlay is runtime state")
	c.SetSystemPromptOverlay("")
	assert.Equal(t, c.Messages(), again.Messages())

	// Putting the secrets back is no change: nothing to save.
	before := again.Log().Len()
	require.NoError(t, again.Save(ctx, store))
	st, err := store.Read(ctx, again.Log().ID(), 0)
	require.NoError(t, err)
	assert.Equal(t, int64(before), st.Info.Head)
	assert.NotContains(t, string(st.State), "sk-1")
}

// The deps Resume merges are copies: the caller's map and the context's do
// not share their lists.
func TestResumeCopiesDeps(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewMemory()
	c, _, err := nous.Resume(ctx, store, "s")
	require.NoError(t, err)
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	require.NoError(t, c.Save(ctx, store))

	scopes := []any{"read"}
	again, _, err := nous.Resume(ctx, store, "s", nous.WithDeps(map[string]any{"auth_token_scopes": scopes}))
	require.NoError(t, err)
	scopes[0] = "write"
	assert.Equal(t, []any{"read"}, again.Deps["auth_token_scopes"])
}

// A name no store keeps is refused before the store is asked; a store's
// failure is returned as it is, with no context.
func TestResumeErrors(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"", "a\x00b", string([]byte{0xff})} {
		store := &lookups{Store: storetest.NewMemory()}
		c, _, err := nous.Resume(ctx, store, name)
		assert.ErrorIs(t, err, nous.ErrInvalidName, "%q", name)
		assert.Nil(t, c)
		assert.Zero(t, store.n, "%q: the store was asked", name)
	}

	down := errors.New("connection refused")
	c, resumed, err := nous.Resume(ctx, &lookups{Store: storetest.NewMemory(), err: down}, "s")
	assert.ErrorIs(t, err, down)
	assert.False(t, resumed)
	assert.Nil(t, c)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	c, _, err = nous.Resume(canceled, storetest.NewMemory(), "s")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, c)
}

// Two processes that start one new session at once: the second to save
// conflicts, resumes, and finds the first's turn.
func TestResumeRace(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewMemory()
	a, _, err := nous.Resume(ctx, store, "s")
	require.NoError(t, err)
	b, _, err := nous.Resume(ctx, store, "s")
	require.NoError(t, err)
	require.NoError(t, a.AddMessage(nous.UserMessage("from a")))
	require.NoError(t, b.AddMessage(nous.UserMessage("from b")))
	require.NoError(t, a.Save(ctx, store))
	require.ErrorIs(t, b.Save(ctx, store), nous.ErrConflict)

	b, resumed, err := nous.Resume(ctx, store, "s")
	require.NoError(t, err)
	assert.True(t, resumed)
	assert.Equal(t, a.Messages(), b.Messages())
}

// lookups is a store that counts its lookups and fails them with err.
type lookups struct {
	nous.Store
	n   int
	err error
}

func (s *lookups) Lookup(ctx context.Context, name string) (nous.LogInfo, error) {
	s.n++
	if s.err != nil {
		return nous.LogInfo{}, s.err
	}
	return s.Store.Lookup(ctx, name)
}

func ExampleResume() {
	ctx := context.Background()
	store := storetest.NewMemory()
	for run := range 2 { // two processes, one after the other
		c, resumed, err := nous.Resume(ctx, store, "user 42/chat 7",
			nous.WithSystemPrompt("You are a weather assistant."),
			nous.WithDeps(map[string]any{"api_key": "sk-test"}))
		if err != nil {
			fmt.Println(err)
			return
		}
		c.AddMessage(nous.UserMessage(fmt.Sprint("question ", run+1)))
		if err := c.Save(ctx, store); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resumed, c.Len(), c.Deps["api_key"])
	}
	// Output:
	// false 1 sk-test
	// true 2 sk-test
}
