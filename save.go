package nous

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// Save stores what changed in c since it was last loaded, saved or
// refreshed: the events after that seq (tool calls recorded since
// included: they are events) and the state (the other plain fields, as
// Serialize writes them, secrets redacted). The first save of a context
// creates its log, with its ID, and for a fork ([Context.Clone]) its parent
// and fork seq; a fork's first save stores every event, its parent's
// included, so it loads whatever later happens to the parent. A save costs
// the new events and the state, whatever the length of the log. A save with
// nothing new writes nothing and does not contact s, so it returns nil even
// when another writer saved the log since: c has nothing the store lacks,
// and the conflict shows at the first save with something new (or at
// Refresh, which brings the other writer's turns).
//
// When another writer saved the log since c last saw it, a save with
// something new stores nothing and returns an error wrapping
// [ErrConflict]; c is unchanged. The way on is
// to redo the turn on the stored log: [Context.Refresh] (when c has no
// unsaved changes) or [Load], then add the turn's messages again and save.
// A context that was never saved to s (a new one, a clone, one from
// Deserialize) conflicts when its log is already there. A context knows its
// log as one store holds it: saving a context loaded from or saved to one
// store into another is an error wrapping [ErrNotFound]; to copy a session
// to another store, save Deserialize(c.Serialize()) there. A save with
// nothing new skips only the store handle c last used; given another
// handle, it stores its state again, which tells whether the log is there.
//
// A save ends its batch with events of its own: what was changed in Deps
// directly since the last save, as a deps_update event (see
// [EventDepsUpdate]), so that the log holds every change of the deps, and
// an [EventBatch] naming the batch by a key, the one given by
// [Context.SetBatchKey] or a random one, so that every batch moves the
// head. They are c's once the store may hold them: a save refused for sure
// (a conflict, a log not found) takes them back, and c is as it was.
//
// A save whose outcome is unknown (a connection dropped after the commit,
// ctx done as the store wrote) keeps them, and returns the error; c is
// otherwise as it was. The next save of c, or [Context.Refresh], finds a
// batch of c's that landed among the stored events, byte for byte, and
// takes it as saved, whatever other writers saved since: retrying a
// failed save, at once or after more turns, stores nothing twice. When
// another writer saved after it, the retry returns an error wrapping
// [ErrConflict] with c's batch taken as saved, and a Refresh brings the
// other writer's batches, c's turn kept once. Saving a log that was
// deleted is an error wrapping [ErrNotFound]. Calls appended to ToolCalls
// directly are recorded first, and an edited list is refused with
// [ErrToolCallsEdited] (see [Context.AddToolCall]). Secrets and values
// JSON cannot hold are dropped, and the deps' secret values masked, as
// Serialize drops and masks them.
func (c *Context) Save(ctx context.Context, s Store) error {
	return c.save(ctx, s, false)
}

// SetBatchKey sets the key of the next batch Save stores: an
// application's own name for the turn, such as the ID of the request or
// job that made it, which the batch's [EventBatch] records. A process that
// restarts after a crash, not knowing whether its last save landed, loads
// the log and asks [Context.HasBatch]; a save of a key the log holds
// already fails with [ErrLanded] and stores nothing (one that another
// writer stores meanwhile makes the save conflict, and the save after a
// Refresh fail with ErrLanded). The key is checked by [CheckKey] when Save
// sends it, and is dropped once a batch with it is stored; "" goes back to
// random keys.
func (c *Context) SetBatchKey(key string) { c.persist.batchKey = key }

// HasBatch reports whether the log, as c last loaded, saved or refreshed
// it, holds a batch with key key ([Context.SetBatchKey]): its turn is
// stored. A clone, which was never saved, knows of none.
func (c *Context) HasBatch(key string) bool {
	_, ok := c.persist.synced.keys[key]
	return ok && key != ""
}

// save is Save; retried says it follows a batch found landed, which it does
// not look for again.
func (c *Context) save(ctx context.Context, s Store, retried bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: save: %w", err)
	}
	c.ready()
	sp := &c.persist.synced
	if sp.store == nil { // a first save: the name and labels are the log's from then on, never changed
		if err := CheckName(c.log.name, c.log.labels); err != nil {
			return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
		}
	}
	if err := CheckKey(c.persist.batchKey); err != nil {
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	if err := c.recordToolCalls(false); err != nil {
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	ops, deps, err := c.depsChanges()
	if err != nil {
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	san := c.sanitizer()
	state := c.savedState(san)
	if c.log.len() == sp.head && len(ops) == 0 && bytes.Equal(state, sp.state) && sameStore(s, sp.store) && len(sp.attempts) == 0 {
		// Only on the handle c last used: another may lack the log; nor
		// after a batch that may have landed.
		c.recordDeps(nil, deps)
		return nil
	}
	if seq, ok := sp.keys[c.persist.batchKey]; ok && c.persist.batchKey != "" {
		return fmt.Errorf("nous: save log %s: the batch key %q names the batch stored up to seq %d: %w", c.log.id, c.persist.batchKey, seq, ErrLanded)
	}
	// The batch's own events (the deps changed directly, the batch event)
	// are c's once the store may hold them: when a save fails for sure,
	// they go, and c is as it was.
	kept, undo := c.log.len(), batchUndo{log: c.log, deps: c.depsRec}
	c.recordDeps(ops, deps)
	err = c.endBatch()
	var events []json.RawMessage
	if err == nil {
		events, err = c.encodeEvents(san, sp.head, c.log.len()) // an error is a bug, as in Serialize
	}
	if err == nil && sp.store == nil && sp.incarnation == uuid.Nil { // kept from a first save that failed: its retry is the same batch
		sp.incarnation, err = uuid.NewRandom()
	}
	if err != nil {
		c.undo(&undo)
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	c.warnDropped(san, "Save")
	head := c.log.len()
	info := c.logInfo(head)
	info.Incarnation = sp.incarnation
	err = s.Append(ctx, Batch{Info: info, After: sp.head, State: state, Events: events})
	switch {
	case err == nil:
		c.observeFrom(kept)
		c.markSynced(s, &info, state)
		if c.HasBatch(c.persist.batchKey) {
			c.persist.batchKey = ""
		}
		return nil
	case !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalidName):
		// Its outcome is unknown: the next save, or Refresh, looks for it.
		c.observeFrom(kept)
		if len(sp.attempts) == maxAttempts {
			sp.attempts = slices.Delete(sp.attempts, 0, 1)
		}
		sp.attempts = append(sp.attempts, attempt{head: head, state: state, mask: san.Mask})
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	c.undo(&undo)
	if errors.Is(err, ErrConflict) && !retried && len(sp.attempts) > 0 {
		return c.saveAfterLanded(ctx, s, err, events, san.Mask)
	}
	return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
}

// saveAfterLanded is a save refused with err, a conflict, once its own
// events are taken back, when an earlier batch of c's may have landed: it
// looks for it among those stored, mine being c's events as the save
// encoded them, masked by mask, and saves what came after it when the
// store has nothing else.
func (c *Context) saveAfterLanded(ctx context.Context, s Store, err error, mine []json.RawMessage, mask *jsonx.Masker) error {
	if st, rerr := s.Read(ctx, c.log.id, c.persist.synced.head); rerr == nil {
		if at, ok := c.takeLanded(s, &st, mine, mask); ok {
			if st.Info.Head == at {
				return c.save(ctx, s, true) // what came after the batch that landed
			}
			return fmt.Errorf("nous: save log %s: its batch landed up to seq %d, and the store moved on to seq %d since: Refresh to take the other batches: %w",
				c.log.id, at, st.Info.Head, ErrConflict)
		}
	}
	return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
}

// encodeEvents returns the JSON of the events of c's log after seq from up
// to seq to, sanitized by san, as a store keeps them.
func (c *Context) encodeEvents(san *sanitizer, from, to int64) ([]json.RawMessage, error) {
	return encodeEach(int(to-from), func(jw *jsonWriter, i int) {
		e := san.event(c.log.shared(from + 1 + int64(i)))
		jw.event(&e)
	})
}

// sameStore reports whether a and b are surely the same store handle: of
// one comparable type, and equal.
func sameStore(a, b Store) bool {
	return a != nil && b != nil && reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.ValueOf(a).Comparable() && a == b
}

// markSynced records that c's store s now holds c's log up to info's head,
// with state, and adds the keys of the batches c's events up to that head
// hold to those c knows of.
func (c *Context) markSynced(s Store, info *LogInfo, state []byte) {
	sp := &c.persist.synced
	keys, from := sp.keys, sp.head
	if keys == nil || sp.incarnation != info.Incarnation {
		keys, from = map[string]int64{}, 0
	}
	for seq := from + 1; seq <= info.Head; seq++ {
		r := c.log.rec(seq)
		if r.typ != EventBatch {
			continue
		}
		names, _ := batchKeys(r.typ, r.data) // checked as the event was read or made
		for _, k := range names {
			keys[k] = seq
		}
	}
	*sp = syncPoint{store: s, head: info.Head, incarnation: info.Incarnation, state: state, keys: keys}
}

// takeLanded looks in st, read from s after the seq c last saw, for the
// batch of one of c's attempts: a save whose outcome c never learnt (the
// connection dropped after the store committed it, the context was
// cancelled as it did), which left c as it was. Every attempt sent the
// events of c's log after that seq up to its head (mine, as a store keeps
// them), the last a batch event of a key of its own: it landed when they
// are the first stored, byte for byte, of the same incarnation. Then c
// takes it as saved, the state as the attempt sent it, and takeLanded
// returns its head. Of attempts that all match (a later one sent an
// earlier one's events again, and more), the longest is the one that
// landed: the others' batch events are in it. mine were masked by mask;
// an attempt that masked other secrets (the deps changed since) is
// compared with its events masked as it sent them.
func (c *Context) takeLanded(s Store, st *Stored, mine []json.RawMessage, mask *jsonx.Masker) (int64, bool) {
	sp := &c.persist.synced
	if st.Info.Incarnation != sp.incarnation {
		return 0, false
	}
	found := -1
	for i, a := range sp.attempts {
		n := a.head - sp.head
		if n <= 0 || n > int64(len(mine)) || n > int64(len(st.Events)) || found >= 0 && a.head <= sp.attempts[found].head {
			continue
		}
		sent := mine
		if !a.mask.Same(mask) {
			san := newSanitizer(c.Redact)
			san.Mask = a.mask
			var err error
			if sent, err = c.encodeEvents(san, sp.head, a.head); err != nil {
				continue // a bug, as in Serialize
			}
		}
		if slices.EqualFunc(st.Events[:n], sent[:n], func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
			found = i
		}
	}
	if found < 0 {
		return 0, false
	}
	a := sp.attempts[found]
	c.markSynced(s, &LogInfo{Head: a.head, Incarnation: st.Info.Incarnation}, a.state)
	if c.HasBatch(c.persist.batchKey) {
		c.persist.batchKey = ""
	}
	return a.head, true
}

// encodeEach writes n values with write, one writer into one buffer, and
// returns each value's JSON, a slice of that buffer.
func encodeEach(n int, write func(jw *jsonWriter, i int)) ([]json.RawMessage, error) {
	var buf bytes.Buffer
	jw := newJSONWriter(&buf)
	ends := make([]int, n)
	for i := range n {
		write(jw, i)
		ends[i] = buf.Len()
	}
	if jw.err != nil {
		return nil, jw.err
	}
	out := make([]json.RawMessage, n)
	all, start := buf.Bytes(), 0
	for i, end := range ends {
		out[i], start = all[start:end:end], end
	}
	return out, nil
}

// logInfo returns the info of c's log with the given head, updated now.
func (c *Context) logInfo(head int64) LogInfo {
	at := now()
	return LogInfo{
		ID: c.log.id, Parent: c.log.parent, ForkSeq: c.log.forkSeq, Head: head,
		CreatedAt: c.createdAt(at), UpdatedAt: at, Name: c.log.name, Labels: c.log.labels,
	}
}

// createdAt returns when c's log was created: the time in its UUID v7, or,
// for a log ID of another version (a document may hold any UUID), the
// start of the run when it has one, else at.
func (c *Context) createdAt(at time.Time) time.Time {
	if c.log.id.Version() == 7 {
		sec, nsec := c.log.id.Time().UnixTime()
		return time.Unix(sec, nsec).UTC()
	}
	if !c.StartedAt.IsZero() && encodableTime(c.StartedAt) {
		return c.StartedAt.UTC()
	}
	return at
}

// stateJSON returns the state document of c, sanitized by s.
func (c *Context) stateJSON(s *sanitizer) []byte {
	d := c.state(s)
	return d.stateJSON()
}

// stateJSON returns the state document d holds.
func (d *document) stateJSON() []byte {
	var buf bytes.Buffer
	jw := newJSONWriter(&buf)
	buf.WriteString(`{"version":`)
	jw.int(int64(d.Version))
	d.writeState(jw, false) // the tool calls are events
	buf.WriteByte('}')
	return buf.Bytes()
}

// Load returns the context stored in s under id, as Deserialize(Serialize())
// would have returned it at its last save: the same log, view, ID and
// parent, and the same state. The overlay is not stored: it is unset. A
// log s does not hold is an error wrapping [ErrNotFound]; stored data that
// does not read back, one wrapping [ErrCorrupt] that names the log and the
// place.
//
// Load takes no options: [LoadWith] gives the loaded context what no
// store keeps.
//
// A log an earlier version of this package stored kept its tool calls
// apart from its events; Load records them as tool_call events at the end
// of the log, which the next Save stores.
func Load(ctx context.Context, s Store, id uuid.UUID) (*Context, error) {
	return LoadWith(ctx, s, id)
}

// LoadWith is [Load] with opts. Of opts, it takes what no store keeps (see [Option]): the runtime
// fields, unset without them, and the deps of [WithDeps], merged over the
// stored ones as [Context.MergeDeps] merges, which is how a secret a save
// never wrote, or a client handle, comes back. The runtime fields are set
// before Load records the state it read: under the rule of
// [WithRedaction], a session that changed nothing has nothing to save, and
// its Refresh takes another writer's turns. The deps are merged after: a
// value the store holds otherwise is a change, which the next Save stores.
// The options that make a new context (a system prompt, messages, ...)
// are ignored: a loaded session is the one stored.
func LoadWith(ctx context.Context, s Store, id uuid.UUID, opts ...Option) (*Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nous: load log %s: %w", id, err)
	}
	st, err := s.Read(ctx, id, 0)
	if err != nil {
		return nil, fmt.Errorf("nous: load log %s: %w", id, err)
	}
	info := st.Info
	events, err := decodeStored(st.Events, 1, info)
	if err != nil {
		return nil, err
	}
	l, view, err := restoreLog(info.ID, info.Parent, info.ForkSeq, events, true)
	if err != nil {
		return nil, corrupt(info.ID, "events", err)
	}
	l.name, l.labels = info.Name, cloneLabels(info.Labels)
	state, err := decodeState(&st)
	if err != nil {
		return nil, err
	}
	c, err := contextOf(&restored{state: state, log: l, view: view})
	if err != nil {
		return nil, corrupt(info.ID, "state", err)
	}
	c.rederive()
	o := resolve(options{}, opts)
	o.setRuntime(c)
	// The state as this package writes it, which a stored document read
	// back may not be byte for byte (1.50 is written 1.5): so that an
	// unchanged context is seen as unchanged.
	c.markSynced(s, &info, c.savedState(c.sanitizer()))
	c.MergeDeps(o.deps)
	return c, nil
}

// Refresh brings c up to date with s: it appends the events stored after the
// seq c last saw, folding them as usual (tool calls recorded since join
// ToolCalls), and takes the stored state. Deps the store never holds
// (secrets, values JSON cannot hold, such as a handle's func) stay as c has
// them, and so does a value the store holds unchanged (a []string stays a
// []string, a *DB its pointer): only what another writer changed is taken. It costs the new events, not the
// whole log. When the store has not moved on, c is left as it is. When it
// has and c has unsaved changes (events, or state that differs from what it
// last saved or loaded), it returns an error wrapping [ErrConflict] and c is
// unchanged: c's changes and the stored ones cannot both be kept; [Load] the
// log and redo them. A context never saved nor loaded (a new one, say,
// which [Resume] just made) whose log s does not hold has nothing to take:
// Refresh returns nil. One whose log was deleted since it saw it gets an
// error wrapping [ErrNotFound].
func (c *Context) Refresh(ctx context.Context, s Store) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: refresh: %w", err)
	}
	c.ready()
	if err := c.recordToolCalls(false); err != nil {
		return fmt.Errorf("nous: refresh log %s: %w", c.log.id, err)
	}
	sp := &c.persist.synced
	st, err := s.Read(ctx, c.log.id, sp.head)
	if errors.Is(err, ErrNotFound) && sp.store == nil {
		return nil // never stored: nothing to pull
	}
	if err != nil {
		return fmt.Errorf("nous: refresh log %s: %w", c.log.id, err)
	}
	info := st.Info
	if info.Incarnation != sp.incarnation || info.Head < sp.head {
		return fmt.Errorf("nous: refresh log %s: the stored log is not the one the context saw (deleted and saved again?): %w", c.log.id, ErrConflict)
	}
	if info.Head == sp.head {
		return nil
	}
	san := c.sanitizer()
	if len(sp.attempts) > 0 { // a batch of c's may be among those stored: then it is c's
		mine, err := c.encodeEvents(san, sp.head, c.log.len())
		if err != nil {
			return fmt.Errorf("nous: refresh log %s: %w", c.log.id, err) // a bug, as in Serialize
		}
		from := sp.head
		if _, ok := c.takeLanded(s, &st, mine, san.Mask); ok {
			st.Events = st.Events[sp.head-from:]
		}
	}
	if c.log.len() != sp.head || !bytes.Equal(c.savedState(san), sp.state) {
		return fmt.Errorf("nous: refresh log %s: the store moved from seq %d to %d and the context has unsaved changes: %w", c.log.id, sp.head, info.Head, ErrConflict)
	}
	events, err := decodeStored(st.Events, sp.head+1, info)
	if err != nil {
		return err
	}
	mine := c.state(san) // c's deps as it writes them, for refreshedDeps
	d, err := decodeState(&st)
	if err != nil {
		return err
	}
	if len(d.ToolCalls) > 0 {
		return corrupt(info.ID, "state", errors.New("tool calls kept apart from the events, as an earlier version stored them: Load the log, which records them"))
	}
	l, v, deps, err := c.foldRead(info.ID, events)
	if err != nil {
		return err
	}
	for i := int64(len(c.ToolCalls)); i < l.calls.len(); i++ {
		c.ToolCalls = append(c.ToolCalls, l.calls.at(i).clone())
	}
	c.calls = c.ToolCalls
	c.log, c.view = l, v
	c.depsRec.base, c.depsRec.at = deps, l.len()
	d.Deps = c.refreshedDeps(d.Deps, mine.Deps)
	c.setState(&d)
	c.rederive()
	c.markSynced(s, &info, c.savedState(c.sanitizer()))
	return nil
}

// foldRead returns c's log with events, read from the store of log id,
// folded onto it, its view and the deps it records, changing nothing of
// c: the events are folded into a copy of the log, so that a bad event
// leaves c as it was. The copy appends past the end c's log sees, into
// room only c's own appends would use, with no copying. The view is
// changed in place (copied first only when c shares it with a clone); a
// bad event restores it as the fold of c's log, which it is.
func (c *Context) foldRead(id uuid.UUID, events []Event) (eventLog, view, map[string]any, error) {
	l, v := c.log, c.view
	restore := func() {
		if !c.view.shared {
			c.view.entries, _ = c.log.fold()
		}
	}
	for i := range events {
		s, mi, err := l.addRead(v.entries, &events[i])
		if err != nil {
			restore()
			return l, v, nil, corrupt(id, fmt.Sprintf("events[%d]", events[i].Seq-1), err)
		}
		if s.ok {
			v.put(s, mi)
		}
	}
	deps, err := c.depsRec.fold(&l, l.len())
	if err != nil {
		restore()
		return l, v, nil, corrupt(id, "events", err)
	}
	return l, v, deps, nil
}

// refreshedDeps returns the deps c takes from a refresh, stored being the
// deps the store holds now, which the refresh owns and which are changed
// in place, and written c's deps as it writes them: those stored, with c's
// own value where the store holds it as c wrote it, and what c has that
// the store never held (dropped when c saved: a secret, a value JSON
// cannot hold) kept, at every depth.
func (c *Context) refreshedDeps(stored, written map[string]any) map[string]any {
	if stored == nil {
		stored = map[string]any{}
	}
	return keptDeps(c.Deps, written, stored).(map[string]any)
}

// keptDeps returns what a refresh makes of c's value mine, which c wrote
// as written, where the store holds stored: mine when the store holds it
// as c wrote it; else stored, and when mine and stored are both maps (or
// lists of one length), stored with each key (element) of mine the store
// never held put back, and each it holds kept by the same rule. stored is
// changed in place.
func keptDeps(mine, written, stored any) any {
	if sameJSON(written, stored) {
		return mine
	}
	switch m := mine.(type) {
	case map[string]any:
		s, okS := stored.(map[string]any)
		w, okW := written.(map[string]any)
		if !okS || !okW || s == nil {
			return stored
		}
		for k, v := range m {
			wv, inW := w[k]
			sv, inS := s[k]
			switch {
			case !inW && !inS:
				s[k] = v
			case inW && inS:
				s[k] = keptDeps(v, wv, sv)
			}
		}
		return s
	case []any:
		s, okS := stored.([]any)
		w, okW := written.([]any)
		if !okS || !okW || len(m) != len(s) || len(m) != len(w) {
			return stored
		}
		for i := range m {
			s[i] = keptDeps(m[i], w[i], s[i])
		}
		return s
	}
	return stored
}

// sameJSON reports whether a and b, values as written, have one encoding.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// decodeStored decodes the events a store returned, which must be the seqs
// first, first+1, ... up to info.Head. Many events (a log read whole) are
// decoded on goroutines of their own, a share each; the error is that of
// the first event that fails.
func decodeStored(raw []json.RawMessage, first int64, info LogInfo) ([]Event, error) {
	if want := info.Head - first + 1; int64(len(raw)) != want {
		return nil, corrupt(info.ID, "events", fmt.Errorf("%d events after seq %d, head %d", len(raw), first-1, info.Head))
	}
	events := make([]Event, len(raw))
	decode := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := json.Unmarshal(raw[i], &events[i]); err != nil {
				return corrupt(info.ID, fmt.Sprintf("events[%d]", first-1+int64(i)), err)
			}
			if want := first + int64(i); events[i].Seq != want {
				return corrupt(info.ID, fmt.Sprintf("events[%d]", want-1), fmt.Errorf("seq %d, want %d", events[i].Seq, want))
			}
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(raw)/decodeShare)
	if workers <= 1 {
		if err := decode(0, len(raw)); err != nil {
			return nil, err
		}
		return events, nil
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := range workers {
		go func() {
			defer wg.Done()
			errs[w] = decode(w*len(raw)/workers, (w+1)*len(raw)/workers)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return events, nil
}

// decodeShare is the fewest events a goroutine of decodeStored decodes.
const decodeShare = 512

// decodeState returns the state document of st; its ToolCalls are those
// the document holds, which only a state an earlier version stored has.
func decodeState(st *Stored) (state, error) {
	var w wireInput
	if err := json.Unmarshal(st.State, &w); err != nil {
		return state{}, corrupt(st.Info.ID, "state", err)
	}
	if v, err := parseVersion(w.Version); err != nil || v != FormatVersion {
		return state{}, corrupt(st.Info.ID, "state", fmt.Errorf("version %.40s, want %d", w.Version, FormatVersion))
	}
	d, err := restoreState(&w, false)
	if err != nil {
		return state{}, corrupt(st.Info.ID, "state", err)
	}
	return d, nil
}

// corrupt returns the error of stored data of log id that fails its checks
// at place.
func corrupt(id uuid.UUID, place string, err error) error {
	return fmt.Errorf("nous: log %s: %s: %v: %w", id, place, err, ErrCorrupt)
}
