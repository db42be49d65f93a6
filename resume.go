package nous

import (
	"context"
	"errors"
	"fmt"
)

// Resume returns the session s keeps under name, and whether s held it:
// [LoadByName], or, when s holds no log of that name, a new context from
// NewContext(WithLogName(name), opts...), which its first Save stores. It
// is the one call that starts a process's work on a session:
//
//	c, _, err := nous.Resume(ctx, store, "user 42/chat 7",
//		nous.WithSystemPrompt("You are a weather assistant."),
//		nous.WithDeps(map[string]any{"api_key": key}))
//
// A loaded session is the one stored: its system prompt, usage,
// iteration, view, labels and deps are what was saved, whatever opts say
// of them. Of opts it takes what the process supplies and no store keeps,
// as [LoadWith] takes them:
//   - the runtime fields: [WithStream], [WithCancellationCheck],
//     [WithCallbacks], [WithNotify], [WithObserver],
//     [WithApprovalHandler], [WithLogger] and [WithRedaction], set before
//     the loaded state is recorded, so that a session that changed nothing
//     has nothing to save under the caller's rule;
//   - the deps of [WithDeps], merged over the stored ones as
//     [Context.MergeDeps] merges: the secrets a save never writes and the
//     handles (a client, a database) come back this way. Give WithDeps
//     what the process supplies, not the state tools change, which a
//     loaded session has as it was saved and WithDeps would overwrite.
//
// A session loaded again, after a conflict say, keeps its observers and
// callbacks when the same opts are given again: keep them in one slice.
//
// The overlay is runtime state too: set it again with
// [Context.SetSystemPromptOverlay]. A session saved between a model's
// tool calls and their results ends waiting for them; run them
// ([Context.RunToolCalls]) or answer them ([Context.PatchDanglingToolCalls])
// before the next request.
//
// A name [CheckName] refuses is an error wrapping [ErrInvalidName], before
// s is asked; any error of s but [ErrNotFound] is returned wrapped, with no
// context. Two processes that start one new session at once each get a
// new context; the second to save gets [ErrConflict], and resumes then.
func Resume(ctx context.Context, s Store, name string, opts ...Option) (*Context, bool, error) {
	if err := CheckName(name, nil); err != nil {
		return nil, false, fmt.Errorf("nous: resume %q: %w", name, err)
	}
	if name == "" {
		return nil, false, fmt.Errorf("nous: resume: %w: a session is resumed by its name, and the name is empty", ErrInvalidName)
	}
	c, err := LoadByName(ctx, s, name, opts...)
	switch {
	case errors.Is(err, ErrNotFound):
		return NewContext(append(append([]Option(nil), opts...), WithLogName(name))...), false, nil
	case err != nil:
		return nil, false, err
	}
	return c, true, nil
}

// LoadByName loads the log s holds under name ([WithLogName]): [LoadWith] of
// the ID [Store.Lookup] finds, with opts. None is an error wrapping
// [ErrNotFound]; a new session then starts with NewContext(WithLogName(name),
// ...), whose first Save fails with [ErrConflict] if another process
// created the name meanwhile (load it then).
func LoadByName(ctx context.Context, s Store, name string, opts ...Option) (*Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nous: load log named %q: %w", name, err)
	}
	info, err := s.Lookup(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("nous: load log named %q: %w", name, err)
	}
	return LoadWith(ctx, s, info.ID, opts...)
}
