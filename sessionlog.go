package nous

import (
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// The log stores events in chunks of chunkSize: the full ones, which are
// never written again, and the partly filled tail. A fork shares both with
// its parent, clipped, so that neither can see what the other appends; the
// fork copies the tail (at most one chunk) when it first appends.
const (
	chunkBits = 9
	chunkSize = 1 << chunkBits
)

// chunks is an append-only sequence of values stored in chunks of chunkSize,
// so that appending never copies what is already stored, and a copy of it
// clipped by clip shares everything with it.
type chunks[T any] struct {
	full [][]T // full chunks, each of chunkSize values
	tail []T   // the last chunk, not full
}

// len returns the number of values stored.
func (c *chunks[T]) len() int64 { return int64(len(c.full))<<chunkBits + int64(len(c.tail)) }

// at returns the value at index i, 0 <= i < len.
func (c *chunks[T]) at(i int64) *T {
	if ci := int(i >> chunkBits); ci < len(c.full) {
		return &c.full[ci][i&(chunkSize-1)]
	}
	return &c.tail[i&(chunkSize-1)]
}

// chunk returns the chunk that holds index i, 0 <= i < len.
func (c *chunks[T]) chunk(i int64) []T {
	if ci := int(i >> chunkBits); ci < len(c.full) {
		return c.full[ci]
	}
	return c.tail
}

// push appends *v and returns its index.
func (c *chunks[T]) push(v *T) int64 {
	if len(c.tail) == chunkSize {
		c.full = append(c.full, c.tail)
		c.tail = nil
	}
	if len(c.tail) == cap(c.tail) {
		// The first chunk grows by doubling, so that a short log stays
		// small; a fork's tail, clipped, is copied before it is written.
		n := chunkSize
		if len(c.full) == 0 {
			n = min(max(2*cap(c.tail), 8), chunkSize)
		}
		grown := make([]T, len(c.tail), n)
		copy(grown, c.tail)
		c.tail = grown
	}
	c.tail = append(c.tail, *v)
	return c.len() - 1
}

// clip returns a copy of c that shares every value stored and that appends
// to either cannot write where the other reads.
func (c *chunks[T]) clip() chunks[T] {
	return chunks[T]{full: slices.Clip(c.full), tail: slices.Clip(c.tail)}
}

// all calls yield with the index of every value and the value, in order,
// until it returns false.
func (c *chunks[T]) all(yield func(int64, *T) bool) {
	var n int64
	for _, chunk := range c.full {
		for i := range chunk {
			if !yield(n, &chunk[i]) {
				return
			}
			n++
		}
	}
	for i := range c.tail {
		if !yield(n, &c.tail[i]) {
			return
		}
		n++
	}
}

// record is an event as the log stores it, without its message: a surface
// event's message is stored apart, in the log's messages, so that walking
// the view reads messages packed together and nothing else.
type record struct {
	typ         EventType
	at          time.Time
	data        map[string]any
	first, last int64 // replace events
	mi          int64 // surface events: the index of the message in msgs
}

// stored is a surface event's message as the log stores it, with the seq of
// its event.
type stored struct {
	msg Message
	seq int64
}

// event returns the event with the given seq, which must be in the log, as
// an Event that shares nothing with the log.
func (l *SessionLog) event(seq int64) Event {
	r := l.rec(seq)
	e := Event{Seq: seq, Type: r.typ, Data: jsonx.CloneMap(r.data), CreatedAt: r.at, First: r.first, Last: r.last}
	if r.typ.IsSurface() {
		m := l.msgs.at(r.mi).msg.clone()
		e.Message = &m
	}
	return e
}

// SessionLog is the append-only event log behind a [Context]. Every message
// the context was given, every replacement and every bookkeeping event is in
// it, in order, and nothing is ever removed; the message view is a fold of
// it.
//
// A SessionLog has an ID, a UUID v7 made when its context was created, and
// each event a Seq, 1, 2, 3, ...: the pair (ID, Seq) names an event anywhere,
// in a database as well as in memory. A log made by [Context.Clone] is a fork:
// it has its own ID and remembers its parent's ID and the seq it forked at.
//
// Only its [Context] appends to a log; the methods here read it, and nothing
// they return aliases it. [Context.Log] returns a live handle on the log;
// [SessionLog.Snapshot] a frozen copy that may be read on any goroutine.
type SessionLog struct {
	live    *SessionLog // for a handle from Context.Log: the log it reads
	id      uuid.UUID
	parent  uuid.UUID
	forkSeq int64
	recs    chunks[record] // the events, recs.at(seq-1) for seq
	msgs    chunks[stored] // the surface events' messages, in append order
}

// src returns the log l reads: its context's for a handle, l itself
// otherwise.
func (l *SessionLog) src() *SessionLog {
	if l != nil && l.live != nil {
		return l.live
	}
	return l
}

// Snapshot returns a copy of the log as it is now, which later appends do
// not change. It shares the events instead of copying them, so it costs the
// same for any length of log; and because the context only ever writes past
// what a snapshot sees, a snapshot may be read on another goroutine, by a
// store say, while the context's owner goes on.
func (l *SessionLog) Snapshot() *SessionLog {
	if l = l.src(); l == nil {
		return nil
	}
	return l.snapshot()
}

// newLogID returns a new UUID v7. NewV7 fails only when crypto/rand does,
// which since Go 1.24 crashes the program instead of returning an error.
func newLogID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// ID returns the log's ID. It is uuid.Nil only for the log of a zero
// [Context] that has not been used yet.
func (l *SessionLog) ID() uuid.UUID {
	if l = l.src(); l == nil {
		return uuid.Nil
	}
	return l.id
}

// Parent returns, for a fork, the ID of the log it was forked from and the
// seq of the last event they share, with ok true. For a log that is not a
// fork it returns ok false.
func (l *SessionLog) Parent() (id uuid.UUID, seq int64, ok bool) {
	if l = l.src(); l == nil || l.parent == uuid.Nil {
		return uuid.Nil, 0, false
	}
	return l.parent, l.forkSeq, true
}

// Len returns the number of events in the log, which is also the seq of the
// last one.
func (l *SessionLog) Len() int {
	if l = l.src(); l == nil {
		return 0
	}
	return int(l.recs.len())
}

// Events returns every event in append order. The slice, the events' maps
// and their messages are a copy the caller owns.
func (l *SessionLog) Events() []Event {
	out := make([]Event, 0, l.Len())
	for e := range l.All() {
		out = append(out, e)
	}
	return out
}

// All returns an iterator over the events in append order. Each event is a
// copy the caller owns.
func (l *SessionLog) All() iter.Seq[Event] { return l.Since(0) }

// Since returns an iterator over the events after seq, in append order, each
// a copy the caller owns. A store that has saved events up to seq appends
// the rest with it; it costs the events it yields, not the whole log.
func (l *SessionLog) Since(seq int64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		l := l.src()
		for s := max(seq, 0); s < int64(l.Len()); s++ {
			if !yield(l.event(s + 1)) {
				return
			}
		}
	}
}

// Event returns the event with the given seq, a copy the caller owns, and
// false when there is none.
func (l *SessionLog) Event(seq int64) (Event, bool) {
	l = l.src()
	if seq < 1 || seq > int64(l.Len()) {
		return Event{}, false
	}
	return l.event(seq), true
}

// rec returns the record with the given seq, which must be in the log. The
// record must not be modified.
func (l *SessionLog) rec(seq int64) *record { return l.recs.at(seq - 1) }

// msg returns the message at index mi of the log's messages, an entry of a
// view. It must not be modified.
func (l *SessionLog) msg(mi int64) *stored { return l.msgs.at(mi) }

// push appends r, a bookkeeping event, and returns its seq.
func (l *SessionLog) push(r *record) int64 { return l.recs.push(r) + 1 }

// pushMessage appends r, a surface event, with its message *m, stored with
// its seq, and returns the index of the message in the log's messages: the entry
// the event adds to a view. m must not be used elsewhere afterwards.
func (l *SessionLog) pushMessage(r *record, m *Message) int64 {
	r.mi = l.msgs.push(&stored{msg: *m, seq: l.recs.len() + 1})
	l.push(r)
	return r.mi
}

// fork returns a log that shares every event of l and appends on its own.
// It costs the same for any length of log: the chunks are shared, not
// copied, and clipped so that an append on either side cannot write where
// the other would read.
func (l *SessionLog) fork() SessionLog {
	return SessionLog{
		id: newLogID(), parent: l.id, forkSeq: l.recs.len(),
		recs: l.recs.clip(), msgs: l.msgs.clip(),
	}
}

// snapshot returns a copy of l that sees the events l has now and none it
// appends later; l's appends write only past what the copy can see.
func (l *SessionLog) snapshot() *SessionLog {
	s := *l
	s.recs, s.msgs = l.recs.clip(), l.msgs.clip()
	return &s
}

// fold projects the log into the message view: the entries (indices in the
// log's messages) of the messages that make up the view, in order. It is the one definition of the fold;
// a live [Context] keeps the same view incrementally, and tests check that the
// two agree.
//
// A message event appends its message. A replace event puts its message at
// the position of the entry produced by First and removes every entry from
// there to the entry produced by Last, by position. Bookkeeping events change
// nothing. The view is kept as a linked list over seqs while folding, so a
// log with many replacements folds in time linear in its length.
func (l *SessionLog) fold() ([]int64, error) {
	n := l.recs.len()
	next := make([]int64, n+1) // next[0] is the head, prev[0] the tail
	prev := make([]int64, n+1)
	alive := make([]bool, n+1)
	size := 0
	for seq := int64(1); seq <= n; seq++ {
		r := l.rec(seq)
		switch {
		case r.typ == EventReplace:
			f, z := r.first, r.last
			if f < 1 || f >= seq || z < 1 || z >= seq || !alive[f] || !alive[z] {
				return nil, fmt.Errorf("events[%d]: replace anchors %d..%d are not both in the view: %w", seq-1, f, z, ErrInvalidLog)
			}
			removed := 0
			for at := f; ; at = next[at] {
				if at == 0 {
					return nil, fmt.Errorf("events[%d]: replace anchor %d comes before anchor %d in the view: %w", seq-1, z, f, ErrInvalidLog)
				}
				alive[at] = false
				removed++
				if at == z {
					break
				}
			}
			before, after := prev[f], next[z]
			prev[seq], next[seq] = before, after
			next[before], prev[after] = seq, seq
			alive[seq] = true
			size -= removed - 1
		case r.typ.IsSurface():
			tail := prev[0]
			prev[seq], next[seq] = tail, 0
			next[tail], prev[0] = seq, seq
			alive[seq] = true
			size++
		}
	}
	view := make([]int64, 0, size)
	for at := next[0]; at != 0; at = next[at] {
		view = append(view, l.rec(at).mi)
	}
	return view, nil
}

// restoreLog rebuilds a log from events read back from anywhere, checking
// each one and that they fold, and returns it with its view. The events are
// copied. Its errors name the place from the events' point of view
// ("events[3]: ..."); callers say whose events they are.
//
// With owned true, the caller gives the events' maps and messages to the log
// (a decoder that made them), and they are not copied.
func restoreLog(id, parent uuid.UUID, forkSeq int64, events []Event, owned bool) (SessionLog, []int64, error) {
	l := SessionLog{id: id, parent: parent, forkSeq: forkSeq}
	if forkSeq < 0 || forkSeq > int64(len(events)) || (parent == uuid.Nil && forkSeq != 0) {
		return SessionLog{}, nil, fmt.Errorf("fork_seq %d of a log of %d events: %w", forkSeq, len(events), ErrInvalidLog)
	}
	for i := range events {
		e := &events[i]
		if want := int64(i + 1); e.Seq != want {
			return SessionLog{}, nil, fmt.Errorf("events[%d]: seq %d, want %d: %w", i, e.Seq, want, ErrInvalidLog)
		}
		if err := e.check(); err != nil {
			return SessionLog{}, nil, fmt.Errorf("events[%d]: %w", i, err)
		}
		r := record{typ: e.Type, at: e.CreatedAt, data: e.Data, first: e.First, last: e.Last}
		if !owned {
			r.data = jsonx.CloneMap(r.data)
		}
		if e.Message == nil { // check made sure a surface event has one
			l.push(&r)
			continue
		}
		m := *e.Message
		if !owned {
			m = m.clone()
		}
		l.pushMessage(&r, &m)
	}
	view, err := l.fold()
	if err != nil {
		return SessionLog{}, nil, err
	}
	return l, view, nil
}

// Fold returns the message view that events fold into, without any
// system-prompt overlay: what [Context.Messages] would return for a context
// whose log holds exactly these events. Stores and tools use it on a log read
// back from anywhere. The events must have seqs 1, 2, 3, ..., be well formed
// and fold; otherwise the error wraps [ErrInvalidLog], [ErrUnknownEventType]
// or [ErrInvalidMessage] and says which event is wrong.
func Fold(events []Event) ([]Message, error) {
	l, view, err := restoreLog(uuid.Nil, uuid.Nil, 0, events, false)
	if err != nil {
		return nil, fmt.Errorf("nous: fold: %w", err)
	}
	out := make([]Message, len(view))
	for i, mi := range view {
		out[i] = l.msg(mi).msg // already a copy the caller owns
	}
	return out, nil
}
