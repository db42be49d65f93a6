package pgstore_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous/pgstore"
)

// A call on a closed Store reports ErrClosed, as its doc says, whether
// Open made its pool or the caller gave it to New.
func TestCallAfterCloseIsErrClosed(t *testing.T) {
	dsn := freshSchema(t)
	s, err := pgstore.Open(bg, dsn)
	must(t, err)
	s.Close()
	id := uuid.Must(uuid.NewV7())
	if err := s.Append(bg, firstBatch(id, uuid.New(), 1)); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Append after Close (Open): %v, want ErrClosed", err)
	}
	pool, err := pgxpool.New(bg, dsn)
	must(t, err)
	defer pool.Close()
	s2, err := pgstore.New(bg, pool)
	must(t, err)
	s2.Close()
	if err := s2.Append(bg, firstBatch(id, uuid.New(), 1)); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Append after Close (New): %v, want ErrClosed", err)
	}
}

// Calls racing Close fail with an error wrapping ErrClosed, never with the
// pool's own cancellation, which a caller would take for its context's.
func TestCallsRacingCloseAreErrClosed(t *testing.T) {
	dsn := freshSchema(t)
	for round := range 20 {
		s, err := pgstore.Open(bg, dsn)
		must(t, err)
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 1)))
		var bad atomic.Value
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					_, err := s.Read(bg, id, 0)
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

// Close racing many watchers and a writer ends every watch with ErrClosed.
func TestCloseEndsEveryWatch(t *testing.T) {
	dsn := freshSchema(t)
	wr := open(t, dsn)
	for range 5 {
		s, err := pgstore.Open(bg, dsn)
		must(t, err)
		id := uuid.Must(uuid.NewV7())
		must(t, wr.Append(bg, firstBatch(id, uuid.New(), 1)))
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Go(func() {
				for _, err := range s.Watch(bg, id, 0) {
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			})
		}
		stop := make(chan struct{})
		var writer sync.WaitGroup
		writer.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if st, err := wr.Read(bg, id, 0); err == nil {
					wr.Append(bg, nextBatch(st, 1))
				}
			}
		})
		time.Sleep(100 * time.Millisecond)
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Close hangs")
		}
		wg.Wait()
		close(stop)
		writer.Wait()
		for range 50 {
			if err := <-errs; !errors.Is(err, pgstore.ErrClosed) {
				t.Fatalf("watch ended with %v", err)
			}
		}
	}
}

// A Store from New that watched and was closed leaves no goroutine and no
// listening connection; a watch abandoned by break unsubscribes.
func TestClosedStoreLeavesNoGoroutine(t *testing.T) {
	pool, err := pgxpool.New(bg, freshSchema(t))
	must(t, err)
	defer pool.Close()
	before := runtime.NumGoroutine()
	for range 5 {
		s, err := pgstore.New(bg, pool)
		must(t, err)
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 2)))
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
