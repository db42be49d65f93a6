package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// namesDir is the subdirectory of the names: one file per name, named by
// the SHA-256 of the name in hex, holding the ID of its log and the name.
// A name file whose log is gone (deleted, or never made: a crash between
// the two) names nothing. Creating or deleting a named log holds the lock
// of the names (an flock of names/LOCK) while it changes its name file;
// reading one holds nothing.
const namesDir = "names"

// namePath returns the file of name.
func (s *Store) namePath(name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(s.dir, namesDir, hex.EncodeToString(sum[:]))
}

// named returns the ID the file of name holds; ok false when there is none.
func (s *Store) named(name string) (id uuid.UUID, ok bool, err error) {
	b, err := os.ReadFile(s.namePath(name))
	if errors.Is(err, os.ErrNotExist) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("filestore: name %q: %w", name, err)
	}
	line, rest, _ := strings.Cut(string(b), "\n")
	if id, err = uuid.Parse(line); err != nil || rest != name {
		return uuid.Nil, false, fmt.Errorf("filestore: name %q: its file holds %.80q: %w", name, b, nous.ErrCorrupt)
	}
	return id, true, nil
}

// lockNames takes the lock of the names, waiting while another process
// holds it, and returns the function that releases it.
func (s *Store) lockNames(ctx context.Context) (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, namesDir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filestore: lock the names: %w", err)
	}
	if err := lockFile(ctx, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("filestore: lock the names: %w", err)
	}
	return func() { f.Close() }, nil
}

// claim gives name to log id, about to be created: under the lock of the
// names, it checks that no log holds it and writes its file. release,
// called once the log's file is made (created true) or not, releases the
// lock, removing the name's file when the log was not made. A name another
// log holds is an error wrapping [nous.ErrConflict]. s.mu is held.
func (s *Store) claim(ctx context.Context, id uuid.UUID, name string) (release func(created bool) error, err error) {
	unlock, err := s.lockNames(ctx)
	if err != nil {
		return nil, err
	}
	other, ok, err := s.named(name)
	if err == nil && ok {
		var e *entry
		if e, err = s.current(other); err == nil && e != nil && e.file.info.Name == name {
			err = fmt.Errorf("filestore: log %s: the name %q is log %s's: %w", id, name, other, nous.ErrConflict)
		}
	}
	if err == nil {
		err = s.writeName(name, []byte(id.String()+"\n"+name))
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return func(created bool) error {
		defer unlock()
		if created {
			return nil
		}
		if err := os.Remove(s.namePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("filestore: name %q: %w", name, err)
		}
		return s.syncNames()
	}, nil
}

// writeName writes the file of name: aside, fsynced, renamed over the old
// one, the directory fsynced. The lock of the names is held.
func (s *Store) writeName(name string, content []byte) error {
	tmp := tmpName(s.namePath(name))
	if err := s.writeFile(tmp, content); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("filestore: name %q: %w", name, err)
	}
	if err := s.fs.rename(tmp, s.namePath(name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("filestore: name %q: %w", name, err)
	}
	return s.syncNames()
}

func (s *Store) syncNames() error {
	if s.opts.noSync {
		return nil
	}
	return s.fs.syncDir(filepath.Join(s.dir, namesDir))
}

// unname frees name, held by log id, which was deleted: it removes the
// name's file if it still names id.
func (s *Store) unname(ctx context.Context, id uuid.UUID, name string) error {
	unlock, err := s.lockNames(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if other, ok, err := s.named(name); err != nil || !ok || other != id {
		return nil // another log's, or none: a stale file names nothing either way
	}
	if err := os.Remove(s.namePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("filestore: name %q: %w", name, err)
	}
	return s.syncNames()
}

// Lookup implements [nous.Store]: it reads the name's file, then the log
// it names, which must still hold the name.
func (s *Store) Lookup(ctx context.Context, name string) (nous.LogInfo, error) {
	if err := ctx.Err(); err != nil {
		return nous.LogInfo{}, err
	}
	if name == "" {
		return nous.LogInfo{}, fmt.Errorf("filestore: no log is named %q: %w", name, nous.ErrNotFound)
	}
	id, ok, err := s.named(name)
	if err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("filestore: no log is named %q: %w", name, nous.ErrNotFound)
		}
		return nous.LogInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.settled(ctx, id)
	if err != nil {
		return nous.LogInfo{}, err
	}
	if e == nil || e.file.info.Name != name {
		return nous.LogInfo{}, fmt.Errorf("filestore: no log is named %q: %w", name, nous.ErrNotFound)
	}
	return infoOf(e), nil
}

// firstFrameInfo returns the info of the first frame of the log file r:
// its log's identity, name and labels.
func firstFrameInfo(r io.ReaderAt) (nous.LogInfo, error) {
	head := make([]byte, len(magic)+frameHeader)
	if _, err := r.ReadAt(head, 0); err != nil {
		return nous.LogInfo{}, err
	}
	version := fileVersion(head)
	if version == 0 {
		return nous.LogInfo{}, errors.New("not a log file")
	}
	b := make([]byte, frameHeader+int(binary.BigEndian.Uint32(head[len(magic):])))
	if _, err := r.ReadAt(b, int64(len(magic))); err != nil {
		return nous.LogInfo{}, err
	}
	f, _, err := readFrame(b, version)
	return f.info, err
}
