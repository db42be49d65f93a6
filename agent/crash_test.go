//go:build unix

package agent_test

import (
	"os"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/internal/crashtest"
)

// A turn of three parallel calls (one idempotent, one at most once, one
// reconciled) and one approval, on the file store, killed with SIGKILL at
// every point (each event appended, before and after each save, inside
// each tool) and resumed by another process: a call answered before the
// kill never runs again, the at-most-once tool runs at most once, the
// reconciled ones once, the approval is decided and applied once, no reply
// the log held is asked for again, and the transcript pairs.
func TestCrashMatrixFileStore(t *testing.T) {
	dir := os.Getenv("NOUS_CRASH_FILESTORE")
	crashtest.Child(func() (nous.Store, error) { return filestore.Open(dir) })
	if testing.Short() {
		t.Skip("runs two child processes for each point of a turn")
	}
	dir = t.TempDir()
	points := crashtest.Matrix(t, "TestCrashMatrixFileStore", []string{"NOUS_CRASH_FILESTORE=" + dir},
		func() (nous.Store, error) { return filestore.Open(dir) })
	t.Logf("killed at each of %d points, each resumed by another process", points)
}
