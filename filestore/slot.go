package filestore

import (
	"context"

	"github.com/google/uuid"
)

// slot is the turn of the writers of one log in a store: one at a time,
// from before it takes the file's lock until it is done, so that none
// polls for another's flock, and, where the store has no flock (Windows,
// where a directory is one process's), so that one writes at a time.
type slot struct {
	turn  chan struct{} // holds a value while a writer has the turn
	users int           // the writers holding or waiting for it
}

// acquire waits for the turn of log id's writers in s, or for ctx; it
// returns the function that gives the turn up. s.mu is not held.
func (s *Store) acquire(ctx context.Context, id uuid.UUID) (func(), error) {
	s.mu.Lock()
	sl := s.slots[id]
	if sl == nil {
		sl = &slot{turn: make(chan struct{}, 1)}
		s.slots[id] = sl
	}
	sl.users++
	s.mu.Unlock()
	done := func() {
		s.mu.Lock()
		if sl.users--; sl.users == 0 {
			delete(s.slots, id)
		}
		s.mu.Unlock()
	}
	select {
	case sl.turn <- struct{}{}:
		return func() { <-sl.turn; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}
