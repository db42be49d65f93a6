//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package filestore

// lock does not lock on this platform: only one process must open a
// directory.
func lock(string) (func() error, error) { return func() error { return nil }, nil }
