package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/puddle/v2"

	"github.com/nous-go/nous"
)

// pollEvery is how often a Store with watchers reads the heads of the
// logs they follow, in one statement, and hints every watcher whose log
// moved past the last seq it yielded: the backstop for a notification that
// never came (its saver's process ended between the save's commit and the
// notification, or the listening connection died without an error yet).
var pollEvery = time.Second

// retryAfter is how long the listener, and a watcher whose read failed,
// waits before trying again.
var retryAfter = [...]time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second, 2 * time.Second}

// Watch implements [nous.Watcher]: it yields the events of log id after
// seq after, then those saved later by any process, until ctx is done.
// Lost connections are retried, not yielded: a watcher reads again once
// the server answers; any other error ends it. A log that is deleted, or deleted and saved again,
// ends it with an error wrapping [nous.ErrNotFound]; Close ends it with
// one wrapping [ErrClosed].
func (s *Store) Watch(ctx context.Context, id uuid.UUID, after int64) iter.Seq2[nous.Event, error] {
	return func(yield func(nous.Event, error) bool) {
		after := max(after, 0)
		w, err := s.hub.subscribe(s, id, after)
		if err != nil {
			yield(nous.Event{}, err)
			return
		}
		defer s.hub.unsubscribe(id, w)
		var incarnation uuid.UUID
		failures := 0
		for {
			events, inc, err := s.eventsAfter(ctx, id, after)
			switch {
			case ctx.Err() != nil:
				yield(nous.Event{}, ctx.Err())
				return
			case err != nil && !transient(err): // not found, corrupt, refused: it will not pass
				yield(nous.Event{}, err)
				return
			case err != nil: // the server is away: read again later
				failures++
			case incarnation != uuid.Nil && inc != incarnation:
				yield(nous.Event{}, fmt.Errorf("pgstore: log %s was deleted and saved again: %w", id, nous.ErrNotFound))
				return
			default:
				incarnation, failures = inc, 0
				for _, e := range events {
					after = e.Seq
					if !yield(e, nil) {
						return
					}
				}
				s.hub.saw(w, after, incarnation)
			}
			var retry <-chan time.Time
			if failures > 0 {
				retry = time.After(retryAfter[min(failures, len(retryAfter))-1])
			}
			select {
			case <-w.ch:
			case <-retry:
			case <-s.hub.gone:
				yield(nous.Event{}, fmt.Errorf("pgstore: watch log %s: %w", id, ErrClosed))
				return
			case <-ctx.Done():
				yield(nous.Event{}, ctx.Err())
				return
			}
		}
	}
}

// transient reports whether err is the server being away (a lost or
// refused connection, a shutdown), which a later try may not meet.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	return !errors.Is(err, nous.ErrNotFound) && !errors.Is(err, nous.ErrCorrupt) && !errors.Is(err, ErrClosed) &&
		!errors.Is(err, puddle.ErrClosedPool) // the caller closed the pool it gave New
}

// watchRead reads the incarnation and head of log $1, and its events
// after seq $2 up to that head.
const watchRead = `SELECT l.incarnation, l.head,
	ARRAY(SELECT e.body FROM nous_events e WHERE e.log_id = l.id AND e.seq > $2 AND e.seq <= l.head ORDER BY e.seq)
FROM nous_logs l WHERE l.id = $1`

// eventsAfter returns the stored events of log id after seq after, and
// the log's incarnation, in one statement.
func (s *Store) eventsAfter(ctx context.Context, id uuid.UUID, after int64) ([]nous.Event, uuid.UUID, error) {
	var incarnation uuid.UUID
	var head int64
	var bodies [][]byte
	err := s.pool.QueryRow(ctx, watchRead, id, after).Scan(&incarnation, &head, &bodies)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, uuid.Nil, fmt.Errorf("pgstore: log %s: %w", id, nous.ErrNotFound)
	}
	if err != nil {
		return nil, uuid.Nil, s.failed(ctx, err)
	}
	if want := max(head-after, 0); int64(len(bodies)) != want {
		return nil, uuid.Nil, fmt.Errorf("pgstore: log %s: %d events after seq %d, head %d: %w", id, len(bodies), after, head, nous.ErrCorrupt)
	}
	events := make([]nous.Event, len(bodies))
	for i, b := range bodies {
		seq := after + 1 + int64(i)
		if err := json.Unmarshal(b, &events[i]); err != nil {
			return nil, uuid.Nil, fmt.Errorf("pgstore: log %s: event %d: %v: %w", id, seq, err, nous.ErrCorrupt)
		}
		if events[i].Seq != seq {
			return nil, uuid.Nil, fmt.Errorf("pgstore: log %s: event %d has seq %d: %w", id, seq, events[i].Seq, nous.ErrCorrupt)
		}
	}
	return events, incarnation, nil
}

// subscribe registers a watcher of log id that has yielded the events up
// to seq after, and starts the listener and the poll if they are not
// running.
func (h *hub) subscribe(s *Store, id uuid.UUID, after int64) (*sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("pgstore: watch log %s: %w", id, ErrClosed)
	}
	w := &sub{ch: make(chan struct{}, 1), seen: after}
	if h.subs[id] == nil {
		h.subs[id] = map[*sub]struct{}{}
	}
	h.subs[id][w] = struct{}{}
	if !h.running {
		ctx, stop := context.WithCancel(context.Background())
		h.running, h.stop, h.done = true, stop, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			var poll sync.WaitGroup
			poll.Go(func() { h.poll(ctx, s) })
			h.listen(ctx, s)
			poll.Wait()
		}(h.done)
	}
	return w, nil
}

// saw records that watcher w has yielded the events up to seq seen of the
// log's incarnation: the poll hints it when the log moves on.
func (h *hub) saw(w *sub, seen int64, incarnation uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.seen, w.incarnation = seen, incarnation
}

// unsubscribe removes a watcher; the last one stops the listener, whose
// connection goes.
func (h *hub) unsubscribe(id uuid.UUID, w *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[id], w)
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
	if len(h.subs) == 0 && h.running {
		h.stop()
		h.running = false
	}
}

// listen holds a connection of its own that listens on nous_log, and
// hints the watchers of each log notified, until ctx is done. Each time it
// has connected, it hints every watcher: what was saved while it was not
// listening is read then.
func (h *hub) listen(ctx context.Context, s *Store) {
	for failures := 0; ctx.Err() == nil; failures++ {
		if failures > 0 {
			select {
			case <-time.After(retryAfter[min(failures, len(retryAfter))-1]):
			case <-ctx.Done():
				return
			}
		}
		conn, err := s.pool.Acquire(ctx)
		if errors.Is(err, puddle.ErrClosedPool) {
			h.wake(uuid.Nil, true) // the watchers read, and end with the error
			return
		}
		if err != nil {
			continue
		}
		c := conn.Hijack() // its own: LISTEN must not return to the pool
		if _, err := c.Exec(ctx, `LISTEN nous_log`); err == nil {
			failures = 0
			h.wake(uuid.Nil, true)
			for {
				n, err := c.WaitForNotification(ctx)
				if err != nil {
					break
				}
				if id, err := uuid.Parse(n.Payload); err == nil {
					h.wake(id, false)
				}
			}
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.Close(closeCtx)
		cancel()
	}
}

// pollHeads reads the head and incarnation of each of the logs $1.
const pollHeads = `SELECT id, head, incarnation FROM nous_logs WHERE id = ANY($1::uuid[])`

// poll reads, every s.pollEvery until ctx is done, the head and
// incarnation of every log watched, in one statement, and hints each
// watcher whose log is gone, is another incarnation, or has events after
// the last it yielded. A read that fails waits for the next: a watcher
// whose own read fails retries by itself.
func (h *hub) poll(ctx context.Context, s *Store) {
	ticker := time.NewTicker(s.pollEvery)
	defer ticker.Stop()
	type state struct {
		head        int64
		incarnation uuid.UUID
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		h.mu.Lock()
		ids := make([]pgtype.UUID, 0, len(h.subs))
		for id := range h.subs {
			ids = append(ids, nullable(id))
		}
		h.mu.Unlock()
		rows, err := s.pool.Query(ctx, pollHeads, ids)
		if err != nil {
			continue
		}
		logs := map[uuid.UUID]state{}
		var id, incarnation pgtype.UUID
		var head int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &head, &incarnation}, func() error {
			logs[id.Bytes] = state{head, incarnation.Bytes}
			return nil
		}); err != nil {
			continue
		}
		h.mu.Lock()
		for _, id := range ids {
			st, there := logs[id.Bytes]
			for w := range h.subs[id.Bytes] {
				if !there || st.head > w.seen || w.incarnation != uuid.Nil && w.incarnation != st.incarnation {
					w.hint()
				}
			}
		}
		h.mu.Unlock()
	}
}
