package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// Watchers on another Store (another pool, as another process's would be)
// follow eight logs while 16 goroutines save to sixteen: each sees every
// event of its log once, in order, with no poll to fall back on, so that
// only the notifications wake them. Of two watchers of a log, one starts
// before the saves and one midway, from seq 0; then a delete ends a watch,
// by its notification too.
func TestWatchersInAnotherPoolSeeEverySaveOnce(t *testing.T) {
	defer pgstore.SetPollEvery(time.Hour)()
	dsn := freshSchema(t)
	writer, watcher := open(t, dsn), open(t, dsn)
	const logs, watched, saves = 16, 8, 40
	ids := make([]uuid.UUID, logs)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
		must(t, writer.Append(bg, firstBatch(ids[i], uuid.New(), 1)))
	}
	head := int64(1) // every log's head at the end: 1, then 1 to 3 events a save
	for j := range saves {
		head += int64(1 + j%3)
	}
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	follow := func(id uuid.UUID, done chan<- error) {
		next := int64(1)
		for e, err := range watcher.Watch(ctx, id, 0) {
			switch {
			case err != nil:
				done <- fmt.Errorf("log %s: after seq %d of %d: %w", id, next-1, head, err)
				return
			case e.Seq != next:
				done <- fmt.Errorf("log %s: seq %d after %d", id, e.Seq, next-1)
				return
			case e.Seq == head:
				done <- nil
				return
			}
			next++
		}
	}
	done := make(chan error, 2*watched)
	midway := make([]chan struct{}, watched)
	for k := range watched {
		midway[k] = make(chan struct{})
		go follow(ids[k], done)
		go func() {
			<-midway[k]
			follow(ids[k], done)
		}()
	}
	time.Sleep(100 * time.Millisecond) // the first watchers listen
	var wg sync.WaitGroup
	for k, id := range ids {
		wg.Go(func() {
			st := readAll(t, writer, id)
			for j := range saves {
				b := nextBatch(st, 1+j%3)
				if err := writer.Append(bg, b); err != nil {
					t.Errorf("log %d save %d: %v", k, j, err)
					return
				}
				st.Info = b.Info
				if j == saves/2 && k < watched {
					close(midway[k])
				}
			}
		})
	}
	wg.Wait()
	deadline := time.After(10 * time.Second)
	for i := range 2 * watched {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatalf("10 s after the last save, %d of %d watchers have not seen it", 2*watched-i, 2*watched)
		}
	}

	ended := make(chan error, 1)
	go func() {
		for _, err := range watcher.Watch(ctx, ids[0], head) {
			ended <- err
			return
		}
	}()
	time.Sleep(100 * time.Millisecond)
	must(t, writer.Delete(bg, ids[0]))
	select {
	case err := <-ended:
		if !errors.Is(err, nous.ErrNotFound) {
			t.Fatalf("the watch of a deleted log ended with %v, want ErrNotFound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("10 s after its log was deleted, a watch goes on")
	}
}

// A save that lands while a watch starts is seen, with no poll to fall
// back on: one made while the Store's listener is not yet listening (its
// LISTEN held up), which only the read every watcher makes once the
// listener listens finds; and one made after the watch's first read was
// taken and before its answer came back, which only the notification of
// a watcher subscribed before that read finds.
func TestWatchSeesTheSavesAroundItsStart(t *testing.T) {
	defer pgstore.SetPollEvery(time.Hour)()
	for _, tc := range []struct {
		name string
		sql  string
		held delay
	}{
		{"before the listener listens", "LISTEN nous_log", delay{request: time.Second}},
		{"during the first read", pgstore.WatchReadQuery, delay{answer: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dsn := newProxy(t, freshSchema(t))
			writer, watcher := open(t, dsn), open(t, dsn)
			id, other := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
			must(t, writer.Append(bg, firstBatch(id, uuid.New(), 1)))
			must(t, writer.Append(bg, firstBatch(other, uuid.New(), 1)))
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			if tc.sql == pgstore.WatchReadQuery { // the listener listens already, for another log
				for _, err := range watcher.Watch(ctx, other, 0) {
					must(t, err)
					break
				}
				go func() {
					for range watcher.Watch(ctx, other, 1) {
					}
				}()
				time.Sleep(200 * time.Millisecond)
			}
			p.hold(tc.sql, tc.held)
			seen := make(chan int64, 10)
			go func() {
				for e, err := range watcher.Watch(ctx, id, 0) {
					if err != nil {
						return
					}
					seen <- e.Seq
				}
			}()
			time.Sleep(300 * time.Millisecond) // the watch has started; its first read, or LISTEN, is held
			st := readAll(t, writer, id)
			must(t, writer.Append(bg, nextBatch(st, 1)))
			p.hold(tc.sql, delay{})
			for want := int64(1); want <= 2; want++ {
				select {
				case got := <-seen:
					if got != want {
						t.Fatalf("watched seq %d, want %d", got, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("5 s after the save, the watch has seen seq %d of 2", want-1)
				}
			}
		})
	}
}

// A save whose notification never came (its process ended between its
// commit and the notification) is seen within the poll's period: here a
// save's statement run on a connection of its own, which notifies
// nothing.
func TestWatchSeesASaveNeverNotified(t *testing.T) {
	defer pgstore.SetPollEvery(200 * time.Millisecond)()
	dsn := freshSchema(t)
	s := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1)))
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	seen := make(chan int64, 10)
	go func() {
		for e, err := range s.Watch(ctx, id, 0) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	if got := <-seen; got != 1 {
		t.Fatalf("watched seq %d, want 1", got)
	}
	b := nextBatch(readAll(t, s, id), 1)
	now := time.Now()
	tag, err := connect(t, dsn).Exec(bg, pgstore.AppendNextQuery, b.Info.ID, b.Info.Incarnation, b.After, b.Info.Head,
		[]string{"turn_start"}, []time.Time{now}, [][]byte{b.Events[0]}, b.State, now)
	must(t, err)
	if tag.RowsAffected() != 1 {
		t.Fatalf("the save's statement stored %d rows of the log", tag.RowsAffected())
	}
	select {
	case got := <-seen:
		if got != 2 {
			t.Fatalf("watched seq %d, want 2", got)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("3 s after a save that notified nothing, with a poll every 200 ms, the watch has not seen it")
	}
}
