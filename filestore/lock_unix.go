//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// shared says that processes share a directory: each log is locked only
// while a process writes it.
const shared = true

// lockDir takes a shared flock on the file name, which it creates, and
// returns the function that releases it: every process that opens the
// directory holds one. An exclusive lock another process holds (a version
// of this package that kept a directory to one process) is ErrLocked, and
// so is this one to it.
func lockDir(name string) (func() error, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f.Close, nil // closing the file releases the lock
}

// lockFile takes an exclusive flock on f, waiting while another process
// holds it, until ctx is done. Closing f releases it.
func lockFile(ctx context.Context, f *os.File) error {
	wait := 50 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}
