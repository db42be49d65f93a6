package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// raceAppends makes writers race appends from one read position, rounds
// times, and returns the errors of the losers that are not ErrConflict.
func raceAppends(t *testing.T, stores []*pgstore.Store, rounds int) []error {
	id := uuid.Must(uuid.NewV7())
	must(t, stores[0].Append(bg, firstBatch(id, uuid.New(), 1, nil)))
	var bad []error
	var mu sync.Mutex
	for range rounds {
		st := readAll(t, stores[0], id)
		var wg sync.WaitGroup
		var wins atomic.Int64
		for _, s := range stores {
			wg.Go(func() {
				err := s.Append(bg, nextBatch(st, 3, 0, nil))
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, nous.ErrConflict):
					mu.Lock()
					bad = append(bad, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d writers won", wins.Load())
		}
	}
	final := readAll(t, stores[0], id)
	if int64(len(final.Events)) != final.Info.Head || final.Info.Revision != int64(rounds)+1 {
		t.Fatalf("head %d revision %d, %d events", final.Info.Head, final.Info.Revision, len(final.Events))
	}
	return bad
}

// Under READ COMMITTED every loser of a race conflicts.
func TestCaseRaceReadCommitted(t *testing.T) {
	dsn := freshSchema(t)
	var stores []*pgstore.Store
	for range 8 {
		stores = append(stores, open(t, dsn))
	}
	if bad := raceAppends(t, stores, 40); len(bad) > 0 {
		t.Fatalf("%d losers without ErrConflict, e.g. %v", len(bad), bad[0])
	}
}

// A database whose default isolation is REPEATABLE READ (ALTER DATABASE ...
// SET default_transaction_isolation): a racing loser must still get
// ErrConflict, not a serialization failure.
func TestCaseRaceRepeatableRead(t *testing.T) {
	dsn := freshSchema(t) + "&default_transaction_isolation=repeatable%20read"
	var stores []*pgstore.Store
	for range 8 {
		stores = append(stores, open(t, dsn))
	}
	if bad := raceAppends(t, stores, 40); len(bad) > 0 {
		t.Fatalf("%d losers without ErrConflict, e.g. %v", len(bad), bad[0])
	}
}

// Appends racing Delete and re-creation of the same ID leave every log
// whole: its events are 1..head, its tool calls tool_calls.
func TestCaseDeleteRecreateRace(t *testing.T) {
	dsn := freshSchema(t)
	s1, s2 := open(t, dsn), open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, s1.Append(bg, firstBatch(id, uuid.New(), 2, calls("a", 3))))
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				st, err := s1.Read(ctx, id, nous.Position{})
				if err != nil {
					continue
				}
				n := len(st.ToolCalls)
				at := n
				if n > 2 {
					at = n - 2 // a rewrite
				}
				err = s1.Append(ctx, nextBatch(st, 2, at, calls("b", 3)))
				if err != nil && !errors.Is(err, nous.ErrConflict) && !errors.Is(err, nous.ErrNotFound) && ctx.Err() == nil {
					t.Errorf("append: %v", err)
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			err := s2.Delete(ctx, id)
			if err != nil && !errors.Is(err, nous.ErrNotFound) && ctx.Err() == nil {
				t.Errorf("delete: %v", err)
			}
			err = s2.Append(ctx, firstBatch(id, uuid.New(), 1, calls("c", 1)))
			if err != nil && !errors.Is(err, nous.ErrConflict) && ctx.Err() == nil {
				t.Errorf("create: %v", err)
			}
		}
	})
	wg.Wait()
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	defer conn.Close(bg)
	var exists bool
	must(t, conn.QueryRow(bg, `SELECT EXISTS (SELECT 1 FROM nous_logs WHERE id = $1)`, id).Scan(&exists))
	if !exists { // the time ran out between a Delete and its re-creation
		var rows int64
		must(t, conn.QueryRow(bg, `SELECT (SELECT count(*) FROM nous_events WHERE log_id = $1) + (SELECT count(*) FROM nous_tool_calls WHERE log_id = $1)`, id).Scan(&rows))
		if rows != 0 {
			t.Fatalf("a deleted log left %d rows", rows)
		}
		return
	}
	var head, events, maxSeq, tc, tcRows, maxIdx int64
	must(t, conn.QueryRow(bg, `SELECT l.head, (SELECT count(*) FROM nous_events e WHERE e.log_id = l.id), (SELECT coalesce(max(seq),0) FROM nous_events e WHERE e.log_id = l.id),
		l.tool_calls, (SELECT count(*) FROM nous_tool_calls c WHERE c.log_id = l.id), (SELECT coalesce(max(idx)+1,0) FROM nous_tool_calls c WHERE c.log_id = l.id) FROM nous_logs l`).Scan(&head, &events, &maxSeq, &tc, &tcRows, &maxIdx))
	if head != events || head != maxSeq || tc != tcRows || tc != maxIdx {
		t.Fatalf("head %d, %d events up to %d; tool_calls %d, %d rows up to %d", head, events, maxSeq, tc, tcRows, maxIdx)
	}
}

// Tool-call rewrites: Read from every position matches ToolCallsFrom.
func TestCaseToolCallRewrites(t *testing.T) {
	s := open(t, freshSchema(t))
	id := uuid.Must(uuid.NewV7())
	model := [][]string{} // model[rev-1] = calls after revision rev
	ids := func(cs []json.RawMessage) []string {
		var out []string
		for _, c := range cs {
			out = append(out, string(c))
		}
		return out
	}
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, calls("r1-", 5))))
	model = append(model, ids(calls("r1-", 5)))
	rewritten := []int64{0}
	steps := []struct{ at, n int }{{5, 2}, {3, 0}, {3, 1}, {0, 0}, {0, 4}, {4, 0}, {2, 5}, {7, 1}}
	for i, step := range steps {
		st := readAll(t, s, id)
		rev := st.Info.Revision + 1
		cs := calls(fmt.Sprintf("r%d-", rev), step.n)
		must(t, s.Append(bg, nextBatch(st, 1, step.at, cs)))
		prev := model[len(model)-1]
		next := append(append([]string{}, prev[:step.at]...), ids(cs)...)
		model = append(model, next)
		rw := rewritten[len(rewritten)-1]
		if step.at < len(prev) {
			rw = rev
		}
		rewritten = append(rewritten, rw)
		_ = i
	}
	final := model[len(model)-1]
	rw := rewritten[len(rewritten)-1]
	for rev := int64(0); rev <= int64(len(model))+1; rev++ {
		for have := -1; have <= 12; have++ {
			from := nous.Position{Revision: rev, ToolCalls: have}
			st, err := s.Read(bg, id, from)
			must(t, err)
			at := from.ToolCallsFrom(len(final), rw)
			if st.ToolCallsAt != at || fmt.Sprint(ids(st.ToolCalls)) != fmt.Sprint(final[at:]) {
				t.Fatalf("from %+v: at %d %v, want at %d %v", from, st.ToolCallsAt, ids(st.ToolCalls), at, final[at:])
			}
		}
	}
}

// Watch with after below 0 yields every event (seq > after).
func TestCaseWatchNegativeAfter(t *testing.T) {
	s := open(t, freshSchema(t))
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 3, nil)))
	ctx, cancel := context.WithTimeout(bg, 3*time.Second)
	defer cancel()
	n := 0
	for e, err := range s.Watch(ctx, id, -1) {
		if err != nil {
			if n == 3 && errors.Is(err, context.Canceled) {
				return
			}
			t.Fatalf("after %d events: %v", n, err)
		}
		n++
		if e.Seq != int64(n) {
			t.Fatalf("seq %d", e.Seq)
		}
		if n == 3 {
			cancel()
		}
	}
}

// 10,000 and 100,000 events in one Append, NUL bytes in bodies.
func TestCaseBigBatch(t *testing.T) {
	s := open(t, freshSchema(t))
	for _, n := range []int{10000, 100000} {
		id := uuid.Must(uuid.NewV7())
		b := firstBatch(id, uuid.New(), n, calls("x\\u0000", 20000))
		b.State = bytes.Repeat([]byte{0}, 50<<20)
		must(t, s.Append(bg, b))
		st := readAll(t, s, id)
		if len(st.Events) != n || len(st.ToolCalls) != 20000 || !bytes.Equal(st.State, b.State) {
			t.Fatalf("%d events, %d calls", len(st.Events), len(st.ToolCalls))
		}
		st2, err := s.Read(bg, id, nous.Position{Seq: int64(n), Revision: 1, ToolCalls: 20000})
		must(t, err)
		b2 := nextBatch(st2, n, 20000, calls("y", 1))
		must(t, s.Append(bg, b2))
	}
}

// A cancelled Append wraps the context's error and stores all or nothing.
func TestCaseCancelMidAppend(t *testing.T) {
	s := open(t, freshSchema(t))
	for i := range 30 {
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
		st := readAll(t, s, id)
		b := nextBatch(st, 20000, 0, calls("z", 100))
		ctx, cancel := context.WithTimeout(bg, time.Duration(i)*time.Millisecond)
		err := s.Append(ctx, b)
		cancel()
		after := readAll(t, s, id)
		switch {
		case err == nil:
			if after.Info.Head != b.Info.Head {
				t.Fatalf("acknowledged but head %d", after.Info.Head)
			}
		case !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("round %d: %v does not wrap the deadline", i, err)
		}
		if int64(len(after.Events)) != after.Info.Head || (after.Info.Head != 1 && after.Info.Head != b.Info.Head) {
			t.Fatalf("partial: head %d, %d events", after.Info.Head, len(after.Events))
		}
	}
}

// Bodies round-trip under the other query modes a caller's pool may use.
func TestCaseQueryModes(t *testing.T) {
	for _, mode := range []string{"simple_protocol", "exec", "describe_exec", "cache_describe"} {
		t.Run(mode, func(t *testing.T) {
			dsn := freshSchema(t) + "&default_query_exec_mode=" + mode
			s := open(t, dsn)
			id := uuid.Must(uuid.NewV7())
			b := firstBatch(id, uuid.New(), 2, []json.RawMessage{json.RawMessage("{\"a\":\"\\u0000\",\"b\":\"'\\\"{}\"}")})
			b.Events[1] = json.RawMessage("{\"seq\":2,\"type\":\"turn_start\",\"created_at\":\"2026-11-30T12:00:00Z\",\"data\":\"x\\u0000 ,{}\\\"'\"}")
			b.State = []byte("{\"version\":2,\"x\":\"\x00\\\\\"}")
			if err := s.Append(bg, b); err != nil {
				t.Fatal(err)
			}
			st, err := s.Read(bg, id, nous.Position{})
			must(t, err)
			if !bytes.Equal(st.State, b.State) || !bytes.Equal(st.Events[1], b.Events[1]) || !bytes.Equal(st.ToolCalls[0], b.ToolCalls[0]) {
				t.Fatalf("read back %q %q %q", st.State, st.Events[1], st.ToolCalls[0])
			}
			must(t, s.Append(bg, nextBatch(st, 1, 1, nil)))
			n := 0
			for _, err := range s.List(bg, nous.ListOptions{}) {
				must(t, err)
				n++
			}
			must(t, s.Delete(bg, id))
		})
	}
}

// A Store from New that watched and was closed leaves no goroutine; a
// watch abandoned by break unsubscribes.
func TestCaseNoLeak(t *testing.T) {
	dsn := freshSchema(t)
	pool, err := pgxpool.New(bg, dsn)
	must(t, err)
	defer pool.Close()
	before := runtime.NumGoroutine()
	for range 5 {
		s, err := pgstore.New(bg, pool)
		must(t, err)
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 2, nil)))
		for range 10 {
			for _, err := range s.Watch(bg, id, 0) {
				must(t, err)
				break
			}
		}
		s.Close()
	}
	time.Sleep(500 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
	var listening int
	must(t, pool.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN nous_log' AND datname = current_database()`).Scan(&listening))
	if listening != 0 {
		t.Fatalf("%d listening connections left", listening)
	}
}
