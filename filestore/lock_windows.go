//go:build windows

package filestore

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// shared says that processes share a directory. On Windows they do not:
// one process opens it at a time (lockDir).
const shared = false

// errSharingViolation is ERROR_SHARING_VIOLATION, which package syscall
// does not name.
const errSharingViolation = syscall.Errno(32)

// lockDir opens the file name, which it creates, without sharing it, so that a
// second open, from any process, fails until the returned function closes
// it: ErrLocked.
func lockDir(name string) (func() error, error) {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil, syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errSharingViolation) {
			return nil, ErrLocked
		}
		return nil, &os.PathError{Op: "lock", Path: name, Err: err}
	}
	return func() error { return syscall.CloseHandle(h) }, nil
}

// lockFile locks nothing: the directory is this process's alone.
func lockFile(ctx context.Context, _ *os.File) error { return ctx.Err() }
