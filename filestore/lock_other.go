//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package filestore

import (
	"context"
	"os"
)

// shared says that processes share a directory: not on this platform,
// which has no lock; only one process must open a directory.
const shared = false

func lockDir(string) (func() error, error) { return func() error { return nil }, nil }

func lockFile(ctx context.Context, _ *os.File) error { return ctx.Err() }
