package filestore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Read implements [nous.Store].
func (s *Store) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	if err := ctx.Err(); err != nil {
		return nous.Stored{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range 3 { // another file under its name as it reads: again
		e, err := s.settled(ctx, id)
		if err != nil {
			return nous.Stored{}, err
		}
		if e == nil {
			return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
		}
		st := nous.Stored{Info: infoOf(e), State: e.file.stateWithCalls()}
		if after >= e.file.info.Head {
			return st, nil
		}
		// The first stored seq of a fork's file is 1, like any log's.
		f, err := os.Open(s.path(id))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, err)
		}
		fi, err := f.Stat()
		if err == nil && !os.SameFile(fi, e.stat) {
			f.Close()
			continue
		}
		st.Events, err = e.file.eventsAfter(f, max(after, 0))
		f.Close()
		if err != nil {
			return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, err)
		}
		return st, nil
	}
	return nous.Stored{}, fmt.Errorf("filestore: log %s: the file changed under every read: %w", id, errReplaced)
}

// infoOf returns the info of the log of entry e, its labels a copy.
func infoOf(e *entry) nous.LogInfo {
	info := e.file.info
	info.Labels = maps.Clone(info.Labels)
	return info
}
