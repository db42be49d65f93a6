//go:build unix

package agent_test

import (
	"os"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/internal/crashtest"
)

// Two processes drive one session at once on the file store, 300 turns
// each, every turn a Run with its own key: each user message is stored
// once and answered, nothing is lost, the log pairs, and the slower writer
// is not starved: by the time the faster one is done, it has done a share
// of its turns (reported; the test fails under 1%, which a writer
// that lost every race it ran would never reach, but under the race
// detector, whose slower children make the share a matter of chance).
func TestTwoProcessesShareASession(t *testing.T) {
	dir := os.Getenv("NOUS_WRITERS_DIR")
	crashtest.Writer(func() (nous.Store, error) { return filestore.Open(dir, filestore.WithoutSync()) })
	if testing.Short() {
		t.Skip("runs two processes of 300 turns each")
	}
	dir = t.TempDir()
	share := crashtest.Writers(t, "TestTwoProcessesShareASession", []string{"NOUS_WRITERS_DIR=" + dir}, 300,
		func() (nous.Store, error) { return filestore.Open(dir) })
	t.Logf("when the faster writer was done, the slower had done %.0f%% of its turns", 100*share)
	if share < 0.01 && !raceOn {
		t.Errorf("the slower writer was starved: %.0f%% of its turns", 100*share)
	}
}
