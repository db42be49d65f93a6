package filestore

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrTooLarge reports a batch larger than a frame of a log file holds (4
// GiB): nothing of it is written; save more often.
var ErrTooLarge = errors.New("filestore: batch too large for one frame")

// ErrLocked reports a directory another process holds whole: on Windows,
// and on systems without flock, any process that has it open; elsewhere, a
// process of an earlier version of this package, which kept a directory to
// one process.
var ErrLocked = errors.New("filestore: directory is locked by another process")

// Option configures [Open].
type Option func(*options)

type options struct {
	noSync     bool
	cacheLogs  int
	cacheBytes int64
}

// WithCacheLimit bounds the logs a store keeps read in memory (each one's
// state, tool calls and frame index) to logs logs and about bytes bytes;
// past either, the least recently used is read again from its file when
// next used (which costs a read of the whole file). The default is 256
// logs and 32 MiB; the log in use is always kept. A value below 1 keeps
// the default. Where processes share a directory, each log kept holds its
// file open (so that a file replaced under its name is always told from
// it), besides the 64 files at most a store keeps open to append to.
func WithCacheLimit(logs int, bytes int64) Option {
	return func(o *options) { o.cacheLogs, o.cacheBytes = logs, bytes }
}

// WithoutSync skips fsync: a save returns once the bytes are written, and a
// power loss may lose it. For tests and throwaway data only.
func WithoutSync() Option { return func(o *options) { o.noSync = true } }

// Store is the file store. Its methods are safe for concurrent use.
type Store struct {
	dir    string
	opts   options
	unlock func() error

	fs fileSystem // what it writes through: osFS but in tests

	mu       sync.Mutex
	logs     map[uuid.UUID]*entry
	closed   bool
	changed  map[uuid.UUID]chan struct{} // closed and replaced when a log changes, for Watch
	watchers map[uuid.UUID]int           // how many Watch a log has: its channel goes with the last
	open     []uuid.UUID                 // the logs whose files are open, oldest first
	recent   *list.List                  // the healthy logs in s.logs, least recently used first
	elems    map[uuid.UUID]*list.Element // each log's element of recent
	cached   int64                       // about what the logs in recent hold in memory
	slots    map[uuid.UUID]*slot         // the logs a save or a delete of this store is at
}

// Open opens the store in dir, creating dir when it does not exist. Any
// number of processes may open one directory at once, but on Windows and
// on systems without flock (where a second process's Open fails with an
// error wrapping [ErrLocked] until the first closes it; on Plan 9, Solaris
// or WebAssembly, which have no lock at all, open a directory from one
// process only).
func Open(dir string, opts ...Option) (*Store, error) {
	s := &Store{dir: dir, fs: osFS{}, logs: map[uuid.UUID]*entry{}, changed: map[uuid.UUID]chan struct{}{}, watchers: map[uuid.UUID]int{},
		recent: list.New(), elems: map[uuid.UUID]*list.Element{}, slots: map[uuid.UUID]*slot{}}
	for _, o := range opts {
		if o != nil {
			o(&s.opts)
		}
	}
	if s.opts.cacheLogs < 1 {
		s.opts.cacheLogs = maxCached
	}
	if s.opts.cacheBytes < 1 {
		s.opts.cacheBytes = maxCachedBytes
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(filepath.Join(dir, namesDir), 0o755); err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	if errors.Is(statErr, os.ErrNotExist) && !s.opts.noSync {
		// A directory just made: its name must survive a crash too.
		if err := syncDirectory(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
		}
	}
	unlock, err := lockDir(filepath.Join(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	s.unlock = unlock
	// A crash while a file was being made leaves its temporary file: the
	// file never appeared, so it goes, once it is old enough that no
	// process can still be writing it.
	for _, pattern := range []string{filepath.Join(dir, "*.tmp"), filepath.Join(dir, namesDir, "*.tmp")} {
		tmps, _ := filepath.Glob(pattern)
		for _, tmp := range tmps {
			if fi, err := os.Stat(tmp); err == nil && time.Since(fi.ModTime()) > staleTmp {
				os.Remove(tmp)
			}
		}
	}
	return s, nil
}

// staleTmp is the age past which Open removes a temporary file: no write
// of one takes that long.
const staleTmp = 10 * time.Minute

// Close releases the directory. The store must not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for id, ch := range s.changed { // gone, so that a save finishing after Close notifies no one twice
		close(ch)
		delete(s.changed, id)
	}
	for _, e := range s.logs {
		e.release()
	}
	return s.unlock()
}

// suffix ends the name of a log's file, which is its ID and suffix.
const suffix = ".log"

// path returns the name of the file of log id.
func (s *Store) path(id uuid.UUID) string { return filepath.Join(s.dir, id.String()+suffix) }
