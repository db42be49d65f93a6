//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Shared is shared, for the tests of package filestore_test.
const Shared = shared

// LockExclusively takes the lock of dir as a version of this package that
// kept a directory to one process took it, and returns its release.
func LockExclusively(t *testing.T, dir string) func() {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}
