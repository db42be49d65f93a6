//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import "testing"

// Shared is shared, for the tests of package filestore_test.
const Shared = shared

// LockExclusively is not needed where processes do not share a directory.
func LockExclusively(t *testing.T, _ string) func() { t.Skip("no shared directories"); return nil }
