package filestore

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// file is a file the store writes a log through: an *os.File, or in tests
// one that remembers what was written and what was synced, or fails.
type file interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// fileSystem is what the store does to the files of its directory when it
// writes: osFS, or in tests a file system that records every operation or
// fails one. Reading, cutting a torn tail and deleting use package os.
type fileSystem interface {
	create(name string) (file, error)     // a new file, or an old one emptied, to write
	openAppend(name string) (file, error) // an existing file, to append to
	rename(from, to string) error
	link(from, to string) error // a second name of from, to, which must not exist
	syncDir(dir string) error   // fsync directory dir, so that its names survive a crash
}

// osFS is the file system of the operating system.
type osFS struct{}

func (osFS) create(name string) (file, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (osFS) openAppend(name string) (file, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
}

func (osFS) rename(from, to string) error { return os.Rename(from, to) }

func (osFS) link(from, to string) error { return os.Link(from, to) }

func (osFS) syncDir(dir string) error { return syncDirectory(dir) }

// syncDir fsyncs the store's directory through s.fs, so that the names
// made or removed in it survive a crash; nothing under [WithoutSync].
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
