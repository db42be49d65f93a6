package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// Watch with after below 0 yields every event (seq > after).
func TestWatchNegativeAfterYieldsAll(t *testing.T) {
	s := open(t, freshSchema(t))
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 3)))
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

// Close ends a Watch with ErrClosed; a log deleted, or deleted and saved
// again, ends it with ErrNotFound.
func TestWatchEndsOnCloseAndDelete(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	turn(t, c, 0)
	data, err := c.Serialize()
	must(t, err)
	must(t, c.Save(bg, s))
	ended := func(s *pgstore.Store, act func()) error {
		errc := make(chan error, 1)
		go func() {
			for _, err := range s.Watch(bg, c.Log().ID(), 0) {
				if err != nil {
					errc <- err
					return
				}
			}
		}()
		time.Sleep(100 * time.Millisecond)
		act()
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not end")
			return nil
		}
	}
	other, err := pgstore.Open(bg, dsn)
	must(t, err)
	if err := ended(other, other.Close); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Close: the watch ended with %v, want ErrClosed", err)
	}
	recreate := func() {
		must(t, s.Delete(bg, c.Log().ID()))
		again, err := nous.DeserializeWithLogger(data, quiet)
		must(t, err)
		turn(t, again, 1)
		must(t, again.Save(bg, s))
	}
	if err := ended(s, recreate); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("deleted and saved again: the watch ended with %v, want ErrNotFound", err)
	}
	if err := ended(s, func() { must(t, s.Delete(bg, c.Log().ID())) }); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("deleted: the watch ended with %v, want ErrNotFound", err)
	}
}

// A Watch of a Store whose pool the caller closed ends with an error: a
// closed pool is not a lost connection to retry.
func TestWatchEndsWhenThePoolIsClosed(t *testing.T) {
	dsn := freshSchema(t)
	pool, err := pgxpool.New(bg, dsn)
	must(t, err)
	s, err := pgstore.New(bg, pool)
	must(t, err)
	defer s.Close()
	writer := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, writer.Append(bg, firstBatch(id, uuid.New(), 1)))
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
	must(t, writer.Append(bg, nextBatch(st, 1))) // a hint: the watcher reads, through the closed pool
	select {
	case err := <-ended:
		t.Logf("the watch ended with %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("10 s after its pool was closed the watch still retries: a closed pool is taken for a lost connection")
	}
}

// The listening connection of a Store from New goes with its last watch:
// a caller that closes its pool after a watch ended, and never closes the
// Store, leaves no connection open.
func TestListenerGoesWithTheLastWatch(t *testing.T) {
	dsn := freshSchema(t)
	pool, err := pgxpool.New(bg, dsn+"&pool_max_conns=1&application_name=revlisten")
	must(t, err)
	s, err := pgstore.New(bg, pool)
	must(t, err)
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1)))
	for _, err := range s.Watch(bg, id, 0) {
		must(t, err)
		break
	}
	pool.Close() // the caller is done; s is never closed
	time.Sleep(300 * time.Millisecond)
	var n int
	must(t, connect(t, dsn).QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'revlisten'`).Scan(&n))
	if n != 0 {
		t.Fatalf("%d connections of the closed pool left open (a watch ended, the pool closed)", n)
	}
}
