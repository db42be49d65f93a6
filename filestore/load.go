package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

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
