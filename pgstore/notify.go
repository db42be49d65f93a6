package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/puddle/v2"
)

// notifyEvery is the least time between two transactions of notifications
// a Store sends: the logs it saves while one is sent, or within this time
// after, share the next. The first save after a quiet spell is notified
// at once.
var notifyEvery = 2 * time.Millisecond

// notifyTimeout bounds one transaction of notifications.
const notifyTimeout = 5 * time.Second

// notifyLogs notifies nous_log with each of $1, the IDs of logs saved or
// deleted, in one statement and so one transaction. The server takes its
// lock of the notification queue, cluster-wide, from that transaction's
// commit until its end; synchronous_commit is off for it, so that it does
// not hold the lock while its commit is flushed to disk: it changes no
// table, and a notification a crash of the server loses is one whose
// listeners lose their connections too, and read again when they are back.
const notifyLogs = `SELECT set_config('synchronous_commit', 'off', true), pg_notify('nous_log', t.id::text)
FROM unnest($1::uuid[]) AS t(id)`

// notifier notifies the logs a Store saved or deleted, after their
// transactions committed, outside them: a save that notified in its own
// transaction would hold the server's lock of the notification queue while
// its commit is flushed, and so commit after every other such save in the
// cluster, one at a time. A goroutine sends them, while there are any to
// send, one transaction for all the logs saved since the last.
type notifier struct {
	mu      sync.Mutex
	pending map[uuid.UUID]struct{}
	running bool // the sender is at work
	closed  bool
	stop    chan struct{} // closed by close: the sender waits no more
	sender  sync.WaitGroup
}

func (n *notifier) init() {
	n.pending = map[uuid.UUID]struct{}{}
	n.stop = make(chan struct{})
}

// add notifies log id soon, and starts the sender when it is not at work.
// After close it does nothing: a save racing Close is notified as one of a
// process that ended right after it is (see the package doc).
func (n *notifier) add(s *Store, id uuid.UUID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.pending[id] = struct{}{}
	if !n.running {
		n.running = true
		n.sender.Add(1)
		go n.send(s)
	}
}

// send sends what is pending, then waits notifyEvery and sends what came
// meanwhile, until nothing came. A transaction that failed is sent again,
// with the logs added since, after retryAfter; once the Store is closed,
// or its pool is, it is dropped.
func (n *notifier) send(s *Store) {
	defer n.sender.Done()
	failures := 0
	for {
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		ids := make([]pgtype.UUID, 0, len(n.pending)) // not uuid.UUID, which pgx encodes as a string, then parses
		for id := range n.pending {
			ids = append(ids, nullable(id))
		}
		clear(n.pending)
		closed := n.closed
		n.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		_, err := s.pool.Exec(ctx, notifyLogs, ids)
		cancel()
		wait := notifyEvery
		switch {
		case err == nil:
			failures = 0
		case closed || errors.Is(err, puddle.ErrClosedPool):
			// Nobody will send them: watchers in other processes find
			// those saves at their next poll.
		default:
			n.mu.Lock()
			for _, id := range ids {
				n.pending[id.Bytes] = struct{}{}
			}
			n.mu.Unlock()
			failures++
			wait = retryAfter[min(failures, len(retryAfter))-1]
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-n.stop:
		}
		timer.Stop()
	}
}

// close sends what is pending, once, and returns when the sender is done.
func (n *notifier) close() {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.stop)
	}
	n.mu.Unlock()
	n.sender.Wait()
}
