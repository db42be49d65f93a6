package nous

import (
	"iter"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// record is an event as the log stores it, without its message: a surface
// event's message is stored apart, in the log's messages, so that walking
// the view reads messages packed together and nothing else.
type record struct {
	typ         EventType
	at          time.Time
	data        map[string]any
	first, last int64 // replace events
	after       int64 // message events inserted after an entry
	// ref is, for a surface event, the index of its message in msgs; for a
	// tool_call event that records a call, 1 + the index of the call in
	// calls (0: it records none).
	ref int64
}

// call returns the index in calls of the call r records, and false when it
// records none.
func (r *record) call() (int64, bool) {
	if r.typ != EventToolCall || r.ref == 0 {
		return 0, false
	}
	return r.ref - 1, true
}

// logMessage is a surface event's message as the log keeps it, with the seq of
// its event.
type logMessage struct {
	msg Message
	seq int64
}

// eventLog is the storage of a session log: its identity and its events,
// appended by its [Context] and never changed in place. A [SessionLog] is a
// read-only handle on one.
type eventLog struct {
	id      uuid.UUID
	parent  uuid.UUID
	forkSeq int64
	name    string             // its name in a store; "" for none
	labels  map[string]string  // its labels; nil for none, never written
	recs    chunks[record]     // the events, recs.at(seq-1) for seq
	msgs    chunks[logMessage] // the surface events' messages, in append order
	calls   chunks[ToolCall]   // the calls tool_call events record, in append order
}

// emptyLog is what a nil or zero [SessionLog] reads: no events, no ID. It
// is never written.
var emptyLog eventLog

// len returns the number of events, which is also the seq of the last one.
func (l *eventLog) len() int64 { return l.recs.len() }

// rec returns the record with the given seq, which must be in the log. The
// record must not be modified.
func (l *eventLog) rec(seq int64) *record { return l.recs.at(seq - 1) }

// msg returns the message at index mi of the log's messages, an entry of a
// view. It must not be modified.
func (l *eventLog) msg(mi int64) *logMessage { return l.msgs.at(mi) }

// event returns the event with the given seq, which must be in the log, as
// an Event that shares nothing with the log.
func (l *eventLog) event(seq int64) Event {
	e := l.shared(seq)
	e.Data = jsonx.CloneMap(e.Data)
	if e.Message != nil {
		m := e.Message.clone()
		e.Message = &m
	}
	if e.Call != nil {
		tc := e.Call.clone()
		e.Call = &tc
	}
	return e
}

// shared returns the event with the given seq, which must be in the log,
// sharing its message, data and call with the log: for a reader that
// does not modify them. It is the one way from the log to an [Event];
// [recordOf] is the one way back.
func (l *eventLog) shared(seq int64) Event {
	r := l.rec(seq)
	e := Event{Seq: seq, Type: r.typ, Data: r.data, CreatedAt: r.at, First: r.first, Last: r.last, After: r.after}
	if r.typ.IsSurface() {
		e.Message = &l.msg(r.ref).msg
	}
	if ci, ok := r.call(); ok {
		e.Call = l.calls.at(ci)
	}
	return e
}

// pushCall appends r, a tool_call event, recording the call *tc, and
// returns its seq. tc must not be used elsewhere afterwards.
func (l *eventLog) pushCall(r *record, tc *ToolCall) int64 {
	r.ref = l.calls.push(tc) + 1
	return l.push(r)
}

// toolCalls returns the calls the log records, in order: the fold of its
// tool_call events, a copy the caller owns; nil for none.
func (l *eventLog) toolCalls() []ToolCall {
	n := l.calls.len()
	if n == 0 {
		return nil
	}
	out := make([]ToolCall, n)
	for i := range out {
		out[i] = l.calls.at(int64(i)).clone()
	}
	return out
}

// push appends r, a bookkeeping event, and returns its seq.
func (l *eventLog) push(r *record) int64 { return l.recs.push(r) + 1 }

// pushMessage appends r, a surface event, with its message *m, stored with
// its seq, and returns the index of the message in the log's messages: the
// entry the event adds to a view. m must not be used elsewhere afterwards.
func (l *eventLog) pushMessage(r *record, m *Message) int64 {
	r.ref = l.msgs.push(&logMessage{msg: *m, seq: l.len() + 1})
	l.push(r)
	return r.ref
}

// SessionLog is a read-only handle on the append-only event log behind a
// [Context]. Every message the context was given, every replacement and
// every bookkeeping event is in the log, in order, and nothing is ever
// removed; the message view is a fold of it.
//
// A log has an ID, a UUID v7 made when its context was created, and each
// event a Seq, 1, 2, 3, ...: the pair (ID, Seq) names an event anywhere, in a
// database as well as in memory. A log made by [Context.Clone] is a fork: it
// has its own ID and remembers its parent's ID and the seq it forked at.
//
// [Context.Log] returns a live handle, which sees the events the context
// appends later; [SessionLog.Snapshot] a frozen one that may be read on any
// goroutine. Nothing a SessionLog returns aliases the log, and nothing done
// to a handle changes its context. A nil or zero SessionLog reads as an
// empty log.
type SessionLog struct {
	l *eventLog
}

// log returns the storage h reads.
func (h *SessionLog) log() *eventLog {
	if h == nil || h.l == nil {
		return &emptyLog
	}
	return h.l
}

// Snapshot returns a handle on the log as it is now, which later appends do
// not change. It shares the events instead of copying them, so it costs the
// same for any length of log; and because the context only ever writes past
// what a snapshot sees, a snapshot may be read on another goroutine, by a
// store say, while the context's owner goes on.
func (h *SessionLog) Snapshot() *SessionLog { return &SessionLog{l: h.log().snapshot()} }

// newLogID returns a new UUID v7. NewV7 fails only when crypto/rand does,
// which since Go 1.24 crashes the program instead of returning an error.
func newLogID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// ID returns the log's ID. It is uuid.Nil only for an empty handle.
func (h *SessionLog) ID() uuid.UUID { return h.log().id }

// Parent returns, for a fork, the ID of the log it was forked from and the
// seq of the last event they share, with ok true. For a log that is not a
// fork it returns ok false.
func (h *SessionLog) Parent() (id uuid.UUID, seq int64, ok bool) {
	l := h.log()
	return l.parent, l.forkSeq, l.parent != uuid.Nil
}

// Name returns the log's name ([WithLogName]); "" for none.
func (h *SessionLog) Name() string { return h.log().name }

// Labels returns a copy of the log's labels ([WithLogLabels]); nil for none.
func (h *SessionLog) Labels() map[string]string { return cloneLabels(h.log().labels) }

// Len returns the number of events in the log, which is also the seq of the
// last one.
func (h *SessionLog) Len() int { return int(h.log().len()) }

// Events returns every event in append order. The slice, the events' maps
// and their messages are a copy the caller owns.
func (h *SessionLog) Events() []Event {
	out := make([]Event, 0, h.Len())
	for e := range h.All() {
		out = append(out, e)
	}
	return out
}

// All returns an iterator over the events in append order. Each event is a
// copy the caller owns.
func (h *SessionLog) All() iter.Seq[Event] { return h.Since(0) }

// Since returns an iterator over the events after seq, in append order, each
// a copy the caller owns. A store that has saved events up to seq appends
// the rest with it; it costs the events it yields, not the whole log. A live
// handle's iteration sees the events appended before each step.
func (h *SessionLog) Since(seq int64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		l := h.log()
		for s := max(seq, 0); s < l.len(); s++ { // s+1, not s, may overflow
			if !yield(l.event(s + 1)) {
				return
			}
		}
	}
}

// Event returns the event with the given seq, a copy the caller owns, and
// false when there is none.
func (h *SessionLog) Event(seq int64) (Event, bool) {
	l := h.log()
	if seq < 1 || seq > l.len() {
		return Event{}, false
	}
	return l.event(seq), true
}

// ToolCalls returns the calls the log's tool_call events record
// ([Context.AddToolCall]), in order: what Context.ToolCalls holds when
// nothing but the context wrote it. The slice and the calls are a copy the
// caller owns; nil for none.
func (h *SessionLog) ToolCalls() []ToolCall { return h.log().toolCalls() }

// fork returns a log that shares every event of l and appends on its own.
// It costs the same for any length of log: the chunks are shared, not
// copied, and clipped so that an append on either side cannot write where
// the other would read.
func (l *eventLog) fork() eventLog {
	return eventLog{
		id: newLogID(), parent: l.id, forkSeq: l.recs.len(), labels: l.labels, // a name is one log's
		recs: l.recs.clip(), msgs: l.msgs.clip(), calls: l.calls.clip(),
	}
}

// snapshot returns a copy of l that sees the events l has now and none it
// appends later; l's appends write only past what the copy can see.
func (l *eventLog) snapshot() *eventLog {
	s := *l
	s.recs, s.msgs, s.calls = l.recs.clip(), l.msgs.clip(), l.calls.clip()
	return &s
}

// prefix returns the log of l's first n events, sharing them, clipped as a
// fork's are: what l or the prefix appends, the other cannot see.
func (l *eventLog) prefix(n int64) eventLog {
	p := *l
	p.recs = l.recs.prefix(n)
	msgs, calls := int64(0), int64(0)
	for seq := n; seq >= 1 && (msgs == 0 || calls == 0); seq-- {
		r := l.rec(seq)
		if msgs == 0 && r.typ.IsSurface() {
			msgs = r.ref + 1
		}
		if i, ok := r.call(); ok && calls == 0 {
			calls = i + 1
		}
	}
	p.msgs, p.calls = l.msgs.prefix(msgs), l.calls.prefix(calls)
	return p
}
