package nous

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
)

// LogInfo describes a stored log.
type LogInfo struct {
	ID       uuid.UUID
	Parent   uuid.UUID // uuid.Nil unless the log is a fork
	ForkSeq  int64     // the parent's seq it forked at; 0 unless a fork
	Head     int64     // seq of the log's last stored event (a fork's seqs continue its parent's)
	Revision int64     // the number of batches stored: every save adds one, one that changes only the state too
	// Incarnation is a random ID the log's first save gives it: a log
	// deleted and saved again under the same ID has another, so a writer
	// that saw the old one conflicts instead of appending to the new one,
	// even at the same head and revision. Never the zero UUID: stores
	// refuse a batch without one.
	Incarnation uuid.UUID
	CreatedAt   time.Time // when the log's context was created (the time in its UUID v7)
	UpdatedAt   time.Time // time of the last save
}

// ListOptions selects the logs [Store.List] yields.
type ListOptions struct {
	After uuid.UUID // cursor: only logs whose ID sorts after this one; uuid.Nil lists from the start
	Limit int       // at most this many; 0 means no limit
}

// Batch is one save of a log: the events appended since the head the saver
// last saw, and the state of the context beside them. A [Store] keeps it
// whole or not at all.
type Batch struct {
	// Info names the log and says, for its first batch, what it is: ID,
	// Parent and ForkSeq, CreatedAt, Incarnation. Head is After +
	// len(Events), Revision the stored revision the saver expects plus one,
	// Incarnation the stored one; UpdatedAt the time of the save.
	Info LogInfo
	// After is the stored head the saver expects: 0 for a log the store
	// must not hold yet.
	After int64
	// State is the state document: a JSON object with the plain fields of
	// the context, as [Context.Serialize] writes them (system_prompt, deps,
	// usage, needs_response, iteration, max_iterations, started_at,
	// agent_name), secrets redacted. It replaces the stored one.
	State []byte
	// ToolCalls replace the stored tool calls (Context.ToolCalls) from
	// index ToolCallsAt on: the calls recorded since the last save, with
	// ToolCallsAt the number stored, or every call, with ToolCallsAt 0,
	// when the context's list was rewritten. Each is a [ToolCall]'s JSON.
	// So a save costs the calls it adds, not all of them.
	ToolCallsAt int
	ToolCalls   []json.RawMessage
	// Events are the events after After, seqs After+1, After+2, ..., each
	// the JSON of one [Event] as [Context.AppendEventJSON] writes it. A
	// store keeps their bytes exactly.
	Events []json.RawMessage
}

// Store is where contexts are kept: logs of events, each with the state of
// its context as of its last save. [Context.Save], [Load] and
// [Context.Refresh] work with any Store; a backend implements four methods.
//
// A backend must be safe for concurrent use, honour ctx in every method
// (once it is done, return an error wrapping ctx.Err() and store nothing
// partial), and keep a batch whole or not at all, even across a crash.
// storetest.Run checks all of this; a backend that passes it works with
// this package.
type Store interface {
	// Append stores b atomically, if the stored head of log b.Info.ID is
	// still b.After, its revision still b.Info.Revision-1 and its
	// incarnation b.Info.Incarnation: it appends b.Events, replaces the
	// state with b.State and sets the head, the revision and the update
	// time to b.Info's. With b.Info.Revision 1 it creates the log, with
	// b.Info's identity and incarnation, and fails if the log exists. A
	// head, revision or incarnation that moved on, or a log that exists
	// when it is created, is an error wrapping [ErrConflict] that names the
	// log, the expected and the stored head and revision;
	// a log that does not exist when b.Info.Revision is above 1, one
	// wrapping [ErrNotFound]. On error the store is unchanged.
	Append(ctx context.Context, b Batch) error
	// Read returns the info and state document of log id, its events
	// after seq from.Seq, in order, and its tool calls from index
	// from.ToolCalls on, each the bytes Append was given. When a batch
	// stored after revision from.Revision replaced stored tool calls (its
	// ToolCallsAt below the number stored before it), Read returns every
	// tool call instead: what the reader has of them is stale. A log the
	// store does not hold is an error wrapping [ErrNotFound]; stored data
	// that fails its checks, one wrapping [ErrCorrupt] naming the log and
	// the place.
	Read(ctx context.Context, id uuid.UUID, from Position) (Stored, error)
	// List yields the stored logs in ID order (UUID v7: the order their
	// contexts were created), as opts selects; an error ends it.
	List(ctx context.Context, opts ListOptions) iter.Seq2[LogInfo, error]
	// Delete removes log id and nothing else: forks of it keep their
	// events. A log the store does not hold is an error wrapping
	// [ErrNotFound].
	Delete(ctx context.Context, id uuid.UUID) error
}

// Position is how much of a stored log a reader has: [Store.Read] returns
// what comes after it. The zero Position reads the whole log.
type Position struct {
	Seq       int64 // the events up to this seq
	Revision  int64 // as stored at this revision
	ToolCalls int   // the tool calls before this index
}

// Stored is what [Store.Read] returns of a log.
type Stored struct {
	Info        LogInfo
	State       []byte            // the state document of the last save
	ToolCallsAt int               // the index of ToolCalls[0] among the stored tool calls
	ToolCalls   []json.RawMessage // the stored tool calls from ToolCallsAt on, in order
	Events      []json.RawMessage // the events after the seq asked for, in order
}

// ToolCallsFrom returns the index from which [Store.Read] returns the
// tool calls of a log that holds n of them, last rewritten (a batch
// replaced stored calls) at revision rewritten: from.ToolCalls, or 0 when
// they were rewritten after from.Revision. For backends.
func (from Position) ToolCallsFrom(n int, rewritten int64) int {
	if rewritten > from.Revision {
		return 0
	}
	return min(max(from.ToolCalls, 0), n)
}

// Watcher is the optional capability of a store that can follow a log as it
// grows.
type Watcher interface {
	// Watch yields the stored events of log id with seq > after, in order,
	// then every event saved later, with no gap and no duplicate, until ctx
	// is done; then it yields ctx.Err() once and ends.
	Watch(ctx context.Context, id uuid.UUID, after int64) iter.Seq2[Event, error]
}

// savedAt is what a context remembers of the store it was last loaded,
// saved or refreshed with.
type savedAt struct {
	store     Store             // the handle it last used
	head      int64             // the seq it last saw stored
	revision  int64             // the revision it last saw stored; 0: never saved
	incarnate uuid.UUID         // the incarnation it last saw stored
	state     []byte            // the state document it last wrote or read
	toolCalls []ToolCall        // c.ToolCalls as stored: a copy in an array of its own
	encoded   []json.RawMessage // each of toolCalls as this package writes it, secrets redacted
	attempts  []*Batch          // the batches without events sent since whose outcome is unknown: one may have landed
}

// maxAttempts bounds the batches without events a context remembers of the
// saves that failed since its last save: past it, the oldest kept stay.
const maxAttempts = 16

// newToolCalls returns the index from which c's tool calls are not stored:
// the number stored, or 0 when the list was rewritten since: shorter, or a
// stored call with another ID, name, arguments or metadata (as it would be
// stored: a value JSON cannot hold is dropped there). It compares what it
// can without encoding (metadata of plain JSON values, deeply); only a call
// whose metadata holds other values is encoded to be compared.
func (c *Context) newToolCalls() int {
	saved := c.saved.toolCalls
	if len(c.ToolCalls) < len(saved) {
		return 0
	}
	for i := range saved {
		a, b := &c.ToolCalls[i], &saved[i]
		if a.ID != b.ID || a.Name != b.Name || string(a.Arguments) != string(b.Arguments) {
			return 0
		}
		if equal, plain := plainEqual(a.Metadata, b.Metadata); plain {
			if !equal {
				return 0
			}
			continue
		}
		if i >= len(c.saved.encoded) || !bytes.Equal(c.encodeCalls(c.ToolCalls[i : i+1])[0], c.saved.encoded[i]) {
			return 0
		}
	}
	return len(saved)
}

// plainEqual reports whether a and b, metadata values, are equal; plain is
// false when either holds a value of another kind than those JSON decodes
// to (a NaN, a pointer, a struct...), which only their encodings compare.
func plainEqual(a, b any) (equal, plain bool) {
	switch a := a.(type) {
	case nil:
		return b == nil, true
	case string:
		v, ok := b.(string)
		return ok && a == v, true
	case bool:
		v, ok := b.(bool)
		return ok && a == v, true
	case json.Number:
		v, ok := b.(json.Number)
		return ok && a == v, true
	case float64: // by bits: -0 is written "-0"
		v, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(v), !math.IsNaN(a) && !math.IsInf(a, 0)
	case int:
		v, ok := b.(int)
		return ok && a == v, true
	case int64:
		v, ok := b.(int64)
		return ok && a == v, true
	case map[string]any:
		v, ok := b.(map[string]any)
		if !ok || len(a) != len(v) || (a == nil) != (v == nil) {
			return false, true
		}
		for k, x := range a {
			y, found := v[k]
			if !found {
				return false, true
			}
			if eq, plain := plainEqual(x, y); !plain || !eq {
				return eq, plain
			}
		}
		return true, true
	case []any:
		v, ok := b.([]any)
		if !ok || len(a) != len(v) || (a == nil) != (v == nil) { // null and [] differ
			return false, true
		}
		for k := range a {
			if eq, plain := plainEqual(a[k], v[k]); !plain || !eq {
				return eq, plain
			}
		}
		return true, true
	}
	return false, false
}

// encodeCalls returns calls as Save writes them, secrets redacted.
func (c *Context) encodeCalls(calls []ToolCall) []json.RawMessage {
	san := newSanitizer(c.Redact)
	out, _ := encodeEach(len(calls), func(jw *jsonWriter, i int) {
		tc, _ := san.toolCall(&calls[i])
		jw.toolCall(&tc)
	})
	return out
}

// markSaved records what c's store now holds: calls from index callsAt on
// are new in the store (encoded: as written, nil to encode them), those
// before it were there already. It keeps copies of the new calls, so that
// one changed in place later is seen as changed.
func (c *Context) markSaved(s Store, info *LogInfo, state []byte, callsAt int, encoded []json.RawMessage) {
	if encoded == nil {
		encoded = c.encodeCalls(c.ToolCalls[callsAt:])
	}
	calls := append(c.saved.toolCalls[:callsAt], cloneToolCalls(c.ToolCalls[callsAt:])...) // amortized: its own array
	enc := append(c.saved.encoded[:min(callsAt, len(c.saved.encoded))], encoded...)
	c.saved = savedAt{store: s, head: info.Head, revision: info.Revision, incarnate: info.Incarnation, state: state, toolCalls: calls, encoded: enc}
}

// Save stores what changed in c since it was last loaded, saved or
// refreshed: the events after that seq, the tool calls recorded since, and
// the state (the other plain fields, as Serialize writes them, secrets
// redacted). The first save of a context
// creates its log, with its ID, and for a fork ([Context.Clone]) its parent
// and fork seq; a fork's first save stores every event, its parent's
// included, so it loads whatever later happens to the parent. A save's cost
// is that of the new events and the state, whatever the length of the log.
// A save with nothing new writes nothing and does not contact s.
//
// When another writer saved the log since c last saw it, Save stores nothing
// and returns an error wrapping [ErrConflict]; c is unchanged. The way on is
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
// A save that fails leaves c as it was, even when the store kept the batch
// and only the reply was lost (a connection dropped after the commit, ctx
// done as the store wrote): the next save of c finds that batch, takes it
// as its own and sends only what came after, so retrying a failed save, at
// once or after more turns, stores nothing twice. Saving a log that
// was deleted is an error wrapping [ErrNotFound]. Values JSON cannot hold
// and secrets are dropped with a warning, as Serialize drops them.
func (c *Context) Save(ctx context.Context, s Store) error {
	return c.save(ctx, s, false)
}

// save is Save; retried says it follows a batch found landed, which it does
// not look for again.
func (c *Context) save(ctx context.Context, s Store, retried bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: save: %w", err)
	}
	c.ready()
	san := newSanitizer(c.Redact)
	state := c.stateJSON(san)
	head, callsAt := c.log.len(), c.newToolCalls()
	if head == c.saved.head && bytes.Equal(state, c.saved.state) && callsAt == len(c.ToolCalls) && callsAt == len(c.saved.toolCalls) &&
		sameValue(s, c.saved.store) && len(c.saved.attempts) == 0 { // only the handle c last used: another may lack the log; nor after a batch that may have landed
		return nil
	}
	calls, err := encodeEach(len(c.ToolCalls)-callsAt, func(jw *jsonWriter, i int) {
		san.root(segment{key: "tool_calls", index: callsAt + i, isIndex: true})
		tc, _ := san.toolCall(&c.ToolCalls[callsAt+i])
		jw.toolCall(&tc)
	})
	if err != nil {
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err) // a bug, as in Serialize
	}
	events, err := encodeEach(int(head-c.saved.head), func(jw *jsonWriter, i int) {
		e := san.event(&c.log, c.saved.head+1+int64(i))
		jw.event(&e)
	})
	if err != nil {
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	c.warnDropped(san, "Save")
	if c.saved.revision == 0 && c.saved.incarnate == uuid.Nil { // kept from a first save that failed: its retry is the same batch
		if c.saved.incarnate, err = uuid.NewRandom(); err != nil {
			return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
		}
	}
	info := c.logInfo(head)
	info.Revision, info.Incarnation = c.saved.revision+1, c.saved.incarnate
	b := Batch{Info: info, After: c.saved.head, State: state, ToolCallsAt: callsAt, ToolCalls: calls, Events: events}
	if err := s.Append(ctx, b); err != nil {
		if errors.Is(err, ErrConflict) && !retried {
			if ok, rerr := c.landed(ctx, s, &b); rerr == nil && ok {
				return c.save(ctx, s, true)
			}
		}
		if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) && len(b.Events) == 0 && len(c.saved.attempts) < maxAttempts {
			// Its outcome is unknown: the next save looks for it. (A batch
			// with events is told by its events, which the next one sends
			// again.)
			c.saved.attempts = append(c.saved.attempts, &b)
		}
		return fmt.Errorf("nous: save log %s: %w", c.log.id, err)
	}
	c.markSaved(s, &info, state, callsAt, calls)
	return nil
}

// landed reports whether the batch s holds after the seq c last saw is an
// earlier attempt of b: a save whose outcome c never learnt (the
// connection dropped after the store committed it, the context was
// cancelled as it did), which left c as it was, so that its retry, b,
// conflicts with itself. It is, when the store holds one batch more than c
// saw, of the same incarnation, and that batch's events are the first of
// b's, byte for byte (their times are c's own, to the nanosecond); or, a
// batch without events, when the store holds exactly what b would store.
// Then c takes that batch as saved, and landed returns true: the next
// attempt sends only what came after it.
func (c *Context) landed(ctx context.Context, s Store, b *Batch) (bool, error) {
	st, err := s.Read(ctx, c.log.id, Position{Seq: c.saved.head})
	if err != nil {
		return false, err
	}
	info := &st.Info
	if info.Incarnation != b.Info.Incarnation || info.Revision != b.Info.Revision || len(st.Events) > len(b.Events) ||
		int64(len(st.Events)) != info.Head-c.saved.head {
		return false, nil
	}
	for i, e := range st.Events {
		if !bytes.Equal(e, b.Events[i]) {
			return false, nil
		}
	}
	if len(st.Events) == 0 {
		// Without events to tell it, the batch is an earlier attempt only
		// when the store holds exactly what b, or an attempt whose outcome
		// c never learnt, sent, on the tool calls c saw stored.
		same := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
		holds := func(x *Batch) bool {
			return len(x.Events) == 0 && bytes.Equal(st.State, x.State) &&
				st.ToolCallsAt == 0 && len(st.ToolCalls) == x.ToolCallsAt+len(x.ToolCalls) && x.ToolCallsAt <= len(c.saved.encoded) &&
				slices.EqualFunc(st.ToolCalls[:x.ToolCallsAt], c.saved.encoded[:x.ToolCallsAt], same) &&
				slices.EqualFunc(st.ToolCalls[x.ToolCallsAt:], x.ToolCalls, same)
		}
		if !holds(b) && !slices.ContainsFunc(c.saved.attempts, holds) {
			return false, nil // a state-only save of another writer's, perhaps
		}
	}
	d, err := decodeState(&st, nil)
	if err != nil {
		return false, err
	}
	c.saved = savedAt{store: s, head: info.Head, revision: info.Revision, incarnate: info.Incarnation,
		state: d.stateJSON(newSanitizer(c.Redact)), toolCalls: d.ToolCalls, encoded: c.encodeCalls(d.ToolCalls)}
	return true, nil
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
	sec, nsec := c.log.id.Time().UnixTime()
	return LogInfo{
		ID: c.log.id, Parent: c.log.parent, ForkSeq: c.log.forkSeq, Head: head,
		CreatedAt: time.Unix(sec, nsec).UTC(), UpdatedAt: now(),
	}
}

// stateJSON returns the state document of c, sanitized by s.
func (c *Context) stateJSON(s *sanitizer) []byte {
	d := c.state(s)
	var buf bytes.Buffer
	jw := newJSONWriter(&buf)
	buf.WriteString(`{"version":`)
	jw.int(int64(d.Version))
	d.writeState(jw, false) // stored apart, as they grow with the run
	buf.WriteByte('}')
	return buf.Bytes()
}

// Load returns the context stored in s under id, as Deserialize(Serialize())
// would have returned it at its last save: the same log, view, ID and
// parent, and the same state. The overlay and the runtime fields are not
// stored: they are unset. A log s does not hold is an error wrapping
// [ErrNotFound]; stored data that does not read back, one wrapping
// [ErrCorrupt] that names the log and the place.
func Load(ctx context.Context, s Store, id uuid.UUID) (*Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nous: load log %s: %w", id, err)
	}
	st, err := s.Read(ctx, id, Position{})
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
	c, err := decodeState(&st, nil)
	if err != nil {
		return nil, err
	}
	c.log, c.view = l, view
	// The state as this package writes it, which a stored document read
	// back may not be byte for byte (1.50 is written 1.5): so that an
	// unchanged context is seen as unchanged.
	c.markSaved(s, &info, c.stateJSON(newSanitizer(c.Redact)), 0, nil)
	return c, nil
}

// Refresh brings c up to date with s: it appends the events stored after the
// seq c last saw, folding them as usual, and takes the stored state. It
// costs the new events, not the whole log. When the store has not moved on,
// c is left as it is. When it has and c has unsaved changes (events, or
// state that differs from what it last saved or loaded), it returns an
// error wrapping [ErrConflict] and c is unchanged: c's changes and the
// stored ones cannot both be kept; [Load] the log and redo them.
func (c *Context) Refresh(ctx context.Context, s Store) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: refresh: %w", err)
	}
	c.ready()
	st, err := s.Read(ctx, c.log.id, Position{Seq: c.saved.head, Revision: c.saved.revision, ToolCalls: len(c.saved.toolCalls)})
	if err != nil {
		return fmt.Errorf("nous: refresh log %s: %w", c.log.id, err)
	}
	info := st.Info
	if info.Incarnation != c.saved.incarnate || info.Revision < c.saved.revision || info.Head < c.saved.head {
		return fmt.Errorf("nous: refresh log %s: the stored log is not the one the context saw (deleted and saved again?): %w", c.log.id, ErrConflict)
	}
	if info.Revision == c.saved.revision {
		return nil
	}
	unsaved := c.log.len() != c.saved.head || c.newToolCalls() != len(c.ToolCalls) || len(c.saved.toolCalls) != len(c.ToolCalls)
	if unsaved || !bytes.Equal(c.stateJSON(newSanitizer(c.Redact)), c.saved.state) {
		return fmt.Errorf("nous: refresh log %s: the store moved from revision %d to %d and the context has unsaved changes: %w", c.log.id, c.saved.revision, info.Revision, ErrConflict)
	}
	events, err := decodeStored(st.Events, c.saved.head+1, info)
	if err != nil {
		return err
	}
	d, err := decodeState(&st, c.ToolCalls) // the stored ones: it has no unsaved changes; the saved copies stay apart
	if err != nil {
		return err
	}
	// Apply the events to a copy of the log, so that a bad event leaves c
	// as it was: the copy appends past the end c's log sees, into room only
	// c's own appends would use, with no copying. The view is changed in
	// place (copied first only when c shares it with a clone); a bad event
	// restores it as the fold of c's log, which it is.
	l, view := c.log, c.view
	if c.viewShared {
		view = slices.Clone(c.view)
	}
	for i := range events {
		if view, err = l.appendStored(view, &events[i]); err != nil {
			if !c.viewShared {
				c.view, _ = c.log.fold()
			}
			return corrupt(info.ID, fmt.Sprintf("events[%d]", events[i].Seq-1), err)
		}
	}
	c.log, c.view, c.viewShared = l, view, false
	c.SystemPrompt, c.Deps, c.Usage, c.NeedsResponse = d.SystemPrompt, d.Deps, d.Usage, d.NeedsResponse
	c.Iteration, c.MaxIterations, c.AgentName, c.StartedAt, c.ToolCalls = d.Iteration, d.MaxIterations, d.AgentName, d.StartedAt, d.ToolCalls
	c.lists = nil
	c.refreshLead()
	c.markSaved(s, &info, c.stateJSON(newSanitizer(c.Redact)), st.ToolCallsAt, nil) // the calls before it are those c had
	return nil
}

// decodeStored decodes the events a store returned, which must be the seqs
// first, first+1, ... up to info.Head.
func decodeStored(raw []json.RawMessage, first int64, info LogInfo) ([]Event, error) {
	if want := info.Head - first + 1; int64(len(raw)) != want {
		return nil, corrupt(info.ID, "events", fmt.Errorf("%d events after seq %d, head %d", len(raw), first-1, info.Head))
	}
	events := make([]Event, len(raw))
	for i, b := range raw {
		if err := json.Unmarshal(b, &events[i]); err != nil {
			return nil, corrupt(info.ID, fmt.Sprintf("events[%d]", first-1+int64(i)), err)
		}
		if want := first + int64(i); events[i].Seq != want {
			return nil, corrupt(info.ID, fmt.Sprintf("events[%d]", want-1), fmt.Errorf("seq %d, want %d", events[i].Seq, want))
		}
	}
	return events, nil
}

// decodeState returns a context holding the state document and the tool
// calls of st, those before st.ToolCallsAt taken from have, the stored
// calls the reader has.
func decodeState(st *Stored, have []ToolCall) (*Context, error) {
	var w wireInput
	if err := json.Unmarshal(st.State, &w); err != nil {
		return nil, corrupt(st.Info.ID, "state", err)
	}
	if v, err := parseVersion(w.Version); err != nil || v != FormatVersion {
		return nil, corrupt(st.Info.ID, "state", fmt.Errorf("version %.40s, want %d", w.Version, FormatVersion))
	}
	c, err := restoreState(&w, false)
	if err != nil {
		return nil, corrupt(st.Info.ID, "state", err)
	}
	if st.ToolCallsAt < 0 || st.ToolCallsAt > len(have) {
		return nil, corrupt(st.Info.ID, "tool_calls", fmt.Errorf("read from index %d, of %d known", st.ToolCallsAt, len(have)))
	}
	if n := st.ToolCallsAt + len(st.ToolCalls); n > 0 {
		c.ToolCalls = make([]ToolCall, n)
		copy(c.ToolCalls, have[:st.ToolCallsAt])
		for i, b := range st.ToolCalls {
			at := st.ToolCallsAt + i
			if err := json.Unmarshal(b, &c.ToolCalls[at]); err != nil {
				return nil, corrupt(st.Info.ID, fmt.Sprintf("tool_calls[%d]", at), err)
			}
		}
	}
	return c, nil
}

// corrupt returns the error of stored data of log id that fails its checks
// at place.
func corrupt(id uuid.UUID, place string, err error) error {
	return fmt.Errorf("nous: log %s: %s: %v: %w", id, place, err, ErrCorrupt)
}

// appendStored appends e, the next event of l read back from a store, to l
// and to view, the view of l, which it returns: the fold of one event.
func (l *eventLog) appendStored(view []int64, e *Event) ([]int64, error) {
	if e.Seq != l.len()+1 {
		return view, fmt.Errorf("seq %d after %d: %w", e.Seq, l.len(), ErrInvalidLog)
	}
	if err := e.check(); err != nil {
		return view, err
	}
	r := record{typ: e.Type, at: e.CreatedAt, data: e.Data, first: e.First, last: e.Last, after: e.After}
	if e.Message == nil {
		l.push(&r)
		return view, nil
	}
	index := func(seq int64) int {
		return slices.IndexFunc(view, func(mi int64) bool { return l.msg(mi).seq == seq })
	}
	switch {
	case e.Type == EventReplace:
		f, z := index(e.First), index(e.Last)
		if f < 0 || z < f {
			return view, fmt.Errorf("replace anchors %d..%d are not in the view in that order: %w", e.First, e.Last, ErrInvalidLog)
		}
		return slices.Replace(view, f, z+1, l.pushMessage(&r, e.Message)), nil
	case e.After != 0:
		a := index(e.After)
		if a < 0 {
			return view, fmt.Errorf("after %d, which is not in the view: %w", e.After, ErrInvalidLog)
		}
		return slices.Insert(view, a+1, l.pushMessage(&r, e.Message)), nil
	}
	return append(view, l.pushMessage(&r, e.Message)), nil
}
