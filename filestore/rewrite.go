package filestore

import (
	"bytes"
	"context"
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
// held), by writing the file anew when it is due (see rewriteMin), or when
// the file is of an earlier version: a temporary file with one frame that
// holds every event, f's included, the marks of the batches with a key and
// f's state, fsynced, renamed over the log's file, and the directory
// fsynced. It reports whether it stored f. Until the rename, the log's file
// is as it was: a failure there leaves the save to an append (done false),
// as does a log too large for one frame. The new file is locked before it
// takes the log's name, so that no process writes it until the rename is
// durable. unlock releases the old file's lock.
func (s *Store) rewrite(ctx context.Context, id uuid.UUID, e *entry, f *frame, unlock func()) (done bool, err error) {
	lf := &e.file
	whole := frame{info: lf.info, key: f.key, state: f.state}
	whole.info.Head, whole.info.Revision, whole.info.UpdatedAt = f.info.Head, f.info.Revision, f.info.UpdatedAt
	payload := payloadSize(&whole, version) + lf.marked + lf.events // its size with the marks and the events, without walking them
	for _, ev := range f.events {
		payload += 4 + int64(len(ev))
	}
	size := int64(len(magic)+frameHeader) + payload
	appended := lf.good + frameHeader + payloadSize(f, lf.version)
	due := appended > rewriteMin && appended*rewriteRatio[1] > size*rewriteRatio[0]
	if !due && lf.version == version || payload > maxPayload {
		return false, nil
	}
	path := s.path(id)
	r, err := os.Open(path)
	if err != nil {
		return false, nil
	}
	events, err := lf.eventsAfter(r, 0)
	r.Close()
	if err != nil {
		return true, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	whole.marks, whole.events = lf.marks, append(events, f.events...)
	content := appendFrame([]byte(magic), &whole, version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return true, err
	}
	tmp := tmpName(path)
	if err := s.writeFile(tmp, content); err != nil {
		os.Remove(tmp)
		return false, nil
	}
	made, err := os.Open(tmp) // the new file, to pin the entry with
	if err != nil {
		os.Remove(tmp)
		return false, nil
	}
	fi, err := made.Stat()
	if err != nil {
		made.Close()
		os.Remove(tmp)
		return false, nil
	}
	if shared {
		// The new file's lock, taken before it has the log's name.
		hold, err := os.Open(tmp)
		if err == nil {
			if err = lockFile(ctx, hold); err != nil {
				hold.Close()
			}
		}
		if err != nil {
			made.Close()
			os.Remove(tmp)
			return false, nil
		}
		defer hold.Close()
	} else {
		// Where no other process shares the directory: no handle of the
		// old file open as it is replaced.
		made.Close()
		made = nil
		unlock()
		e.repin(nil)
	}
	e.close()
	if err := s.fs.rename(tmp, path); err != nil {
		if made != nil {
			made.Close()
		}
		os.Remove(tmp)
		return false, nil
	}
	e.repin(made)
	if err := s.syncDir(); err != nil {
		// The new file is in place, but its name may not survive a
		// crash: the log is poisoned until the store is opened again.
		e.poisoned = fmt.Errorf("filestore: log %s: %w", id, err)
		s.forget(id, e)
		return true, e.poisoned
	}
	nf := logFile{version: version, good: int64(len(magic))}
	stored := whole
	stored.state = bytes.Clone(f.state)
	if err := nf.add(&stored, nf.good); err != nil {
		e.poisoned = fmt.Errorf("filestore: log %s: %w", id, err) // checked by checkMarks as read: never
		s.forget(id, e)
		return true, e.poisoned
	}
	nf.good = int64(len(content))
	e.file, e.stat, e.seen = nf, fi, nf.good
	s.used(id)
	s.notify(id)
	return true, nil
}
