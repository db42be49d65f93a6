package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// rawEvents returns n bookkeeping events with seqs after+1..after+n.
func rawEvents(after int64, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range n {
		out[i] = json.RawMessage(fmt.Sprintf(`{"seq":%d,"type":"turn_start","created_at":"2026-11-30T12:00:00Z"}`, after+1+int64(i)))
	}
	return out
}

// firstBatch returns the creating batch of a log with n events and calls.
func firstBatch(id, inc uuid.UUID, n int, calls []json.RawMessage) nous.Batch {
	return nous.Batch{
		Info:  nous.LogInfo{ID: id, Head: int64(n), Revision: 1, Incarnation: inc, UpdatedAt: time.Now(), CreatedAt: time.Now()},
		State: []byte(`{"version":2}`), Events: rawEvents(0, n), ToolCalls: calls,
	}
}

// nextBatch returns the batch after st with n events and calls from at.
func nextBatch(st nous.Stored, n int, at int, calls []json.RawMessage) nous.Batch {
	info := st.Info
	after := info.Head
	info.Head += int64(n)
	info.Revision++
	info.UpdatedAt = time.Now()
	return nous.Batch{Info: info, After: after, State: []byte(`{"version":2}`), Events: rawEvents(after, n), ToolCallsAt: at, ToolCalls: calls}
}

func calls(prefix string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range n {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"%s%d"}`, prefix, i))
	}
	return out
}

var bg = context.Background()

func readAll(t testing.TB, s nous.Store, id uuid.UUID) nous.Stored {
	t.Helper()
	st, err := s.Read(bg, id, nous.Position{})
	must(t, err)
	return st
}

// openAtOnce opens dsn from n goroutines at once, closing each store
// opened, and returns their errors.
func openAtOnce(dsn string, n int) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.Open(bg, dsn)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}
