//go:build unix

package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/crashtest"
	"github.com/nous-go/nous/pgstore"
)

// The runner's crash matrix on PostgreSQL: a turn of three parallel calls
// (one idempotent, one at most once, one reconciled) and one approval,
// killed with SIGKILL at every point and resumed by another process (see
// internal/crashtest): a call answered before the kill never runs again,
// the at-most-once tool runs at most once, the approval is applied once,
// no reply the log held is asked for again.
func TestCrashMatrix(t *testing.T) {
	dsn := os.Getenv("NOUS_CRASH_PG_DSN")
	crashtest.Child(func() (nous.Store, error) { return pgstore.Open(context.Background(), dsn) })
	if testing.Short() {
		t.Skip("runs two child processes for each point of a turn")
	}
	dsn = freshSchema(t)
	open := func() (nous.Store, error) {
		s, err := pgstore.Open(context.Background(), dsn)
		if err == nil {
			t.Cleanup(s.Close)
		}
		return s, err
	}
	points := crashtest.Matrix(t, "TestCrashMatrix", []string{"NOUS_CRASH_PG_DSN=" + dsn}, open)
	t.Logf("killed at each of %d points, each resumed by another process", points)
}
