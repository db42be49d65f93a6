package nous

import (
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// The fold: what each event does to the message view. slotOf is its one
// step, which every append goes through, live (AddMessage, a replacement,
// a patched result) or read back (Refresh); fold is its batch form for a
// log read whole (Load, Deserialize), checked against the step by a test.

// slot is where an event puts its message in a view: at index at, in
// place of the n entries from there, or before entry at when n is 0 (at
// the end when at is the view's length). ok is false for an event that
// puts no message: a bookkeeping event changes nothing.
type slot struct {
	at, n int
	ok    bool
}

// fill returns entries with entry mi put in s, written in place: the
// caller owns entries.
func (s slot) fill(entries []int64, mi int64) []int64 {
	return slices.Replace(entries, s.at, s.at+s.n, mi)
}

// slotOf returns where r, the next event of l, puts its message in
// entries, the fold of l so far. near is where the caller expects it (a
// live replacement knows its range), which spares the search when it is
// right and changes nothing when it is not; the zero slot for no guess. A message event appends its message, or
// inserts it right after the entry of the event its After names; a replace
// event puts its message where the entry of First is and removes every
// entry from there to the entry of Last; a bookkeeping event puts nothing.
// Anchors that are not in entries, in that order, are an error wrapping
// [ErrInvalidLog].
func (l *eventLog) slotOf(entries []int64, r *record, near slot) (slot, error) {
	switch {
	case r.typ == EventReplace:
		f, z := l.position(entries, r.first, near.at), l.position(entries, r.last, near.at+near.n-1)
		if f < 0 || z < f {
			return slot{}, fmt.Errorf("replace anchors %d..%d are not in the view in that order: %w", r.first, r.last, ErrInvalidLog)
		}
		return slot{at: f, n: z - f + 1, ok: true}, nil
	case !r.typ.IsSurface():
		return slot{}, nil
	case r.after != 0:
		a := l.position(entries, r.after, near.at-1)
		if a < 0 {
			return slot{}, fmt.Errorf("after %d, which is not in the view: %w", r.after, ErrInvalidLog)
		}
		return slot{at: a + 1, ok: true}, nil
	}
	return slot{at: len(entries), ok: true}, nil
}

// add appends the event r to l, with its message m (a surface event) or
// the call tc it records (a tool_call event; nil for none), and returns
// where it puts its message in entries, the fold of l so far (near: see
// slotOf), and the message's index in l's messages: the caller puts it
// there. An event that
// does not fold is an error, and l is as it was. m and tc are l's
// afterwards.
func (l *eventLog) add(entries []int64, r *record, m *Message, tc *ToolCall, near slot) (slot, int64, error) {
	s, err := l.slotOf(entries, r, near)
	switch {
	case err != nil:
		return slot{}, 0, err
	case s.ok:
		return s, l.pushMessage(r, m), nil
	case tc != nil:
		l.pushCall(r, tc)
	default:
		l.push(r)
	}
	return s, 0, nil
}

// addRead is add for e, the next event of l as read back from a store,
// which it checks first. e's maps and message are l's afterwards.
func (l *eventLog) addRead(entries []int64, e *Event) (slot, int64, error) {
	if e.Seq != l.len()+1 {
		return slot{}, 0, fmt.Errorf("seq %d after %d: %w", e.Seq, l.len(), ErrInvalidLog)
	}
	if err := e.check(); err != nil {
		return slot{}, 0, err
	}
	r, m, tc := recordOf(e)
	return l.add(entries, &r, m, tc, slot{})
}

// position returns the position in entries of the message of the event
// with the given seq, or -1 when it is not there: at near when it is there
// (an entry is at one position only), else wherever it is.
func (l *eventLog) position(entries []int64, seq int64, near int) int {
	if near >= 0 && near < len(entries) && l.msg(entries[near]).seq == seq {
		return near
	}
	return entryOf(entries, l.msgIndex(seq))
}

// msgIndex returns the index in l's messages of the message of the event
// with the given seq, or -1 when no message event has it: messages are
// stored in seq order, so a binary search finds it.
func (l *eventLog) msgIndex(seq int64) int64 {
	lo, hi := int64(0), l.msgs.len()
	for lo < hi {
		mid := lo + (hi-lo)/2
		if l.msg(mid).seq < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < l.msgs.len() && l.msg(lo).seq == seq {
		return lo
	}
	return -1
}

// entryOf returns the position of entry mi in view, or -1, looking from
// both ends at once: an anchor near either end (a compaction's first
// message, the call a patched result follows) is found in the steps it is
// from that end.
func entryOf(view []int64, mi int64) int {
	if mi < 0 {
		return -1
	}
	for i, j := 0, len(view)-1; i <= j; i, j = i+1, j-1 {
		if view[i] == mi {
			return i
		}
		if view[j] == mi {
			return j
		}
	}
	return -1
}

// fold projects the whole log into the message view: the entries (indices
// in the log's messages) of the messages that make up the view, in order.
// It is slotOf applied to every event, in batch: the view is kept as a
// linked list over seqs, so a log with many replacements folds in time
// linear in its length, where the step would move the entries after each
// replacement.
func (l *eventLog) fold() ([]int64, error) {
	n := l.len()
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
			at := prev[0] // the tail, unless the event says after which entry
			if r.after != 0 {
				if at = r.after; !alive[at] {
					return nil, fmt.Errorf("events[%d]: after %d, which is not in the view: %w", seq-1, at, ErrInvalidLog)
				}
			}
			prev[seq], next[seq] = at, next[at]
			prev[next[at]], next[at] = seq, seq
			alive[seq] = true
			size++
		}
	}
	view := make([]int64, 0, size)
	for at := next[0]; at != 0; at = next[at] {
		view = append(view, l.rec(at).ref)
	}
	return view, nil
}

// recordOf returns e as the log keeps it: its record, and its message (a
// surface event) or the call it records, shared with e. It is the one way
// from an [Event] to the log; [eventLog.shared] is the one way back.
func recordOf(e *Event) (record, *Message, *ToolCall) {
	return record{typ: e.Type, at: e.CreatedAt, data: e.Data, first: e.First, last: e.Last, after: e.After}, e.Message, e.Call
}

// owned returns copies of the record's data, message and call: what the
// log keeps of an event the caller still holds.
func owned(r record, m *Message, tc *ToolCall) (record, *Message, *ToolCall) {
	r.data = jsonx.CloneMap(r.data)
	if m != nil {
		c := m.clone()
		m = &c
	}
	if tc != nil {
		c := tc.clone()
		tc = &c
	}
	return r, m, tc
}

// restoreLog rebuilds a log from events read back from anywhere, checking
// each one and that they fold, and returns it with its view. Its errors
// name the place from the events' point of view ("events[3]: ...");
// callers say whose events they are.
//
// With owned true, the caller gives the events' maps and messages to the
// log (a decoder that made them), and they are not copied.
func restoreLog(id, parent uuid.UUID, forkSeq int64, events []Event, isOwned bool) (eventLog, []int64, error) {
	l := eventLog{id: id, parent: parent, forkSeq: forkSeq}
	if forkSeq < 0 || forkSeq > int64(len(events)) || (parent == uuid.Nil && forkSeq != 0) {
		return eventLog{}, nil, fmt.Errorf("fork_seq %d of a log of %d events: %w", forkSeq, len(events), ErrInvalidLog)
	}
	for i := range events {
		e := &events[i]
		if want := int64(i + 1); e.Seq != want {
			return eventLog{}, nil, fmt.Errorf("events[%d]: seq %d, want %d: %w", i, e.Seq, want, ErrInvalidLog)
		}
		if err := e.check(); err != nil {
			return eventLog{}, nil, fmt.Errorf("events[%d]: %w", i, err)
		}
		r, m, tc := recordOf(e)
		if !isOwned {
			r, m, tc = owned(r, m, tc)
		}
		l.pushEvent(&r, m, tc)
	}
	view, err := l.fold()
	if err != nil {
		return eventLog{}, nil, err
	}
	return l, view, nil
}

// pushEvent appends r with its message or call, unfolded: for fold, which
// folds the whole log once it is read.
func (l *eventLog) pushEvent(r *record, m *Message, tc *ToolCall) {
	switch {
	case r.typ.IsSurface():
		l.pushMessage(r, m)
	case tc != nil:
		l.pushCall(r, tc)
	default:
		l.push(r)
	}
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
