package agent_test

import (
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/internal/turnbench"
	"github.com/nous-go/nous/storetest"
)

// BenchmarkTurn is a turn of a stored session (a user message, two tool
// calls, a reply) by the runner, and by hand on the same primitives with
// and without the write-ahead of the calls' starts (see turnbench.Run), in
// memory and on the file store with fsync.
func BenchmarkTurn(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		turnbench.Run(b, func(*testing.B) nous.Store { return storetest.NewMemory() })
	})
	b.Run("file", func(b *testing.B) {
		turnbench.Run(b, func(b *testing.B) nous.Store {
			s, err := filestore.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		})
	})
}
