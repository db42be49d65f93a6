package pgstore_test

import (
	"context"
	"errors"
	"math"
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

// schemaOf returns the first schema of dsn's search_path.
func schemaOf(t *testing.T, dsn string) string {
	t.Helper()
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	defer conn.Close(bg)
	var name string
	must(t, conn.QueryRow(bg, `SELECT current_schema()`).Scan(&name))
	return name
}

// The tables are those of the first schema of the search_path: with
// search_path=tenant,shared where shared holds another store's tables, the
// tenant's store makes and uses its own.
func TestCaseSearchPathFirstSchema(t *testing.T) {
	shared := freshSchema(t)
	other := open(t, shared) // a store whose tables are in "shared"
	sharedName := schemaOf(t, shared)
	tenant := freshSchema(t)
	tenantName := schemaOf(t, tenant)
	dsn := withSearchPath(t, serverDSN(t), tenantName+","+sharedName)
	s := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
	if _, err := other.Read(bg, id, nous.Position{}); err == nil {
		t.Errorf("a log saved through search_path=%s,%s is in the tables of %s, another store's", tenantName, sharedName, sharedName)
	}
	conn, err := pgx.Connect(bg, tenant)
	must(t, err)
	defer conn.Close(bg)
	var there bool
	must(t, conn.QueryRow(bg, `SELECT to_regclass($1) IS NOT NULL`, tenantName+".nous_logs").Scan(&there))
	if !there {
		t.Errorf("no nous_logs in %s, the first schema of the search_path", tenantName)
	}
}

// Read takes any negative Position.ToolCalls as 0, as ToolCallsFrom does.
func TestCaseReadNegativeToolCalls(t *testing.T) {
	s := open(t, freshSchema(t))
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, calls("a", 2))))
	for _, n := range []int{-1, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		st, err := s.Read(bg, id, nous.Position{ToolCalls: n})
		if err != nil {
			t.Errorf("Read from ToolCalls %d: %v", n, err)
			continue
		}
		if st.ToolCallsAt != 0 || len(st.ToolCalls) != 2 {
			t.Errorf("Read from ToolCalls %d: at %d, %d calls", n, st.ToolCallsAt, len(st.ToolCalls))
		}
	}
}

// New with a nil pool is an error.
func TestCaseNewNilPool(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("New(ctx, nil) panicked: %v", r)
		}
	}()
	s, err := pgstore.New(bg, nil)
	if err == nil {
		s.Close()
		t.Fatal("New(ctx, nil) returned no error")
	}
}

// A Watch of a Store whose pool the caller closed ends with an error: a
// closed pool is not a lost connection to retry.
func TestCaseWatchClosedPoolNeverEnds(t *testing.T) {
	dsn := freshSchema(t)
	pool, err := pgxpool.New(bg, dsn)
	must(t, err)
	s, err := pgstore.New(bg, pool)
	must(t, err)
	defer s.Close()
	writer := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, writer.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	ended := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		for _, err := range s.Watch(ctx, id, 0) {
			if err != nil {
				ended <- err
				return
			}
			close(started)
		}
	}()
	<-started
	time.Sleep(200 * time.Millisecond) // the listener is up
	pool.Close()
	st := readAll(t, writer, id)
	must(t, writer.Append(bg, nextBatch(st, 1, 0, nil))) // a hint: the watcher reads, through the closed pool
	select {
	case err := <-ended:
		t.Logf("the watch ended with %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("10 s after its pool was closed the watch still retries: a closed pool is taken for a lost connection")
	}
}

// Under SERIALIZABLE, writers of different logs, one writer per log, never
// get ErrConflict: the server's serialization failures, which its
// predicate locks on shared pages raise without any writer of the log in
// the way, are retried while the log is as the batch expects.
func TestCaseSerializableSpuriousConflict(t *testing.T) {
	dsn := freshSchema(t) + "&default_transaction_isolation=serializable"
	s := open(t, dsn)
	var wrong atomic.Int64
	var example atomic.Value
	deadline := time.Now().Add(4 * time.Second)
	for round := 0; wrong.Load() == 0 && time.Now().Before(deadline); round++ {
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				id := uuid.Must(uuid.NewV7())
				for { // the first batch
					err := s.Append(bg, firstBatch(id, uuid.New(), 1, calls("a", 2)))
					if err == nil {
						break
					}
					if _, rerr := s.Read(bg, id, nous.Position{}); errors.Is(err, nous.ErrConflict) && errors.Is(rerr, nous.ErrNotFound) {
						wrong.Add(1) // "another writer created it first": nobody did
						example.Store(err.Error())
						continue
					}
					t.Error(err)
					return
				}
				st := readAll(t, s, id)
				for range 60 {
					err := s.Append(bg, nextBatch(st, 2, len(st.ToolCalls), calls("b", 2)))
					if err != nil {
						if now := readAll(t, s, id); errors.Is(err, nous.ErrConflict) && now.Info.Revision == st.Info.Revision {
							wrong.Add(1) // the log did not move: same batch again
							example.Store(err.Error())
							continue
						}
						t.Error(err)
						return
					}
					st = readAll(t, s, id)
				}
			})
		}
		wg.Wait()
	}
	if n := wrong.Load(); n > 0 {
		t.Fatalf("%d ErrConflict for logs with one writer each, whose stored head did not move, e.g. %s", n, example.Load())
	}
}

// A log whose row says more tool calls than are stored is ErrCorrupt, never
// a context with fewer calls (the root counts events against the head;
// only the store can count the calls).
func TestCaseMissingToolCallRowNotCorrupt(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, calls("a", 3))))
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	defer conn.Close(bg)
	_, err = conn.Exec(bg, `DELETE FROM nous_tool_calls WHERE log_id = $1 AND idx = 1`, id)
	must(t, err)
	st, err := s.Read(bg, id, nous.Position{})
	if !errors.Is(err, nous.ErrCorrupt) {
		t.Errorf("Read of a log whose row says 3 tool calls, with 2 stored: %v, %d calls from %d; want ErrCorrupt", err, len(st.ToolCalls), st.ToolCallsAt)
	}
	c, err := nous.Load(bg, s, id)
	if !errors.Is(err, nous.ErrCorrupt) {
		n := -1
		if c != nil {
			n = len(c.ToolCalls)
		}
		t.Errorf("Load: %v, a context with %d tool calls of 3 saved; want ErrCorrupt", err, n)
	}
}

// Calls racing Close fail with an error wrapping ErrClosed, never with the
// pool's own cancellation, which a caller would take for its context's.
func TestCaseCallsRacingCloseNotErrClosed(t *testing.T) {
	dsn := freshSchema(t)
	for round := range 20 {
		s, err := pgstore.Open(bg, dsn)
		must(t, err)
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
		var bad atomic.Value
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					_, err := s.Read(bg, id, nous.Position{})
					if err == nil {
						continue
					}
					if !errors.Is(err, pgstore.ErrClosed) {
						bad.Store(err)
					}
					return
				}
			})
		}
		time.Sleep(time.Duration(round) * time.Millisecond)
		s.Close()
		wg.Wait()
		if err := bad.Load(); err != nil {
			t.Fatalf("round %d: a Read racing Close: %v; wraps ErrClosed: false, wraps context.Canceled (ctx was never cancelled): %v",
				round, err, errors.Is(err.(error), context.Canceled))
		}
	}
}

// Concurrent Opens are safe under REPEATABLE READ and SERIALIZABLE too:
// the migration runs at READ COMMITTED, so the opener that waited for the
// lock sees the winner's version row.
func TestCaseConcurrentOpensStrictIsolation(t *testing.T) {
	for _, iso := range []string{"serializable", "repeatable%20read"} {
		dsn := freshSchema(t) + "&default_transaction_isolation=" + iso
		errs := openAtOnce(dsn, 8)
		failed := 0
		var example error
		for _, err := range errs {
			if err != nil {
				failed, example = failed+1, err
			}
		}
		if failed > 0 {
			t.Errorf("%s: %d of %d concurrent Opens failed, e.g. %v", iso, failed, len(errs), example)
		}
		conn, err := pgx.Connect(bg, dsn)
		must(t, err)
		var rows int
		must(t, conn.QueryRow(bg, `SELECT count(*) FROM nous_schema`).Scan(&rows))
		conn.Close(bg)
		if rows != 1 {
			t.Errorf("%s: nous_schema has %d rows, want 1: the lock did not serialize the openers", iso, rows)
		}
	}
}
