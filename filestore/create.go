package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// tmpName returns a temporary file's name for the file name: a random
// one, so that processes making the same file do not share it.
func tmpName(name string) string {
	return fmt.Sprintf("%s.%s.tmp", name, strings.ReplaceAll(uuid.NewString()[:13], "-", ""))
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
	f := frame{info: b.Info, after: 0, state: b.State, events: b.Events}
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
	stored := frame{info: b.Info, state: bytes.Clone(b.State), events: b.Events}
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

// writeFile writes content as the file name through s.fs, a new file or
// an old one emptied, fsyncs it (but under [WithoutSync]) and closes it.
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
