package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// lockLog takes the lock of log id for a write: an flock of its file,
// waiting while another process writes it, without s.mu. It returns the
// file locked, the one under the log's name (a file replaced as it waited
// is let go, and the new one locked), with its info; an error wrapping
// nous.ErrNotFound when there is none.
func (s *Store) lockLog(ctx context.Context, id uuid.UUID) (*os.File, os.FileInfo, error) {
	name := s.path(id)
	for {
		lf, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("filestore: log %s: %w", id, err)
		}
		if err := lockFile(ctx, lf); err != nil {
			lf.Close()
			return nil, nil, fmt.Errorf("filestore: log %s: %w", id, err)
		}
		locked, err := lf.Stat()
		if err != nil {
			lf.Close()
			return nil, nil, fmt.Errorf("filestore: log %s: %w", id, err)
		}
		if fi, err := os.Stat(name); err == nil && os.SameFile(fi, locked) {
			return lf, fi, nil
		}
		lf.Close() // deleted, or another file under its name, as it waited: again
	}
}

// locked returns the entry of log id, whose file, of info fi, is locked:
// brought up to date with it, its torn last frame (a writer's that died)
// cut, and nil with an error wrapping nous.ErrNotFound when the log went.
// s.mu is held.
func (s *Store) locked(id uuid.UUID, fi os.FileInfo) (*entry, error) {
	if s.closed {
		return nil, errors.New("filestore: the store is closed")
	}
	if e := s.logs[id]; e != nil && e.poisoned != nil {
		return nil, fmt.Errorf("filestore: log %s: an earlier write failed (%v); open the store again", id, e.poisoned)
	}
	e, err := s.currentAs(id, fi) // no one replaces a file locked
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	}
	if e.f != nil && !os.SameFile(e.fstat, fi) {
		e.close()
	}
	if e.file.torn {
		if err := s.cut(id, e.file.good); err != nil {
			return nil, err
		}
		e.file.torn, e.seen = false, e.file.good
	}
	return e, nil
}

// cut truncates the file of log id to n bytes, cutting a torn last frame.
// The log's lock is held.
func (s *Store) cut(id uuid.UUID, n int64) error {
	f, err := os.OpenFile(s.path(id), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("filestore: log %s: cut a torn frame: %w", id, err)
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		return fmt.Errorf("filestore: log %s: cut a torn frame: %w", id, err)
	}
	if !s.opts.noSync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("filestore: log %s: cut a torn frame: %w", id, err)
		}
	}
	return nil
}
