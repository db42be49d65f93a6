//go:build windows

package filestore

import (
	"errors"
	"os"
	"syscall"
)

// errSharingViolation is ERROR_SHARING_VIOLATION, which package syscall
// does not name.
const errSharingViolation = syscall.Errno(32)

// lock opens the file name, which it creates, without sharing it, so that a
// second open, from any process, fails until the returned function closes
// it: ErrLocked.
func lock(name string) (func() error, error) {
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
