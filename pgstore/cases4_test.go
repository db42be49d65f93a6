package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/pgstore"
)

// Opens in many new schemas at once, and in one, all succeed.
func TestCaseOpenSchemasAtOnce(t *testing.T) {
	var dsns []string
	for range 12 {
		d := freshSchema(t)
		dsns = append(dsns, d, d)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(dsns))
	for i, d := range dsns {
		wg.Go(func() {
			s, err := pgstore.Open(bg, d)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
}

// Close racing many watchers and a writer ends every watch with ErrClosed.
func TestCaseCloseWhileWatching(t *testing.T) {
	dsn := freshSchema(t)
	for range 5 {
		s, err := pgstore.Open(bg, dsn)
		must(t, err)
		wr := open(t, dsn)
		id := uuid.Must(uuid.NewV7())
		must(t, wr.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
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
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st := readAll(t, wr, id)
				wr.Append(bg, nextBatch(st, 1, 0, nil))
			}
		}()
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
		for range 50 {
			if err := <-errs; !errors.Is(err, pgstore.ErrClosed) {
				t.Fatalf("watch ended with %v", err)
			}
		}
	}
	_ = context.Background
}
