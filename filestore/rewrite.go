package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"
)

// A log file is rewritten when a save would make it larger than both
// rewriteMin bytes and rewriteRatio times the file rewriting gives (every
// event and the state of the last save, in one frame): a state that
// changes on every save is kept once, not once per save, and the file
// stays within 1.5 times what it must hold. Each rewrite writes what the
// file holds; between two, the saves append at least half as much again,
// so rewriting costs each save a bounded share of the bytes it appends.
// Variables, so that tests can rewrite small files.
var (
	rewriteMin   int64 = 64 << 10
	rewriteRatio       = [2]int64{3, 2} // 3/2
)

// rewrite stores f, the next frame of log id (entry e, whose lock is
// held), by writing the file anew when it is due (see rewriteDue), or when
// the file is of an earlier version: one frame that holds every event, f's
// included, and f's state (see replace). It reports whether it stored f.
// A failure that leaves the log's file as it was leaves the save to an
// append (done false), as does a log too large for one frame. unlock
// releases the old file's lock.
func (s *Store) rewrite(ctx context.Context, id uuid.UUID, e *entry, f *frame, unlock func()) (done bool, err error) {
	whole, due := rewriteDue(&e.file, f)
	if !due {
		return false, nil
	}
	err = s.replace(ctx, id, e, &whole, f.events, unlock)
	if errors.As(err, new(errAside)) {
		return false, nil
	}
	return true, err
}

// replace writes the file of log id (entry e, whose lock is held) anew as
// one frame, whole, holding every event of the file, then more: a
// temporary file, fsynced, renamed over the log's file, and the directory
// fsynced. Until the rename, the log's file is as it was: a failure there
// is an errAside. The new file is locked before it takes the log's name,
// so that no process writes it until the rename is durable. unlock
// releases the old file's lock. s.mu is held.
//
// Its steps: the events are read from the old file and the new one
// encoded; writeAside writes it fsynced beside the old; takeOver locks it
// (or lets go of the old file's handles); the rename puts it in place, and
// the directory's fsync makes that durable; rewritten makes e hold the new
// file.
func (s *Store) replace(ctx context.Context, id uuid.UUID, e *entry, whole *frame, more []json.RawMessage, unlock func()) error {
	path := s.path(id)
	r, err := os.Open(path)
	if err != nil {
		return errAside{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	events, err := e.file.eventsAfter(r, 0)
	r.Close()
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	whole.events = append(events, more...)
	content := appendFrame([]byte(magic), whole, version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return err
	}
	tmp, made, fi, err := s.writeAside(path, content)
	if err != nil {
		return errAside{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	hold, made, err := takeOver(ctx, tmp, made, e, unlock)
	if err != nil {
		return errAside{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	if hold != nil {
		defer hold.Close() // the new file's lock, let go once its name is durable
	}
	e.close()
	if err := s.fs.rename(tmp, path); err != nil {
		if made != nil {
			made.Close()
		}
		os.Remove(tmp)
		return errAside{fmt.Errorf("filestore: log %s: %w", id, err)}
	}
	e.repin(made)
	if err := s.syncDir(); err != nil {
		// The new file is in place, but its name may not survive a
		// crash: the log is poisoned until the store is opened again.
		err = fmt.Errorf("filestore: log %s: %w", id, err)
		s.poison(id, e, err)
		return err
	}
	return s.rewritten(id, e, whole, int64(len(content)), fi)
}

// errAside is a failure of replace that left the log's file as it was:
// the new file, written aside, never took its name.
type errAside struct{ error }

func (e errAside) Unwrap() error { return e.error }

// rewriteDue returns the frame that rewrites log file lf with its next
// frame f, but for its events (which replace gathers only once it is
// due), and whether the rewrite is due: when the file would grow past
// rewriteMin and rewriteRatio, or is of an earlier version, and the new
// frame fits in one. The new frame's size is counted without walking the
// events.
func rewriteDue(lf *logFile, f *frame) (whole frame, due bool) {
	whole = frame{info: lf.info, state: f.state}
	whole.info.Head, whole.info.UpdatedAt = f.info.Head, f.info.UpdatedAt
	payload := payloadSize(&whole, version) + lf.events // its size with the events, without walking them
	for _, ev := range f.events {
		payload += 4 + int64(len(ev))
	}
	size := int64(len(magic)+frameHeader) + payload
	appended := lf.good + frameHeader + payloadSize(f, lf.version)
	due = appended > rewriteMin && appended*rewriteRatio[1] > size*rewriteRatio[0]
	if !due && lf.version == version || payload > maxPayload {
		return whole, false
	}
	return whole, true
}

// writeAside writes content, fsynced, to a temporary file beside path, and
// returns its name, the file open for reading (to pin the log's entry
// with) and its info. On error it leaves no temporary file.
func (s *Store) writeAside(path string, content []byte) (tmp string, made *os.File, fi os.FileInfo, err error) {
	tmp = tmpName(path)
	if err := s.writeFile(tmp, content); err != nil {
		os.Remove(tmp)
		return "", nil, nil, err
	}
	made, err = os.Open(tmp) // the new file, to pin the entry with
	if err != nil {
		os.Remove(tmp)
		return "", nil, nil, err
	}
	fi, err = made.Stat()
	if err != nil {
		made.Close()
		os.Remove(tmp)
		return "", nil, nil, err
	}
	return tmp, made, fi, nil
}

// takeOver readies the temporary file tmp, open as made, to take the name
// of the file of the log of entry e. Where processes share the directory,
// it takes tmp's lock before tmp has the log's name, so that no process
// writes the new file until the rename is durable, and returns hold, the
// file holding that lock, which the caller closes once done; made is
// returned as it was. Elsewhere it closes every handle of the old file
// (unlock releases its lock; its pin goes) and made too, which it returns
// nil. On error it closes made and removes tmp: the old file is as it was.
func takeOver(ctx context.Context, tmp string, made *os.File, e *entry, unlock func()) (hold, pin *os.File, err error) {
	if !shared {
		// Where no other process shares the directory: no handle of the
		// old file open as it is replaced.
		made.Close()
		unlock()
		e.repin(nil)
		return nil, nil, nil
	}
	// The new file's lock, taken before it has the log's name.
	hold, err = os.Open(tmp)
	if err == nil {
		if err = lockFile(ctx, hold); err != nil {
			hold.Close()
		}
	}
	if err != nil {
		made.Close()
		os.Remove(tmp)
		return nil, nil, err
	}
	return hold, made, nil
}

// rewritten makes e, the entry of log id, hold the file just renamed into
// place, of info fi and size bytes: the one frame whole, its state a copy.
// It wakes the log's watchers. s.mu is held.
func (s *Store) rewritten(id uuid.UUID, e *entry, whole *frame, size int64, fi os.FileInfo) error {
	nf := logFile{version: version, good: int64(len(magic))}
	stored := *whole
	stored.state = bytes.Clone(whole.state)
	if err := nf.add(&stored, nf.good); err != nil {
		err = fmt.Errorf("filestore: log %s: %w", id, err) // a frame of the log's info, after seq 0: never
		s.poison(id, e, err)
		return err
	}
	nf.good = size
	e.file, e.stat, e.seen = nf, fi, nf.good
	s.used(id)
	s.notify(id)
	return nil
}
