package pgstore_test

import (
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/turnbench"
)

// BenchmarkTurn is a turn of a stored session (a user message, two tool
// calls, a reply) on PostgreSQL, by the runner and by hand with and
// without the write-ahead of the calls' starts (see turnbench.Run).
func BenchmarkTurn(b *testing.B) {
	turnbench.Run(b, func(b *testing.B) nous.Store { return open(b, freshSchema(b)) })
}
