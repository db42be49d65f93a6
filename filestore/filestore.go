// Package filestore is the embedded [nous.Store]: a directory with one file
// per log, appended one frame per save, each frame with a length and a
// checksum, and fsynced before a save returns.
//
// Any number of processes may open one directory (on Linux, macOS and the
// BSDs; on Windows, and on systems without flock, one process at a time:
// [ErrLocked] for another). A log is locked, by an flock of its file, only
// while a process writes it: processes serving different sessions never
// wait on each other, and two saving one session behave as two replicas of
// a database do: one save wins, the other gets [nous.ErrConflict]. Each
// process keeps what it read of a log and checks the file (one stat) on
// each use, so it sees the other processes' saves; [Store.Watch] sees them
// within [PollInterval].
//
// A crash in the middle of a save leaves a torn last frame, which the next
// writer of the log cuts off: the log holds every save that returned nil.
// Damage anywhere else is an error wrapping [nous.ErrCorrupt]. Names are
// kept in a subdirectory, names/, one file per name. FORMAT.md specifies
// the files.
package filestore

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// ErrTooLarge reports a batch larger than a frame of a log file holds (4
// GiB): nothing of it is written; save more often.
var ErrTooLarge = errors.New("filestore: batch too large for one frame")

// ErrLocked reports a directory another process holds whole: on Windows,
// and on systems without flock, any process that has it open; elsewhere, a
// process of an earlier version of this package, which kept a directory to
// one process.
var ErrLocked = errors.New("filestore: directory is locked by another process")

// PollInterval is how often [Store.Watch] looks at a log's file for the
// saves of other processes; saves through the same Store wake it at once.
const PollInterval = 50 * time.Millisecond

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
	bytes int64 // about what it holds in memory, as last counted
	file  logFile
	stat  os.FileInfo // the file it read (os.SameFile tells another one under its name)
	// pin is that file, open while the entry is kept where processes share
	// a directory: a file replaced (rewritten, or deleted and made again)
	// and removed keeps its inode while it is open, so another file cannot
	// take the same inode and pass for it.
	pin      *os.File
	seen     int64       // the file's size when it was last read: its whole frames, and a torn frame being written
	f        file        // the log file open for appending, after its first append
	fstat    os.FileInfo // the file f is
	poisoned error       // a write or fsync failed: the file's end is unknown until Open again
	// writing says a save writes f without s.mu: what would close f or
	// pin waits for it (closeF, closeAll), and the save closes them.
	writing, closeF, closeAll bool
}

// close closes e's file, if it is open; once its save is done, when one
// writes it.
func (e *entry) close() {
	if e.writing {
		e.closeF = true
		return
	}
	if e.f != nil {
		e.f.Close()
		e.f = nil
	}
}

// release closes e's files, the one that pins it included; once its save
// is done, when one writes it.
func (e *entry) release() {
	if e.writing {
		e.closeAll = true
		return
	}
	e.close()
	e.repin(nil)
}

// written ends the write of e's file: the files that were to be closed
// meanwhile are closed now.
func (e *entry) written() {
	e.writing = false
	if e.closeAll {
		e.release()
	} else if e.closeF {
		e.close()
	}
	e.closeF, e.closeAll = false, false
}

// repin makes f the file that pins e, closing the one before.
func (e *entry) repin(f *os.File) {
	if e.pin != nil {
		e.pin.Close()
	}
	e.pin = f
}

// pinned returns f, to pin an entry with, where processes share a
// directory; elsewhere it closes f and returns nil.
func pinned(f *os.File) *os.File {
	if !shared {
		f.Close()
		return nil
	}
	return f
}

const suffix = ".log"

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

func (s *Store) path(id uuid.UUID) string { return filepath.Join(s.dir, id.String()+suffix) }

// tmpName returns a temporary file's name for the file name: a random
// one, so that processes making the same file do not share it.
func tmpName(name string) string {
	return fmt.Sprintf("%s.%s.tmp", name, strings.ReplaceAll(uuid.NewString()[:13], "-", ""))
}

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

// read reads the file of log id whole into a new entry; nil when there is
// none. s.mu is held.
func (s *Store) read(id uuid.UUID) (*entry, error) {
	f, err := os.Open(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	b, err := io.ReadAll(f)
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
	keep = true
	// The state and the calls a file of version 1 keeps apart are slices
	// of b: copied, so that the file's content, events included, is not
	// kept in memory.
	lf.state, lf.calls = bytes.Clone(lf.state), cloneEvents(lf.calls)
	e := &entry{file: lf, stat: fi, seen: int64(len(b)), pin: pinned(f)}
	s.logs[id] = e
	s.used(id)
	return e, nil
}

// extend reads what was appended to the file of log id, entry e, since it
// was read: the frames another process saved. s.mu is held.
func (s *Store) extend(id uuid.UUID, e *entry) error {
	f, err := os.Open(s.path(id))
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if !os.SameFile(fi, e.stat) {
		return fmt.Errorf("filestore: log %s: replaced while read: %w", id, errReplaced)
	}
	b := make([]byte, max(fi.Size()-e.file.good, 0))
	if _, err := f.ReadAt(b, e.file.good); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	before := len(e.file.frames)
	if err := e.file.extend(b, e.file.good); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if len(e.file.frames) > before { // the state and calls of the new frames are slices of b
		e.file.state, e.file.calls = bytes.Clone(e.file.state), cloneEvents(e.file.calls)
	}
	e.seen = e.file.good
	if e.file.torn {
		e.seen = fi.Size()
	}
	if len(e.file.frames) > before {
		s.notify(id) // a save of another process, seen here first
	}
	return nil
}

// errReplaced reports a log file another took the name of as it was read.
var errReplaced = errors.New("the file was replaced")

// drop forgets what s read of log id. s.mu is held.
func (s *Store) drop(id uuid.UUID) {
	if e, ok := s.logs[id]; ok {
		e.release()
		s.forget(id, e)
		delete(s.logs, id)
	}
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
	bytes := int64(len(e.file.state)) + sumBytes(e.file.calls) + int64(len(e.file.frames))*16 + int64(len(e.file.marks))*markBytes
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

// markBytes is about what a log's mark of a batch with a key takes in
// memory: in its slice and its map, with a random key.
const markBytes = 160

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

// Append implements [nous.Store]: one frame, written and fsynced before it
// returns, under the log's lock. The store's other logs are not held up
// meanwhile: a save waits for the lock, writes and fsyncs without the
// store's mutex.
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
	if err := nous.CheckKey(b.Key); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	s.mu.Lock()
	e, ok := s.logs[id]
	var err error
	switch {
	case s.closed:
		err = errors.New("filestore: the store is closed")
	case !ok || e.poisoned != nil || b.Info.Revision <= 1:
		e, err = s.current(id)
	} // else the log is read again under its lock, if its file changed
	if err == nil && e == nil && b.Info.Revision == 1 && b.After == 0 {
		err = s.create(ctx, b)
		s.mu.Unlock()
		return err
	}
	err = exists(id, e, err, &b) // under s.mu: it reads e
	s.mu.Unlock()
	if err != nil {
		return err
	}
	release, err := s.acquire(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	lf, fi, err := s.lockLog(ctx, id)
	if err != nil {
		return err
	}
	unlock := sync.OnceFunc(func() { lf.Close() }) // closing the file releases the lock; a rewrite may release it first
	defer unlock()
	s.mu.Lock()
	held := true
	defer func() {
		if held {
			s.mu.Unlock()
		}
	}()
	if e, err = s.locked(id, fi); err != nil {
		return err
	}
	if err := exists(id, e, nil, &b); err != nil {
		return err
	}
	if i := &e.file.info; i.Head != b.After || i.Revision != b.Info.Revision-1 || i.Incarnation != b.Info.Incarnation {
		return fmt.Errorf("filestore: log %s: expected head %d revision %d incarnation %s, stored head %d revision %d incarnation %s: %w",
			id, b.After, b.Info.Revision-1, b.Info.Incarnation, i.Head, i.Revision, i.Incarnation, nous.ErrConflict)
	}
	if b.Key != "" && e.file.keys[b.Key] {
		return fmt.Errorf("filestore: log %s: a batch with key %q is stored already: %w", id, b.Key, nous.ErrLanded)
	}
	f := frame{info: b.Info, after: b.After, key: b.Key, state: b.State, events: b.Events}
	if err := checkFrame(&f); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if done, err := s.rewrite(ctx, id, e, &f, unlock); done || err != nil {
		return err
	}
	buf := appendFrame(nil, &f, e.file.version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return err
	}
	if err := s.openToAppend(id, e); err != nil {
		return err
	}
	start, out := e.file.good, e.f
	e.writing = true
	s.mu.Unlock()
	held = false
	err = s.write(id, out, buf)
	s.mu.Lock()
	held = true
	e.written()
	if err != nil {
		e.poisoned = err
		e.close()
		s.forget(id, e)
		return err
	}
	switch {
	case s.logs[id] != e: // forgotten meanwhile: the next use reads the file
	case e.file.good == start:
		stored := frame{info: b.Info, after: b.After, key: b.Key, state: bytes.Clone(b.State), events: b.Events}
		if err := e.file.add(&stored, e.file.good); err != nil {
			e.poisoned = err // written, and yet not a frame of this log: the file needs a reopen
			e.close()
			s.forget(id, e)
			return fmt.Errorf("filestore: log %s: %w", id, err)
		}
		e.file.good += int64(len(buf))
		e.file.torn, e.seen = false, e.file.good
		s.used(id)
	default: // changed meanwhile, as no reader changes it: read the file again
		s.drop(id)
	}
	s.notify(id)
	return nil
}

// exists returns the error of a batch b of log id, whose entry is e (nil
// for none) as current returned it with err, that is not the first and
// that the log as it is cannot take: its error, a log that exists for a
// first batch, a missing one for a later batch.
func exists(id uuid.UUID, e *entry, err error, b *nous.Batch) error {
	switch {
	case err != nil:
		return err
	case b.Info.Revision <= 1 && e != nil:
		return fmt.Errorf("filestore: log %s exists, with head %d: %w", id, e.file.info.Head, nous.ErrConflict)
	case b.Info.Revision > 1 && e == nil:
		return fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	case e == nil:
		return fmt.Errorf("filestore: log %s: a first batch after seq %d at revision %d", id, b.After, b.Info.Revision)
	}
	return nil
}

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

// create writes the new log of batch b: its name first, when it has one
// (see claim), then its file, to a temporary file, fsynced, linked into
// place (which fails when the name is taken: another process created the
// log first), and the directory fsynced, so that the log appears whole or
// not at all. s.mu is held.
func (s *Store) create(ctx context.Context, b nous.Batch) error {
	id := b.Info.ID
	if err := nous.CheckName(b.Info.Name, b.Info.Labels); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	f := frame{info: b.Info, after: 0, key: b.Key, state: b.State, events: b.Events}
	if err := checkFrame(&f); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	content := appendFrame([]byte(magic), &f, version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return err
	}
	release := func(bool) error { return nil }
	if b.Info.Name != "" {
		var err error
		if release, err = s.claim(ctx, id, b.Info.Name); err != nil {
			return err
		}
	}
	pin, err := s.createFile(id, content)
	if rerr := release(err == nil || errors.As(err, new(errRenamed))); err == nil {
		err = rerr
	}
	if err != nil {
		if pin != nil {
			pin.Close()
		}
		if errors.As(err, new(errRenamed)) {
			s.logs[id] = &entry{poisoned: err}
			s.forget(id, nil)
		}
		return err
	}
	stored := frame{info: b.Info, key: b.Key, state: bytes.Clone(b.State), events: b.Events}
	stored.info.Labels = maps.Clone(b.Info.Labels)
	e := &entry{file: logFile{version: version, good: int64(len(magic))}}
	if err := e.file.add(&stored, e.file.good); err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err) // checked by checkFrame: never
	}
	e.file.good += int64(len(content) - len(magic))
	if fi, err := pin.Stat(); err == nil { // the file made, whatever has its name by now
		e.stat, e.seen, e.pin = fi, e.file.good, pinned(pin)
		s.logs[id] = e
		s.used(id)
	} else {
		pin.Close()
	}
	s.notify(id)
	return nil
}

// createFile writes content as the file of log id: aside, fsynced, linked
// into place, the directory fsynced. It returns the file made, open for
// reading, also with an error once it is in place.
func (s *Store) createFile(id uuid.UUID, content []byte) (*os.File, error) {
	tmp := tmpName(s.path(id))
	if err := s.writeFile(tmp, content); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	made, err := os.Open(tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	err = s.fs.link(tmp, s.path(id))
	os.Remove(tmp)
	if err != nil {
		made.Close()
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("filestore: log %s exists (created by another process): %w", id, nous.ErrConflict)
		}
		return nil, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if err := s.syncDir(); err != nil {
		// The file is in place, but its name may not survive a crash:
		// the caller poisons the log until the store is opened again.
		return made, errRenamed{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	return made, nil
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

// openToAppend opens the file of log id, entry e, to append to, unless
// it is open: it stays open for the next save. The log's lock is held, and
// s.mu.
func (s *Store) openToAppend(id uuid.UUID, e *entry) error {
	if e.f != nil {
		return nil
	}
	f, err := s.fs.openAppend(s.path(id))
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	fi, err := os.Stat(s.path(id)) // the file the lock holds, which no one can replace
	if err != nil {
		f.Close()
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	e.f, e.fstat = f, fi
	s.open = slices.DeleteFunc(s.open, func(o uuid.UUID) bool { return o == id || s.logs[o] == nil || s.logs[o].f == nil })
	s.open = append(s.open, id)
	if len(s.open) > maxOpen {
		if old := s.logs[s.open[0]]; old != nil {
			old.close()
		}
		s.open = s.open[1:]
	}
	return nil
}

// write appends a frame to f, the file of log id, and fsyncs it. The log's
// lock is held, not s.mu. On error the caller poisons the log.
func (s *Store) write(id uuid.UUID, f file, frame []byte) error {
	if _, err := f.Write(frame); err != nil {
		return fmt.Errorf("filestore: log %s: write: %w", id, err)
	}
	if !s.opts.noSync {
		if err := f.Sync(); err != nil {
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
	for range 3 { // another file under its name as it reads: again
		e, err := s.current(id)
		if err != nil {
			return nous.Stored{}, err
		}
		if e == nil {
			return nous.Stored{}, fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
		}
		st := nous.Stored{Info: infoOf(e), State: e.file.stateWithCalls(), Batches: e.file.marksFrom(after)}
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
			e, err := s.current(id)
			info := nous.LogInfo{ID: id} // with an error: which log, so a caller can page past it
			if e != nil {
				info = infoOf(e)
			}
			s.mu.Unlock()
			if e == nil && err == nil || err == nil && !info.HasLabels(opts.Labels) {
				continue // deleted, or never whole; or not selected
			}
			n++
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// Delete implements [nous.Store]: under the log's lock, so that no process
// writes it as it goes; then its name is freed.
func (s *Store) Delete(ctx context.Context, id uuid.UUID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("filestore: the store is closed")
	}
	release, err := s.acquire(ctx, id) // no save of this store writes it meanwhile
	if err != nil {
		return err
	}
	defer release()
	// The file goes whatever it holds: a poisoned or corrupt log may be
	// deleted too, without being read whole (its name, if its first frame
	// tells it, is freed; a name file left names nothing).
	lf, _, err := s.lockLog(ctx, id)
	if err != nil {
		return err
	}
	defer lf.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(id)
	name := ""
	if first, err := firstFrameInfo(lf); err == nil {
		name = first.Name
	}
	err = os.Remove(s.path(id))
	if errors.Is(err, os.ErrNotExist) { // another process deleted it as this one waited
		return fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	s.notify(id)
	if err := s.syncDir(); err != nil {
		return err
	}
	if name != "" {
		return s.unname(ctx, id, name)
	}
	return nil
}

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
