package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// A file of version 4 kept the key of each batch in its frame, apart from
// the log; since version 5 a batch's key is in the log itself, in the
// batch event that ends it ([nous.EventBatch]), and a context knows the
// keys of its log ([nous.Context.HasBatch]) from those events alone. So a
// file of version 4 whose frames hold keys is migrated before the store
// gives out anything of its log: it is rewritten in version 5 (see
// replace) with one more event, a batch event listing every key, in the
// order the batches were stored. A file of version 4 without keys, or of
// an earlier version, needs no event: it is rewritten at its next save.
//
// The migration runs the first time the store uses such a log (Read,
// Watch, List, Lookup, or a save), not at Open: Open stays one lock and no
// read of the logs, however many the directory holds, and a file of
// version 4 that appears later (copied in, restored, or saved by a process
// of an earlier version) is migrated all the same. It is a write like a
// save's, under the log's lock: the turn of the store's writers, then the
// flock of its file. A process that waited for the lock as another
// migrated the file finds it replaced, in version 5, and migrates nothing:
// a log gets one such event, whoever reads it first. A torn last frame is
// cut before, as a save cuts it: its key was never acknowledged.

// settled returns the entry of log id as current returns it, once its
// file holds no batch keys apart from its events: a file of version 4 that
// does is migrated first (see migrate), s.mu let go meanwhile. s.mu is
// held.
func (s *Store) settled(ctx context.Context, id uuid.UUID) (*entry, error) {
	for range 3 { // saved again by a process of an earlier version as this one migrated: again
		e, err := s.current(id)
		if err != nil || e == nil || e.file.keyed == nil {
			return e, err
		}
		s.mu.Unlock()
		err = s.migrate(ctx, id)
		s.mu.Lock()
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("filestore: log %s: its file of version 4 was saved again under every migration: %w", id, nous.ErrConflict)
}

// migrate migrates the file of log id, of version 4 with batch keys (see
// migrateLocked), under the log's lock. A file another process migrated,
// or deleted, as this one waited for the lock is left as it is. s.mu is
// not held.
func (s *Store) migrate(ctx context.Context, id uuid.UUID) error {
	release, err := s.acquire(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	lf, fi, err := s.lockLog(ctx, id)
	if errors.Is(err, nous.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	unlock := sync.OnceFunc(func() { lf.Close() }) // closing the file releases the lock; the rewrite may release it first
	defer unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.locked(id, fi)
	if errors.Is(err, nous.ErrNotFound) {
		return nil
	}
	if err != nil || e.file.keyed == nil {
		return err
	}
	return s.migrateLocked(ctx, id, e, unlock)
}

// migrateLocked rewrites the file of log id (entry e, of version 4 with
// batch keys, whose lock is held, its torn last frame cut) in version 5,
// with one more event after its head: the batch event of every key its
// frames hold. The log's state and identity are kept; its update time is
// now. The file is replaced as a rewrite replaces it, durably, or not at
// all: a failure returns an error and leaves the file as it was, so that
// no reader is given the log without its keys. unlock releases the old
// file's lock. s.mu is held.
func (s *Store) migrateLocked(ctx context.Context, id uuid.UUID, e *entry, unlock func()) error {
	at := time.Now().UTC()
	event, err := keysEvent(e.file.info.Head+1, e.file.keys, at)
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	whole := frame{info: e.file.info, state: e.file.state}
	whole.info.Head, whole.info.UpdatedAt = e.file.info.Head+1, at
	if size := payloadSize(&whole, version) + e.file.events + 4 + int64(len(event)); size > maxPayload {
		return fmt.Errorf("filestore: log %s: its file of version 4 needs a frame of %d bytes to hold its batch keys in an event, over the %d a frame holds: %w",
			id, size, maxPayload, ErrTooLarge)
	}
	if err := s.replace(ctx, id, e, &whole, []json.RawMessage{event}, unlock); err != nil {
		return fmt.Errorf("filestore: log %s: the batch keys of its file of version 4 were not moved into an event: %w", id, err)
	}
	return nil
}

// keysEvent returns the JSON of the batch event of seq seq, made at at,
// that lists keys.
func keysEvent(seq int64, keys []string, at time.Time) (json.RawMessage, error) {
	list := make([]any, len(keys))
	for i, k := range keys {
		list[i] = k
	}
	return json.Marshal(nous.Event{Seq: seq, Type: nous.EventBatch, Data: map[string]any{nous.DataKeys: list}, CreatedAt: at})
}
