// Package filestore is the embedded [nous.Store]: a directory with one file
// per log, appended one frame per save, each frame with a length and a
// checksum, and fsynced before a save returns.
//
// Only one process opens a directory at a time ([ErrLocked] for another).
// A crash in the middle of a save leaves a torn last frame, which the next
// Open cuts off: the log holds every save that returned nil. Damage anywhere
// else is an error wrapping [nous.ErrCorrupt]. FORMAT.md specifies the
// files.
package filestore

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// ErrTooLarge reports a batch larger than a frame of a log file holds (4
// GiB): nothing of it is written; save more often.
var ErrTooLarge = errors.New("filestore: batch too large for one frame")

// ErrLocked reports a directory another process holds open.
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
// the default.
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
}

// maxOpen bounds the log files a store keeps open between saves; past it,
// the oldest opened is closed.
const maxOpen = 64

// The default bounds of the logs a store keeps read (see WithCacheLimit).
// A log whose last write failed is kept past them: it must not be used
// until Open again.
const (
	maxCached      = 256
	maxCachedBytes = 32 << 20
)

// entry is a log the store has read: what its file holds, or why it cannot
// be used.
type entry struct {
	bytes    int64 // about what it holds in memory, as last counted
	file     logFile
	f        file  // the log file open for appending, after its first append
	poisoned error // a write or fsync failed: the file's end is unknown until Open again
}

// close closes e's file, if it is open.
func (e *entry) close() {
	if e.f != nil {
		e.f.Close()
		e.f = nil
	}
}

const suffix = ".log"

// Open opens the store in dir, creating dir when it does not exist, and
// locks it: a second Open of dir, from another process, fails with an error
// wrapping [ErrLocked] until Close. (On the few systems with neither flock
// nor Windows' file sharing, such as Plan 9, Solaris or WebAssembly, there
// is no lock: open a directory from one process only.)
func Open(dir string, opts ...Option) (*Store, error) {
	s := &Store{dir: dir, fs: osFS{}, logs: map[uuid.UUID]*entry{}, changed: map[uuid.UUID]chan struct{}{}, watchers: map[uuid.UUID]int{},
		recent: list.New(), elems: map[uuid.UUID]*list.Element{}}
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	if errors.Is(statErr, os.ErrNotExist) && !s.opts.noSync {
		// A directory just made: its name must survive a crash too.
		if err := syncDirectory(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
		}
	}
	unlock, err := lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	s.unlock = unlock
	// A crash while a log was being created leaves its temporary file: the
	// log never appeared, so the file goes.
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+suffix+".tmp"))
	for _, tmp := range tmps {
		os.Remove(tmp)
	}
	return s, nil
}

// Close releases the directory. The store must not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, ch := range s.changed {
		close(ch)
	}
	for _, e := range s.logs {
		e.close()
	}
	return s.unlock()
}

func (s *Store) path(id uuid.UUID) string { return filepath.Join(s.dir, id.String()+suffix) }

// load returns the entry of log id, reading its file the first time, and
// nil when the store does not hold the log. s.mu is held.
func (s *Store) load(id uuid.UUID) (*entry, error) {
	if s.closed {
		return nil, errors.New("filestore: the store is closed")
	}
	if e, ok := s.logs[id]; ok {
		if e.poisoned != nil {
			return nil, fmt.Errorf("filestore: log %s: an earlier write failed (%v); open the store again", id, e.poisoned)
		}
		s.used(id)
		return e, nil
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	lf, err := parseLog(b)
	if err != nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if lf.info.ID != id {
		return nil, fmt.Errorf("filestore: log %s: the file holds log %s: %w", id, lf.info.ID, nous.ErrCorrupt)
	}
	if lf.torn {
		if err := s.cut(id, lf.good); err != nil {
			return nil, err
		}
	}
	// The state and the calls a file of version 1 keeps apart are slices
	// of b: copied, so that the file's content, events included, is not
	// kept in memory.
	lf.state, lf.calls = bytes.Clone(lf.state), cloneEvents(lf.calls)
	e := &entry{file: lf}
	s.logs[id] = e
	s.used(id)
	return e, nil
}

// used marks log id, in s.logs, the most recently used, counts what it
// holds, and forgets the least recently used logs past the cache's bounds
// (but id). A log whose write failed is not counted: it stays apart, until
// Open again. s.mu is held.
func (s *Store) used(id uuid.UUID) {
	e := s.logs[id]
	if e == nil || e.poisoned != nil {
		s.forget(id, e)
		return
	}
	bytes := int64(len(e.file.state)) + sumBytes(e.file.calls) + int64(len(e.file.frames))*16
	s.cached += bytes - e.bytes
	e.bytes = bytes
	if el, ok := s.elems[id]; ok {
		s.recent.MoveToBack(el)
	} else {
		s.elems[id] = s.recent.PushBack(id)
	}
	for s.recent.Len() > 1 && (s.recent.Len() > s.opts.cacheLogs || s.cached > s.opts.cacheBytes) {
		old := s.recent.Front().Value.(uuid.UUID)
		e := s.logs[old]
		s.forget(old, e)
		e.close()
		delete(s.logs, old)
	}
}

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

// cut truncates the file of log id to n bytes, cutting a torn last frame.
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

// Append implements [nous.Store]: one frame, written and fsynced before it
// returns.
func (s *Store) Append(ctx context.Context, b nous.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := b.Info.ID
	if id == uuid.Nil || b.Info.Incarnation == uuid.Nil {
		return errors.New("filestore: a batch of the nil log ID or incarnation")
	}
	if b.Info.Head != b.After+int64(len(b.Events)) {
		return fmt.Errorf("filestore: log %s: head %d after %d with %d events", id, b.Info.Head, b.After, len(b.Events))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.load(id)
	if err != nil {
		return err
	}
	switch {
	case b.Info.Revision <= 1 && e != nil:
		return fmt.Errorf("filestore: log %s exists, with head %d: %w", id, e.file.info.Head, nous.ErrConflict)
	case b.Info.Revision > 1 && e == nil:
		return fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	case e == nil && (b.After != 0 || b.Info.Revision != 1):
		return fmt.Errorf("filestore: log %s: a first batch after seq %d at revision %d", id, b.After, b.Info.Revision)
	case e != nil && (e.file.info.Head != b.After || e.file.info.Revision != b.Info.Revision-1 || e.file.info.Incarnation != b.Info.Incarnation):
		i := &e.file.info
		return fmt.Errorf("filestore: log %s: expected head %d revision %d incarnation %s, stored head %d revision %d incarnation %s: %w",
			id, b.After, b.Info.Revision-1, b.Info.Incarnation, i.Head, i.Revision, i.Incarnation, nous.ErrConflict)
	}
	f := frame{info: b.Info, after: b.After, state: b.State, events: b.Events}
	if err := checkFrame(&f); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	version := byte(2)
	if e != nil {
		version = e.file.version
	}
	buf := appendFrame([]byte(magic), &f, version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return err
	}
	if e == nil {
		if err := s.create(id, buf); err != nil {
			if errors.As(err, new(errRenamed)) {
				s.logs[id] = &entry{poisoned: err}
				s.forget(id, nil)
			}
			return err
		}
		e = &entry{file: logFile{version: 2, good: int64(len(magic))}}
		s.logs[id] = e
	} else if err := s.write(id, e, buf[len(magic):]); err != nil {
		e.poisoned = err
		e.close()
		s.forget(id, e)
		return err
	}
	stored := frame{info: b.Info, after: b.After, state: bytes.Clone(b.State), events: b.Events}
	if err := e.file.add(&stored, e.file.good); err != nil {
		e.poisoned = err // written, and yet not a frame of this log: the file needs a reopen
		e.close()
		s.forget(id, e)
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	e.file.good += int64(len(buf) - len(magic))
	s.used(id)
	s.notify(id)
	return nil
}

// cloneEvents copies events into one block of memory.
func cloneEvents(events []json.RawMessage) []json.RawMessage {
	n := 0
	for _, e := range events {
		n += len(e)
	}
	block := make([]byte, 0, n)
	out := make([]json.RawMessage, len(events))
	for i, e := range events {
		block = append(block, e...)
		out[i] = block[len(block)-len(e) : len(block) : len(block)]
	}
	return out
}

// create writes a new log file: to a temporary file, fsynced, renamed into
// place, and the directory fsynced, so that the log appears whole or not at
// all.
func (s *Store) create(id uuid.UUID, content []byte) error {
	tmp := s.path(id) + ".tmp"
	if err := s.writeFile(tmp, content); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if err := s.fs.rename(tmp, s.path(id)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if err := s.syncDir(); err != nil {
		// The file is in place, but its name may not survive a crash:
		// the caller poisons the log until the store is opened again.
		return errRenamed{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	return nil
}

// errRenamed is a failed create whose file is in place: the log is
// poisoned, not absent.
type errRenamed struct{ error }

func (e errRenamed) Unwrap() error { return e.error }

func (s *Store) writeFile(name string, content []byte) error {
	f, err := s.fs.create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if !s.opts.noSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// write appends a frame to the file of log id, which stays open for the
// next save, and fsyncs it. On error the caller poisons the log.
func (s *Store) write(id uuid.UUID, e *entry, frame []byte) error {
	if e.f == nil {
		f, err := s.fs.openAppend(s.path(id))
		if err != nil {
			return fmt.Errorf("filestore: log %s: %w", id, err)
		}
		e.f = f
		s.open = slices.DeleteFunc(s.open, func(o uuid.UUID) bool { return o == id || s.logs[o] == nil || s.logs[o].f == nil })
		s.open = append(s.open, id)
		if len(s.open) > maxOpen {
			if old := s.logs[s.open[0]]; old != nil {
				old.close()
			}
			s.open = s.open[1:]
		}
	}
	if _, err := e.f.Write(frame); err != nil {
		return fmt.Errorf("filestore: log %s: write: %w", id, err)
	}
	if !s.opts.noSync {
		if err := e.f.Sync(); err != nil {
			return fmt.Errorf("filestore: log %s: fsync: %w", id, err)
		}
	}
	return nil
}

func (s *Store) syncDir() error {
	if s.opts.noSync {
		return nil
	}
	return s.fs.syncDir(s.dir)
}

// syncDirectory fsyncs directory dir, so that the names made or removed
// in it survive a crash. Windows cannot fsync a directory opened for
// reading, as os.Open opens it, and NTFS journals a rename itself.
func syncDirectory(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filestore: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("filestore: fsync %s: %w", dir, err)
	}
	return nil
}

// Read implements [nous.Store].
func (s *Store) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	if err := ctx.Err(); err != nil {
		return nous.Stored{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.load(id)
	if err != nil {
		return nous.Stored{}, err
	}
	if e == nil {
		return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	}
	// The first stored seq of a fork's file is 1, like any log's.
	f, err := os.Open(s.path(id))
	if err != nil {
		return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	defer f.Close()
	events, err := e.file.eventsAfter(f, max(after, 0))
	if err != nil {
		return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	return nous.Stored{Info: e.file.info, State: e.file.stateWithCalls(), Events: events}, nil
}

// List implements [nous.Store].
func (s *Store) List(ctx context.Context, opts nous.ListOptions) iter.Seq2[nous.LogInfo, error] {
	return func(yield func(nous.LogInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nous.LogInfo{}, err)
			return
		}
		names, err := os.ReadDir(s.dir)
		if err != nil {
			yield(nous.LogInfo{}, fmt.Errorf("filestore: %w", err))
			return
		}
		var ids []uuid.UUID
		for _, n := range names {
			name, ok := strings.CutSuffix(n.Name(), suffix)
			if id, err := uuid.Parse(name); ok && err == nil && bytes.Compare(id[:], opts.After[:]) > 0 {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
		n := 0
		for _, id := range ids {
			if opts.Limit > 0 && n == opts.Limit {
				return
			}
			if err := ctx.Err(); err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			s.mu.Lock()
			e, err := s.load(id)
			info := nous.LogInfo{ID: id} // with an error: which log, so a caller can page past it
			if e != nil {
				info = e.file.info
			}
			s.mu.Unlock()
			if e == nil && err == nil {
				continue // deleted, or never whole
			}
			n++
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// Delete implements [nous.Store].
func (s *Store) Delete(ctx context.Context, id uuid.UUID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("filestore: the store is closed")
	}
	// The file goes whatever it holds: a poisoned or corrupt log may be
	// deleted too, without being read.
	if e, ok := s.logs[id]; ok {
		e.close()
		s.forget(id, e)
	}
	err := os.Remove(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		delete(s.logs, id)
		return fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	delete(s.logs, id)
	s.notify(id)
	return s.syncDir()
}

// notify wakes the watchers of log id. s.mu is held.
func (s *Store) notify(id uuid.UUID) {
	if ch, ok := s.changed[id]; ok {
		close(ch)
		delete(s.changed, id)
	}
}

// Watch implements [nous.Watcher] for the saves made through s. A log that
// is deleted, or deleted and saved again, ends it with an error wrapping
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
			case <-ctx.Done():
				yield(nous.Event{}, ctx.Err())
				return
			}
		}
	}
}
