package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// maxOpen bounds the log files a store keeps open between saves; past it,
// the oldest opened is closed.
const maxOpen = 64

// Append implements [nous.Store]: one frame, written and fsynced before it
// returns, under the log's lock. The store's other logs are not held up
// meanwhile: a save waits for the lock, writes and fsyncs without the
// store's mutex.
func (s *Store) Append(ctx context.Context, b nous.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkBatch(&b); err != nil {
		return err
	}
	if created, err := s.createOrCheck(ctx, &b); created || err != nil {
		return err
	}
	// The locks, taken in this order and let go in the reverse: the turn
	// of this store's writers of the log, the flock of its file (waited
	// for without s.mu), then s.mu.
	id := b.Info.ID
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
	e, err := s.lockedFor(ctx, id, fi, &b, unlock)
	if err != nil {
		return err
	}
	buf, done, err := s.prepareAppend(ctx, id, e, &b, unlock)
	if done || err != nil {
		return err
	}
	// The frame is written and fsynced without s.mu: e.writing keeps the
	// store's readers from reading it before it is fsynced, and from
	// closing e's files under the write. A crash meanwhile leaves a torn
	// last frame, which the log's next writer cuts (see locked).
	start, out := e.file.good, e.f
	e.writing = true
	s.mu.Unlock()
	held = false
	err = s.write(id, out, buf)
	s.mu.Lock()
	held = true
	e.written()
	if err != nil {
		s.poison(id, e, err)
		return err
	}
	return s.appended(id, e, &b, start, int64(len(buf)))
}

// checkBatch returns the error of a batch b that no log can take: of the
// nil log ID or incarnation, or with a head that is not its last event's
// seq.
func checkBatch(b *nous.Batch) error {
	id := b.Info.ID
	if id == uuid.Nil || b.Info.Incarnation == uuid.Nil {
		return errors.New("filestore: a batch of the nil log ID or incarnation")
	}
	if b.Info.Head != b.After+int64(len(b.Events)) {
		return fmt.Errorf("filestore: log %s: head %d after %d with %d events", id, b.Info.Head, b.After, len(b.Events))
	}
	return nil
}

// createOrCheck is what a save of batch b does under s.mu before it takes
// the log's lock. A batch that follows head 0 (After 0) of a log that does
// not exist creates it (see create: the log appears whole or not at all,
// and no lock of its file is needed, as the link that puts it in place
// fails when another process created it first), and it reports created.
// Any other batch is checked against the log as the store holds it (read
// again first when it holds none, or a poisoned one, or b follows head 0),
// so that one the log cannot take fails without waiting for the lock.
func (s *Store) createOrCheck(ctx context.Context, b *nous.Batch) (created bool, err error) {
	id := b.Info.ID
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.logs[id]
	switch {
	case s.closed:
		err = errors.New("filestore: the store is closed")
	case !ok || e.poisoned != nil || b.After == 0:
		e, err = s.current(id)
	} // else the log is read again under its lock, if its file changed
	if err == nil && e == nil && b.After == 0 {
		return true, s.create(ctx, *b)
	}
	if err == nil && e != nil && b.After == 0 {
		err = cas(id, e, b) // a log created twice: a head past 0, or another incarnation
	}
	return false, exists(id, e, err, b) // under s.mu: it reads e
}

// exists returns the error of a batch b of log id, whose entry is e (nil
// for none) as current returned it with err, that the log as it is
// cannot take: its error, or a missing log for a batch after a head past
// 0, which only a log the store holds can take.
func exists(id uuid.UUID, e *entry, err error, b *nous.Batch) error {
	switch {
	case err != nil:
		return err
	case e == nil:
		return fmt.Errorf("filestore: log %s: a batch after seq %d: %w", id, b.After, nous.ErrNotFound)
	}
	return nil
}

// cas returns the error of batch b if log id, entry e, cannot take it: a
// head that is not the one b follows, or another incarnation, is an error
// wrapping nous.ErrConflict.
func cas(id uuid.UUID, e *entry, b *nous.Batch) error {
	if i := &e.file.info; i.Head != b.After || i.Incarnation != b.Info.Incarnation {
		return fmt.Errorf("filestore: log %s: expected head %d incarnation %s, stored head %d incarnation %s: %w",
			id, b.After, b.Info.Incarnation, i.Head, i.Incarnation, nous.ErrConflict)
	}
	return nil
}

// lockedFor returns the entry of log id, whose file, of info fi, is
// locked, as locked returns it (up to date with the file, its torn last
// frame cut), once it has checked that the log can take batch b: that b
// follows the stored head of the log's incarnation (else an error wrapping
// nous.ErrConflict). A file of version 4 that holds batch keys is migrated
// first (see migrateLocked), which moves its head on, so that the batch,
// made without the migration's event, conflicts; unlock releases the
// file's lock, which the migration may let go of. s.mu is held.
func (s *Store) lockedFor(ctx context.Context, id uuid.UUID, fi os.FileInfo, b *nous.Batch, unlock func()) (*entry, error) {
	e, err := s.locked(id, fi)
	if err != nil {
		return nil, err
	}
	if e.file.keyed != nil {
		if err := s.migrateLocked(ctx, id, e, unlock); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("filestore: log %s: expected head %d, stored head %d, the batch keys of its file of version 4 moved into an event: %w",
			id, b.After, e.file.info.Head, nous.ErrConflict)
	}
	if err := cas(id, e, b); err != nil {
		return nil, err
	}
	return e, nil
}

// prepareAppend readies the frame of batch b for log id, entry e, whose
// lock is held. It stores the frame itself, done, when the log's file is
// due to be rewritten (see rewrite, which may call unlock to let go of
// the old file's lock); else it returns the frame encoded, buf, with the
// file open to append it to. It gives up when ctx is done, with nothing
// written. s.mu is held.
func (s *Store) prepareAppend(ctx context.Context, id uuid.UUID, e *entry, b *nous.Batch, unlock func()) (buf []byte, done bool, err error) {
	f := frame{info: b.Info, after: b.After, state: b.State, events: b.Events, revision: e.file.revision + 1}
	if err := checkFrame(&f); err != nil {
		return nil, false, fmt.Errorf("filestore: log %s: %w", id, err)
	}
	if done, err := s.rewrite(ctx, id, e, &f, unlock); done || err != nil {
		return nil, true, err
	}
	buf = appendFrame(nil, &f, e.file.version)
	if err := ctx.Err(); err != nil { // the last moment to give up with nothing written
		return nil, false, err
	}
	if err := s.openToAppend(id, e); err != nil {
		return nil, false, err
	}
	return buf, false, nil
}

// appended adds batch b, whose frame of n bytes was written and fsynced at
// offset start of the file of log id, to e, the log's entry, and wakes
// the log's watchers. An entry forgotten or changed meanwhile is left to
// be read again from the file. s.mu is held again, and the log's lock.
func (s *Store) appended(id uuid.UUID, e *entry, b *nous.Batch, start, n int64) error {
	switch {
	case s.logs[id] != e: // forgotten meanwhile: the next use reads the file
	case e.file.good == start:
		stored := frame{info: b.Info, after: b.After, state: bytes.Clone(b.State), events: b.Events, revision: e.file.revision + 1}
		if err := e.file.add(&stored, e.file.good); err != nil {
			s.poison(id, e, err) // written, and yet not a frame of this log: the file needs a reopen
			return fmt.Errorf("filestore: log %s: %w", id, err)
		}
		e.file.good += n
		e.file.torn, e.seen = false, e.file.good
		s.used(id)
	default: // changed meanwhile, as no reader changes it: read the file again
		s.drop(id)
	}
	s.notify(id)
	return nil
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
