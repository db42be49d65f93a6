package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// raceAppends makes writers race appends from one read position, rounds
// times, and returns the errors of the losers that are not ErrConflict.
func raceAppends(t *testing.T, stores []*pgstore.Store, rounds int) []error {
	id := uuid.Must(uuid.NewV7())
	must(t, stores[0].Append(bg, firstBatch(id, uuid.New(), 1)))
	var bad []error
	var mu sync.Mutex
	for range rounds {
		st := readAll(t, stores[0], id)
		var wg sync.WaitGroup
		var wins atomic.Int64
		for _, s := range stores {
			wg.Go(func() {
				err := s.Append(bg, nextBatch(st, 3))
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
	if int64(len(final.Events)) != final.Info.Head || final.Info.Head != 1+3*int64(rounds) {
		t.Fatalf("head %d after %d rounds of 3 events, %d events", final.Info.Head, rounds, len(final.Events))
	}
	return bad
}

// Of writers racing from one head, one wins and every loser gets
// ErrConflict, not a serialization failure, under READ COMMITTED and
// under a database whose default isolation is REPEATABLE READ (ALTER
// DATABASE ... SET default_transaction_isolation).
func TestRaceLosersConflict(t *testing.T) {
	for name, params := range map[string]string{
		"read committed":  "",
		"repeatable read": "&default_transaction_isolation=repeatable%20read",
	} {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			var stores []*pgstore.Store
			for range 8 {
				stores = append(stores, open(t, dsn))
			}
			if bad := raceAppends(t, stores, 40); len(bad) > 0 {
				t.Fatalf("%d losers without ErrConflict, e.g. %v", len(bad), bad[0])
			}
		})
	}
}

// Under SERIALIZABLE, writers of different logs, one writer per log, never
// get ErrConflict: the server's serialization failures, which its
// predicate locks on shared pages raise without any writer of the log in
// the way, are retried while the log is as the batch expects.
func TestSerializableLoneWritersNeverConflict(t *testing.T) {
	s := open(t, freshSchema(t)+"&default_transaction_isolation=serializable")
	var wrong atomic.Int64
	var example atomic.Value
	deadline := time.Now().Add(4 * time.Second)
	for wrong.Load() == 0 && time.Now().Before(deadline) {
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				id := uuid.Must(uuid.NewV7())
				for { // the first batch
					err := s.Append(bg, firstBatch(id, uuid.New(), 2))
					if err == nil {
						break
					}
					if _, rerr := s.Read(bg, id, 0); errors.Is(err, nous.ErrConflict) && errors.Is(rerr, nous.ErrNotFound) {
						wrong.Add(1) // "another writer created it first": nobody did
						example.Store(err.Error())
						continue
					}
					t.Error(err)
					return
				}
				st := readAll(t, s, id)
				for range 60 {
					if err := s.Append(bg, nextBatch(st, 2)); err != nil {
						if now := readAll(t, s, id); errors.Is(err, nous.ErrConflict) && now.Info.Head == st.Info.Head {
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

// Appends racing Delete and re-creation of the same ID leave the log
// whole: its events are 1..head, or, deleted last, none are left.
func TestDeleteRecreateRaceLeavesLogsWhole(t *testing.T) {
	dsn := freshSchema(t)
	s1, s2 := open(t, dsn), open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	must(t, s1.Append(bg, firstBatch(id, uuid.New(), 2)))
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				st, err := s1.Read(ctx, id, 0)
				if err != nil {
					continue
				}
				err = s1.Append(ctx, nextBatch(st, 3))
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
			err = s2.Append(ctx, firstBatch(id, uuid.New(), 1))
			if err != nil && !errors.Is(err, nous.ErrConflict) && ctx.Err() == nil {
				t.Errorf("create: %v", err)
			}
		}
	})
	wg.Wait()
	conn := connect(t, dsn)
	var exists bool
	must(t, conn.QueryRow(bg, `SELECT EXISTS (SELECT 1 FROM nous_logs WHERE id = $1)`, id).Scan(&exists))
	var head, events, maxSeq int64
	must(t, conn.QueryRow(bg, `SELECT coalesce((SELECT head FROM nous_logs WHERE id = $1), 0), count(*), coalesce(max(seq), 0)
		FROM nous_events WHERE log_id = $1`, id).Scan(&head, &events, &maxSeq))
	if head != events || head != maxSeq || exists != (head > 0) {
		t.Fatalf("log there: %v, head %d, %d events up to seq %d", exists, head, events, maxSeq)
	}
	if exists { // and it reads back as it is stored
		st := readAll(t, s1, id)
		if int64(len(st.Events)) != head {
			t.Fatalf("read %d events of head %d", len(st.Events), head)
		}
	}
}

// Two replicas, each with its own pool, serve turns of one session: each
// brings its context up to date with Refresh, adds a turn (a tool call
// recorded in it) and saves, and retries on a conflict. Every turn and
// every call is stored once, in some order, with no gap; the watcher of a
// third replica sees each event once.
func TestReplicasStoreEveryTurnOnce(t *testing.T) {
	dsn := freshSchema(t)
	a, b, watcher := open(t, dsn), open(t, dsn), open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.Save(bg, a))
	id := c.Log().ID()
	const turns = 20
	watchCtx, stop := context.WithCancel(bg)
	defer stop()
	seen := make(chan int64, 1000)
	go func() {
		defer close(seen)
		for e, err := range watcher.Watch(watchCtx, id, 0) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	var next, conflicts atomic.Int64
	var wg sync.WaitGroup
	for _, s := range []*pgstore.Store{a, b, a, b} {
		wg.Go(func() {
			mine, err := nous.Load(bg, s, id)
			if err != nil {
				t.Error(err)
				return
			}
			for {
				n := next.Add(1)
				if n > turns {
					return
				}
				for {
					if err := mine.Refresh(bg, s); err != nil {
						t.Error(err)
						return
					}
					turn(t, mine, int(n))
					err := mine.Save(bg, s)
					if err == nil {
						break
					}
					if !errors.Is(err, nous.ErrConflict) {
						t.Error(err)
						return
					}
					conflicts.Add(1)
					if mine, err = nous.Load(bg, s, id); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	final, err := nous.Load(bg, b, id)
	must(t, err)
	got := map[string]int{}
	for _, m := range final.All() {
		got[m.Content]++
	}
	for _, tc := range final.ToolCalls {
		got[tc.ID]++
	}
	for i := 1; i <= turns; i++ {
		if q := fmt.Sprint("question ", i); got[q] != 1 {
			t.Errorf("%q stored %d times", q, got[q])
		}
		if call := fmt.Sprint("call_", i); got[call] != 1 {
			t.Errorf("tool call %s stored %d times", call, got[call])
		}
	}
	if len(final.ToolCalls) != turns {
		t.Errorf("%d tool calls stored, want %d", len(final.ToolCalls), turns)
	}
	want := int64(final.Log().Len())
	for seq := int64(1); seq <= want; seq++ {
		select {
		case s := <-seen:
			if s != seq {
				t.Fatalf("watched seq %d, want %d", s, seq)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("watched up to seq %d of %d", seq-1, want)
		}
	}
	t.Logf("%d turns, %d conflicts", turns, conflicts.Load())
}

// A save racing a delete of its log leaves no events behind: the log is
// gone whole, or the save came after it and finds it missing.
func TestSaveRacingDeleteLeavesNoEvents(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	for round := range 20 {
		c := nous.NewContext(nous.WithLogger(quiet))
		turn(t, c, 0)
		must(t, c.Save(bg, s))
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 1; i < 10; i++ {
				turn(t, c, i)
				if err := c.Save(bg, s); err != nil {
					if !errors.Is(err, nous.ErrNotFound) {
						t.Errorf("round %d: save: %v", round, err)
					}
					return
				}
			}
		})
		time.Sleep(time.Duration(round) * time.Millisecond)
		must(t, s.Delete(bg, c.Log().ID()))
		wg.Wait()
	}
	var orphans int
	must(t, connect(t, dsn).QueryRow(bg, `SELECT count(*) FROM nous_events e WHERE NOT EXISTS (SELECT 1 FROM nous_logs l WHERE l.id = e.log_id)`).Scan(&orphans))
	if orphans != 0 {
		t.Fatalf("%d events of deleted logs are left", orphans)
	}
}

// Four writers on two pools take 50 turns each on one session, each save
// under a deadline that often ends it in the middle, before or after the
// commit. Each keys its turns and recovers as Save's doc says: a save cut
// short is sent again; on a conflict, Refresh; when that conflicts too,
// Load and redo the turns the log has no batch of. Every turn is stored
// once, and the count of turns in the deps, which each turn adds one to,
// is the number of turns.
func TestCutSavesStoreEachTurnOnce(t *testing.T) {
	dsn := freshSchema(t)
	stores := []*pgstore.Store{open(t, dsn), open(t, dsn)}
	first := nous.NewContext(nous.WithLogger(quiet))
	must(t, first.Save(bg, stores[0]))
	id := first.Log().ID()
	const writers, turns = 4, 50
	var cut atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := stores[w%len(stores)]
			c, err := nous.Load(bg, s, id)
			if err != nil {
				t.Error(err)
				return
			}
			var pending []string // this writer's turns not yet known stored
			add := func(key string) {
				must(t, c.AddMessage(nous.UserMessage(key)))
				c.MergeDeps(map[string]any{"turns": counted(c) + 1})
				c.SetBatchKey(key)
				pending = append(pending, key)
			}
			save := func() error {
				for attempt := 0; ; attempt++ {
					ctx, cancel := context.WithTimeout(bg, time.Duration(attempt%4)*700*time.Microsecond)
					if attempt > 20 {
						ctx, cancel = context.WithCancel(bg)
					}
					err := c.Save(ctx, s)
					cancel()
					if err == nil || !errors.Is(err, context.DeadlineExceeded) {
						return err
					}
					cut.Add(1)
				}
			}
			for i := range turns {
				add(fmt.Sprintf("w%d t%d", w, i))
				for {
					err := save()
					if err == nil {
						pending = pending[:0]
						break
					}
					if !errors.Is(err, nous.ErrConflict) {
						t.Errorf("save: %v", err)
						return
					}
					if err := c.Refresh(bg, s); err == nil {
						pending = pending[:0]
						break
					} else if !errors.Is(err, nous.ErrConflict) {
						t.Errorf("refresh: %v", err)
						return
					}
					if c, err = nous.Load(bg, s, id); err != nil {
						t.Errorf("load: %v", err)
						return
					}
					redo := pending
					pending = nil
					for _, k := range redo {
						if !c.HasBatch(k) {
							add(k)
						}
					}
					if len(pending) == 0 {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	got, err := nous.Load(bg, stores[1], id)
	must(t, err)
	seen := map[string]int{}
	for _, m := range got.Messages() {
		seen[m.Content]++
	}
	for w := range writers {
		for i := range turns {
			if k := fmt.Sprintf("w%d t%d", w, i); seen[k] != 1 {
				t.Errorf("turn %s stored %d times", k, seen[k])
			}
		}
	}
	if counted(got) != writers*turns || got.Len() != writers*turns {
		t.Errorf("%d messages, the deps count %v turns; want %d", got.Len(), got.Deps["turns"], writers*turns)
	}
	t.Logf("%d saves cut short by their deadline", cut.Load())
}

// counted returns the count of turns in c's deps.
func counted(c *nous.Context) int {
	switch n := c.Deps["turns"].(type) {
	case float64:
		return int(n)
	case int:
		return n
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}
