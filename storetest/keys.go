package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// committing is a store whose Append, once armed, stores the batch, then
// runs meanwhile (another writer's save, as it happens between a commit
// and a reply that never arrives), then fails as a lost connection would.
type committing struct {
	nous.Store
	armed     bool
	meanwhile func()
}

func (s *committing) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil || !s.armed {
		return err
	}
	s.armed = false
	if s.meanwhile != nil {
		s.meanwhile()
	}
	return errLostAck
}

// texts counts the user messages of c's log (its view may be compacted)
// by their text.
func texts(c *nous.Context) map[string]int {
	n := map[string]int{}
	for e := range c.Log().All() {
		if e.Message != nil && e.Message.Role == nous.RoleUser {
			n[e.Message.Content]++
		}
	}
	return n
}

// turn adds a user message of text to c and counts it in c's deps under
// "turns": the state update a turn makes.
func turn(t *testing.T, c *nous.Context, text string) {
	t.Helper()
	must(t, c.AddMessage(nous.UserMessage(text)))
	c.MergeDeps(map[string]any{"turns": turnsCounted(c) + 1})
}

// turnsCounted returns the deps' count of turns of c.
func turnsCounted(c *nous.Context) int {
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

// A save whose batch landed, its reply lost, while another writer saved
// after it (through the second handle where the backend has one), is
// found by its key: the retry conflicts with the batch taken as saved, and
// Refresh brings the other writer's turn, each turn and each state update
// stored once. Refresh finds it too, without a retry first; so does a
// retry after a state-only save.
func testLandedThenAnother(t *testing.T, a, b nous.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		recover func(c *nous.Context) error
	}{
		{"retried, then refreshed", func(c *nous.Context) error {
			if err := c.Save(ctx, a); !errors.Is(err, nous.ErrConflict) {
				return fmt.Errorf("the retry: %v, want ErrConflict", err)
			}
			return c.Refresh(ctx, a)
		}},
		{"refreshed", func(c *nous.Context) error { return c.Refresh(ctx, a) }},
		{"state only", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := conversation(t, 1)
			must(t, c.Save(ctx, a))
			other := load(t, b, c.Log().ID())
			s := &committing{Store: a, armed: true, meanwhile: func() {
				must(t, other.Refresh(ctx, b)) // it sees the batch that landed
				turn(t, other, "theirs")
				must(t, other.Save(ctx, b))
			}}
			if tc.recover == nil { // a state-only batch lands, then another's
				c.AgentName = "mine"
				if err := c.Save(ctx, s); !errors.Is(err, errLostAck) {
					t.Fatalf("Save with its reply lost: %v", err)
				}
				must(t, c.Refresh(ctx, a))
				if c.AgentName != "mine" || texts(c)["theirs"] != 1 {
					t.Fatalf("after Refresh: agent %q, texts %v: want mine, and their turn", c.AgentName, texts(c))
				}
				sameContext(t, load(t, a, c.Log().ID()), c)
				return
			}
			turn(t, c, "mine")
			if err := c.Save(ctx, s); !errors.Is(err, errLostAck) {
				t.Fatalf("Save with its reply lost: %v", err)
			}
			must(t, tc.recover(c))
			if n := texts(c); n["mine"] != 1 || n["theirs"] != 1 {
				t.Fatalf("after the recovery: %v, want each turn once", n)
			}
			sameContext(t, load(t, a, c.Log().ID()), c)
			turn(t, c, "next")
			must(t, c.Save(ctx, a))
			got := load(t, b, c.Log().ID())
			sameContext(t, c, got)
			if n := texts(got); n["mine"] != 1 || n["theirs"] != 1 || n["next"] != 1 || turnsCounted(got) != 3 {
				t.Fatalf("stored %v with %d turns counted, want each turn once, and 3 counted", n, turnsCounted(got))
			}
		})
	}
}

// A turn saved under a key of the application's (SetBatchKey) whose reply
// was lost is known as stored to a process that starts again and loads the
// log (HasBatch), and a save of the same key again, from a context that
// loaded the log before or after it landed, stores nothing.
func testBatchKeys(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	stale := load(t, s, c.Log().ID())
	turn(t, c, "job 1")
	c.SetBatchKey("job-1")
	lost := &committing{Store: s, armed: true}
	if err := c.Save(ctx, lost); !errors.Is(err, errLostAck) {
		t.Fatalf("Save with its reply lost: %v", err)
	}
	// The process dies here. Another starts again from the store.
	restarted := load(t, s, c.Log().ID())
	if !restarted.HasBatch("job-1") || restarted.HasBatch("job-2") || restarted.HasBatch("") {
		t.Fatal("a loaded context does not know which batch keys its log holds")
	}
	turn(t, restarted, "job 1")
	restarted.SetBatchKey("job-1")
	refused(t, "a save of a key the loaded log holds", restarted, nous.ErrLanded, func() error { return restarted.Save(ctx, s) })
	turn(t, stale, "job 1")
	stale.SetBatchKey("job-1")
	if err := stale.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a stale context's save of a stored key: %v, want ErrConflict", err)
	}
	// The context that lost the reply retries: its batch is there.
	must(t, c.Save(ctx, s))
	if !c.HasBatch("job-1") {
		t.Fatal("a batch found landed is not known by its key")
	}
	again := load(t, s, c.Log().ID())
	sameContext(t, c, again)
	if n := texts(again); n["job 1"] != 1 {
		t.Fatalf("stored %v, want job 1 once", n)
	}
	// A key is the next batch's only: the one after gets a random key.
	turn(t, again, "job 2")
	again.SetBatchKey("job-2")
	must(t, again.Save(ctx, s))
	turn(t, again, "job 3")
	must(t, again.Save(ctx, s))
	keys := batchKeys(t, load(t, s, c.Log().ID()))
	if len(keys) < 3 || !slices.Contains(keys, "job-1") || !slices.Contains(keys, "job-2") || keys[len(keys)-1] == "job-2" {
		t.Fatalf("stored batch keys %q: want job-1, job-2 and a random one after", keys)
	}
	bad := strings.Repeat("k", nous.MaxKeyBytes+1)
	turn(t, again, "a bad key")
	again.SetBatchKey(bad)
	refused(t, "a key over MaxKeyBytes", again, nous.ErrInvalidKey, func() error { return again.Save(ctx, s) })
	again.SetBatchKey("nul\x00")
	refused(t, "a key with NUL", again, nous.ErrInvalidKey, func() error { return again.Save(ctx, s) })
}

// batchKeys returns the keys of the batch events of c's log, in order.
func batchKeys(t *testing.T, c *nous.Context) []string {
	t.Helper()
	var keys []string
	for e := range c.Log().All() {
		if e.Type != nous.EventBatch {
			continue
		}
		list, ok := e.Data[nous.DataKeys].([]any)
		if !ok || len(list) != 1 {
			t.Fatalf("batch event %d: keys %v, want one", e.Seq, e.Data[nous.DataKeys])
		}
		keys = append(keys, list[0].(string))
	}
	return keys
}

// Keys live in the log: every batch ends with a batch event of its key,
// even a batch that changes only the state, so that each save moves the
// head; a key another writer stores meanwhile makes a save conflict, and
// the save after a Refresh fail with nous.ErrLanded, storing nothing; the
// keys of one log are not another's.
func testKeysInLog(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	var want []string
	for i := range 6 {
		if i%3 != 2 {
			turn(t, c, fmt.Sprint("turn ", i))
		} else {
			c.Iteration++ // a batch of the state alone
		}
		head := c.Log().Len()
		key := fmt.Sprint("key-", i)
		c.SetBatchKey(key)
		must(t, c.Save(ctx, s))
		want = append(want, key)
		if e, ok := c.Log().Event(int64(c.Log().Len())); c.Log().Len() <= head || !ok || e.Type != nous.EventBatch {
			t.Fatalf("save %d: the log does not end with a batch event: head %d, was %d", i, c.Log().Len(), head)
		}
	}
	if got := batchKeys(t, load(t, s, c.Log().ID())); !slices.Equal(got, want) {
		t.Fatalf("stored batch keys %q, want %q", got, want)
	}
	a, b := load(t, s, c.Log().ID()), load(t, s, c.Log().ID())
	turn(t, a, "job")
	a.SetBatchKey("job")
	turn(t, b, "job")
	b.SetBatchKey("job")
	must(t, a.Save(ctx, s))
	refused(t, "a save of a key another writer stored meanwhile", b, nous.ErrConflict, func() error { return b.Save(ctx, s) })
	b = load(t, s, c.Log().ID())
	turn(t, b, "job")
	b.SetBatchKey("job")
	refused(t, "a save of a key the log holds", b, nous.ErrLanded, func() error { return b.Save(ctx, s) })
	other := conversation(t, 1) // keys are a log's own: another log may hold the same
	other.SetBatchKey("key-3")
	must(t, other.Save(ctx, s))
	if !other.HasBatch("key-3") || other.HasBatch("key-4") {
		t.Fatal("a log knows of another's keys, or not of its own")
	}
}

// unsent is a store whose Append, once armed, fails before the store has
// the batch, as a connection lost on the way would.
type unsent struct {
	nous.Store
	armed bool
}

func (s *unsent) Append(ctx context.Context, b nous.Batch) error {
	if s.armed {
		s.armed = false
		return errLostAck
	}
	return s.Store.Append(ctx, b)
}

// A save that never reached the store, then one after more turns that
// landed with its reply lost: the second sent the first's events again,
// and is the one found landed, so the retry stores nothing and the
// context saves on.
func testLaterAttemptLanded(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	turn(t, c, "first")
	if err := c.Save(ctx, &unsent{Store: s, armed: true}); !errors.Is(err, errLostAck) {
		t.Fatalf("a save that never reached the store: %v", err)
	}
	turn(t, c, "second")
	if err := c.Save(ctx, &committing{Store: s, armed: true}); !errors.Is(err, errLostAck) {
		t.Fatalf("a save with its reply lost: %v", err)
	}
	n := c.Log().Len()
	must(t, c.Save(ctx, s))
	turn(t, c, "third")
	must(t, c.Save(ctx, s))
	got := load(t, s, c.Log().ID())
	sameContext(t, c, got)
	if c.Log().Len() <= n || texts(got)["first"] != 1 || texts(got)["second"] != 1 {
		t.Fatalf("stored %v", texts(got))
	}
}

// Writers of one log take turns at random through stores that lose
// replies: some batches fail before the store has them, some land and
// lose the reply, some land while another writer saves before the reply
// is lost. Each writer keys its turns and recovers as Save's doc says: a
// failed save is retried; on a conflict, Refresh; when that conflicts too,
// Load and redo the turns the loaded log has no batch of. At the end every
// turn is stored once, and the count of turns in the deps, which each turn
// adds one to, is the number of turns.
func testLostRepliesRandom(t *testing.T, handles []nous.Store) {
	ctx := context.Background()
	first := conversation(t, 1)
	first.SetBatchKey("seed")
	must(t, first.Save(ctx, handles[0]))
	r := &lostReplies{t: t, ctx: ctx, rng: rand.New(rand.NewSource(7)), id: first.Log().ID()}
	r.writers = make([]*replyWriter, 3)
	for i := range r.writers {
		h := handles[i%len(handles)]
		r.writers[i] = &replyWriter{c: load(t, h, r.id), s: h}
	}
	for range 60 {
		w := r.writers[r.rng.Intn(len(r.writers))]
		if len(w.pending) == 0 && r.rng.Intn(4) == 0 {
			if err := w.c.Refresh(ctx, w.s); err != nil && !errors.Is(err, nous.ErrConflict) {
				t.Fatalf("refresh: %v", err)
			}
		}
		r.newTurn(w)
		r.save(w, 0)
	}
	for _, w := range r.writers { // the turns left pending: saved, or redone
		for len(w.pending) > 0 {
			r.save(w, 1)
		}
	}
	r.check(handles[0])
}

// lostReplies is a run of testLostRepliesRandom: the log its writers take
// turns on, the writers, the keys of the turns taken so far, and the
// random source, seeded, that picks every step (the order of its draws is
// the run).
type lostReplies struct {
	t       *testing.T
	ctx     context.Context
	rng     *rand.Rand
	id      uuid.UUID
	writers []*replyWriter
	done    []string // the keys of the turns taken, in order
}

// replyWriter is a writer of a lostReplies run: its context of the log,
// the store it saves to, and its turns not yet known stored.
type replyWriter struct {
	c       *nous.Context
	s       nous.Store
	pending []string // its turns not yet known stored, in order
}

// newTurn takes a new turn in w, the next of the run, keyed by its number.
func (r *lostReplies) newTurn(w *replyWriter) {
	k := fmt.Sprintf("t%d", len(r.done))
	r.done = append(r.done, k)
	r.keyedTurn(w, k)
}

// keyedTurn adds the turn of key k to w's context, its batch keyed k, and
// to w's pending turns; it saves nothing.
func (r *lostReplies) keyedTurn(w *replyWriter, k string) {
	turn(r.t, w.c, k)
	w.c.SetBatchKey(k)
	w.pending = append(w.pending, k)
}

// faulty returns the store w's next save goes through, picked at random:
// w's store as it is (three times in five), one that stores the batch and
// loses the reply, or one that stores the batch, then lets another
// writer take a turn and save it, then loses the reply (only in a save at
// depth 0, not one made while recovering, and when the writer drawn is
// not w; else the reply is only lost).
func (r *lostReplies) faulty(w *replyWriter, depth int) *committing {
	s := &committing{Store: w.s}
	switch r.rng.Intn(5) {
	case 0:
		s.armed = true // lands, the reply lost
	case 1:
		s.armed = true
		if depth == 0 {
			o := r.writers[r.rng.Intn(len(r.writers))]
			if o != w {
				s.meanwhile = func() { // another writer's turn lands first
					r.newTurn(o)
					r.save(o, depth+1)
				}
			}
		}
	}
	return s
}

// save saves w's context through a store that may lose the reply, and
// recovers as Save's doc says; a save whose reply was lost is left, at
// random, for later (the next turn's save, or a refresh, finds it). When
// it returns, w's turns are stored, or pending. An error but a lost
// reply or a conflict fails the test.
func (r *lostReplies) save(w *replyWriter, depth int) {
	err := w.c.Save(r.ctx, r.faulty(w, depth))
	if err == nil {
		w.pending = w.pending[:0]
		return
	}
	if errors.Is(err, errLostAck) && r.rng.Intn(2) == 0 {
		return // left for later: the next turn's save, or a refresh, finds it
	}
	for errors.Is(err, errLostAck) {
		err = w.c.Save(r.ctx, w.s)
	}
	if err == nil {
		w.pending = w.pending[:0]
		return
	}
	if !errors.Is(err, nous.ErrConflict) {
		r.t.Fatalf("save: %v", err)
	}
	if err := w.c.Refresh(r.ctx, w.s); err == nil {
		w.pending = w.pending[:0]
		return
	} else if !errors.Is(err, nous.ErrConflict) {
		r.t.Fatalf("refresh: %v", err)
	}
	r.redo(w, depth)
}

// redo recovers w from a save and a refresh that both conflicted: it
// loads the log, and takes again, and saves, each of w's pending turns
// the loaded log has no batch of, in their order.
func (r *lostReplies) redo(w *replyWriter, depth int) {
	c := load(r.t, w.s, r.id)
	var redo []string
	for _, k := range w.pending {
		if !c.HasBatch(k) {
			redo = append(redo, k)
		}
	}
	w.c, w.pending = c, nil
	for _, k := range redo {
		r.keyedTurn(w, k)
		r.save(w, depth+1)
	}
}

// check loads the log from s and checks the end of the run: each turn
// taken is stored once, with a batch of its key, and the deps count every
// turn.
func (r *lostReplies) check(s nous.Store) {
	got := load(r.t, s, r.id)
	n := texts(got)
	for _, k := range r.done {
		if n[k] != 1 {
			r.t.Errorf("turn %s stored %d times", k, n[k])
		}
		if !got.HasBatch(k) {
			r.t.Errorf("turn %s has no batch of its key", k)
		}
	}
	if turnsCounted(got) != len(r.done) {
		r.t.Errorf("the deps count %d turns, %d were stored", turnsCounted(got), len(r.done))
	}
}
