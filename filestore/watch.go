package filestore

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// PollInterval is how often [Store.Watch] looks at a log's file for the
// saves of other processes; saves through the same Store wake it at once.
const PollInterval = 50 * time.Millisecond

// notify wakes the watchers of log id. s.mu is held.
func (s *Store) notify(id uuid.UUID) {
	if ch, ok := s.changed[id]; ok {
		close(ch)
		delete(s.changed, id)
	}
}

// Watch implements [nous.Watcher]: saves through s wake it at once, those
// of other processes within [PollInterval]. A log that is deleted, or
// deleted and saved again, ends it with an error wrapping
// [nous.ErrNotFound].
func (s *Store) Watch(ctx context.Context, id uuid.UUID, after int64) iter.Seq2[nous.Event, error] {
	return func(yield func(nous.Event, error) bool) {
		s.mu.Lock()
		s.watchers[id]++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.watchers[id]--; s.watchers[id] == 0 {
				delete(s.watchers, id)
				delete(s.changed, id) // no one waits on it
			}
			s.mu.Unlock()
		}()
		var poll <-chan time.Time
		if shared {
			t := time.NewTicker(PollInterval)
			defer t.Stop()
			poll = t.C
		}
		var incarnation uuid.UUID // of the log watched: another under its ID ends the watch
		for {
			s.mu.Lock()
			ch, ok := s.changed[id]
			if !ok && !s.closed {
				ch = make(chan struct{})
				s.changed[id] = ch
			}
			s.mu.Unlock()
			st, err := s.Read(ctx, id, after)
			if err == nil && incarnation != uuid.Nil && st.Info.Incarnation != incarnation {
				err = fmt.Errorf("filestore: log %s was deleted and saved again: %w", id, nous.ErrNotFound)
			}
			if err != nil {
				yield(nous.Event{}, err)
				return
			}
			incarnation = st.Info.Incarnation
			for _, b := range st.Events {
				var e nous.Event
				if err := json.Unmarshal(b, &e); err != nil {
					yield(nous.Event{}, fmt.Errorf("filestore: log %s: event %d: %v: %w", id, after+1, err, nous.ErrCorrupt))
					return
				}
				after = e.Seq
				if !yield(e, nil) {
					return
				}
			}
			select {
			case <-ch:
			case <-poll:
			case <-ctx.Done():
				yield(nous.Event{}, ctx.Err())
				return
			}
		}
	}
}
