package nousadk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nous-go/nous"
)

// attempts bounds the saves of one update of a shared scope that lose to
// other sessions' updates of it.
const attempts = 16

// appScope and userScope name the logs of the app's and the user's state.
func appScope(app string) string { return fmt.Sprintf("adk app %d:%s", len(app), app) }

func userScope(app, user string) string {
	return fmt.Sprintf("adk user %d:%s %s", len(app), app, user)
}

// scope is a shared state, the deps of a log of its own that holds no
// ADK event (only the deps' changes and the batch event of each save): the
// app's, or a user's. mu guards c, nil until it is read.
type scope struct {
	name string
	mu   sync.Mutex
	c    *nous.Context
	// held is the deps of the context the scope held before [scope.drop]:
	// the secrets the context read next is given. A scope is its name's,
	// whatever log holds it (two services may make its first at once).
	held map[string]any
}

// drop forgets the scope's context, which holds what the store may not,
// so that the next use reads it, and keeps its deps, whose secrets that
// read is given.
func (sc *scope) drop() {
	if sc.c != nil {
		sc.held = sc.c.Deps
	}
	sc.c = nil
}

// scope returns the service's scope of that name, made if it has none.
func (s *SessionService) scope(name string) *scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.scopes[name]
	if !ok {
		if len(s.scopes) >= max(s.opts.cacheLimit, 0)+64 {
			clear(s.scopes) // each reads its log again when next used
		}
		sc = &scope{name: name}
		s.scopes[name] = sc
	}
	return sc
}

// state returns a copy of the scope's state as the store holds it, by
// [jsonState].
func (sc *scope) state(ctx context.Context, s *SessionService) (map[string]any, error) {
	return sc.update(ctx, s, nil)
}

// update sets the keys of delta in the scope's state, in one save, and
// returns a copy of the state (by [jsonState]); an empty delta saves
// nothing. A save that another session's update beat is made again on
// the state it stored; a delta the state held has already is applied to
// the state read again, which another session may have changed.
func (sc *scope) update(ctx context.Context, s *SessionService, delta map[string]any) (map[string]any, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for range attempts {
		// A write to a scope held needs no read first: its save fails
		// if another session's update came between, and is made again.
		read := sc.c == nil || len(delta) == 0
		if read {
			if err := sc.read(ctx, s); err != nil {
				return nil, err
			}
		}
		if len(delta) == 0 {
			return jsonState(sc.c.Deps), nil
		}
		before, err := sc.c.Serialize()
		sc.c.MergeDeps(delta)
		if after, aerr := sc.c.Serialize(); !read && err == nil && aerr == nil && bytes.Equal(before, after) {
			// The state held has the delta already, so the save would
			// send nothing; but another session may have changed the
			// scope since it was read. Apply the delta to what the store
			// holds.
			if err := sc.read(ctx, s); err != nil {
				return nil, err
			}
			sc.c.MergeDeps(delta)
		}
		err = sc.c.Save(ctx, s.store)
		if err == nil {
			return jsonState(sc.c.Deps), nil
		}
		sc.drop()
		if !errors.Is(err, nous.ErrConflict) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%d saves of %s lost to other updates of it: %w", attempts, sc.name, nous.ErrConflict)
}

// read brings the scope's context up to date, or reads it, or makes it
// when the store holds no such scope yet. A scope read is given the
// secrets of the context it held of its log before ([carrySecrets]).
func (sc *scope) read(ctx context.Context, s *SessionService) error {
	if sc.c != nil {
		if err := sc.c.Refresh(ctx, s.store); err == nil {
			return nil
		}
		sc.drop()
	}
	c, err := nous.LoadByName(ctx, s.store, sc.name, nous.WithRedaction(s.opts.redact), nous.WithLogger(s.opts.logger))
	if errors.Is(err, nous.ErrNotFound) {
		c, err = nous.NewContext(nous.WithLogName(sc.name), nous.WithLogLabels(map[string]string{labelKind: kindScope})), nil
	}
	if err != nil {
		return err
	}
	c.Redact, c.Logger = s.opts.redact, s.opts.logger
	if sc.held != nil {
		carrySecrets(c.Deps, sc.held, s.opts.redact)
	}
	sc.c, sc.held = c, nil
	return nil
}
