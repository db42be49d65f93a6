package filestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"
)

// The default bounds of the logs a store keeps read (see WithCacheLimit).
// A log whose last write failed is kept past them: it must not be used
// until Open again.
const (
	maxCached      = 256
	maxCachedBytes = 32 << 20
)

// current returns the entry of log id as its file is now, reading the file
// the first time, what was appended since the last time, or all of it when
// another file took its name (deleted and saved again); nil when the store
// does not hold the log. It costs a stat when nothing changed. s.mu is
// held.
func (s *Store) current(id uuid.UUID) (*entry, error) {
	if s.closed {
		return nil, errors.New("filestore: the store is closed")
	}
	e, ok := s.logs[id]
	if ok && e.poisoned != nil {
		return nil, fmt.Errorf("filestore: log %s: an earlier write failed (%v); open the store again", id, e.poisoned)
	}
	fi, err := os.Stat(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		s.drop(id)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	return s.currentAs(id, fi)
}

// currentAs is current, fi being the file under the log's name now.
func (s *Store) currentAs(id uuid.UUID, fi os.FileInfo) (*entry, error) {
	e, ok := s.logs[id]
	if ok && os.SameFile(fi, e.stat) {
		if fi.Size() != e.seen && !e.writing { // a frame this store is writing is not read before it is fsynced
			if err := s.extend(id, e); err != nil {
				s.drop(id)
				return nil, err
			}
		}
		s.used(id)
		return e, nil
	}
	s.drop(id)
	return s.read(id)
}

// drop forgets what s read of log id. s.mu is held.
func (s *Store) drop(id uuid.UUID) {
	if e, ok := s.logs[id]; ok {
		e.release()
		s.forget(id, e)
		delete(s.logs, id)
	}
}

// poison marks log id, entry e, unusable until the store is opened again,
// for err, a write to its file that failed or that it cannot account
// for: the file's end is unknown. It closes the file appended to and takes
// the log out of the cache's count. s.mu is held.
func (s *Store) poison(id uuid.UUID, e *entry, err error) {
	e.poisoned = err
	e.close()
	s.forget(id, e)
}

// used marks log id, in s.logs, the most recently used, counts what it
// holds, and forgets the least recently used logs past the cache's bounds
// (but id, and logs being written). A log whose write failed is not
// counted: it stays apart, until Open again. s.mu is held.
func (s *Store) used(id uuid.UUID) {
	e := s.logs[id]
	if e == nil || e.poisoned != nil {
		s.forget(id, e)
		return
	}
	bytes := int64(len(e.file.state)) + sumBytes(e.file.calls) + int64(len(e.file.frames))*16 + int64(len(e.file.keys))*keyBytes
	s.cached += bytes - e.bytes
	e.bytes = bytes
	if el, ok := s.elems[id]; ok {
		s.recent.MoveToBack(el)
	} else {
		s.elems[id] = s.recent.PushBack(id)
	}
	// The least recently used go first, but id, and a log a save writes:
	// it stays until the save is done, so that a failed write poisons the
	// entry readers use.
	for el := s.recent.Front(); el != nil && (s.recent.Len() > s.opts.cacheLogs || s.cached > s.opts.cacheBytes); {
		old, next := el.Value.(uuid.UUID), el.Next()
		if e := s.logs[old]; old != id && !e.writing {
			s.forget(old, e)
			e.release()
			delete(s.logs, old)
		}
		el = next
	}
}

// keyBytes is about what a batch key a file of version 4 holds takes in
// memory, in its slice and its map, for a random key.
const keyBytes = 120

// forget takes log id, whose entry is e (or nil), out of the cache's count.
// s.mu is held.
func (s *Store) forget(id uuid.UUID, e *entry) {
	if el, ok := s.elems[id]; ok {
		s.recent.Remove(el)
		delete(s.elems, id)
		if e != nil {
			s.cached -= e.bytes
			e.bytes = 0
		}
	}
}

// sumBytes returns the bytes of calls: those a file of version 1 keeps
// apart, which only its first frame after an update to version 2 drops.
func sumBytes(calls []json.RawMessage) int64 {
	var n int64
	for _, c := range calls {
		n += int64(len(c))
	}
	return n
}
