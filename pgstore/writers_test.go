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

// Two processes drive one session at once on PostgreSQL, 300 turns each:
// each user message is stored once and answered, the log pairs, and the
// slower writer is not starved (its share reported; the test fails under
// 1%, but under the race detector, whose slower children make the
// share a matter of chance).
func TestTwoProcessesShareASession(t *testing.T) {
	dsn := os.Getenv("NOUS_WRITERS_PG_DSN")
	crashtest.Writer(func() (nous.Store, error) { return pgstore.Open(context.Background(), dsn) })
	if testing.Short() {
		t.Skip("runs two processes of 300 turns each")
	}
	dsn = freshSchema(t)
	open := func() (nous.Store, error) {
		s, err := pgstore.Open(context.Background(), dsn)
		if err == nil {
			t.Cleanup(s.Close)
		}
		return s, err
	}
	share := crashtest.Writers(t, "TestTwoProcessesShareASession", []string{"NOUS_WRITERS_PG_DSN=" + dsn}, 300, open)
	t.Logf("when the faster writer was done, the slower had done %.0f%% of its turns", 100*share)
	if share < 0.01 && !raceOn {
		t.Errorf("the slower writer was starved: %.0f%% of its turns", 100*share)
	}
}
