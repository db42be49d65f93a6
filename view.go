package nous

import (
	"iter"
	"slices"
	"time"
)

// view is a context's message view as it is kept: the entries of the
// log's messages that the fold of the log gives, in order, and the
// system-prompt overlay as it shows at their head. The log holds the
// messages; a view holds where they are, and never writes them.
//
// A clone shares its entries' backing array with the view it came from
// (shared, on both): whichever side writes in place first copies them.
type view struct {
	entries  []int64 // indices in the log's msgs
	shared   bool    // entries' backing array is another view's too
	overlay  string
	lead     Message  // the first message as read, when the overlay changes it
	leadMode leadMode // how the overlay shows in the view
}

// offset is the number of messages the view shows before its entries: 1
// for an overlay that is a system message of its own, 0 otherwise.
func (v *view) offset() int {
	if v.leadMode == leadSynthetic {
		return 1
	}
	return 0
}

// len returns the number of messages the view shows, the overlay's own
// included.
func (v *view) len() int { return len(v.entries) + v.offset() }

// at returns message i of the view as shown, 0 <= i < len, read from l. It
// must not be modified.
func (v *view) at(l *eventLog, i int) *Message {
	if v.leadMode != leadNone && i == 0 {
		return &v.lead
	}
	return &l.msg(v.entries[i-v.offset()]).msg
}

// all returns an iterator over the view as shown, read from l, without
// copying.
func (v *view) all(l *eventLog) iter.Seq2[int, Message] {
	return func(yield func(int, Message) bool) {
		entries, off := v.entries, 0
		if v.leadMode != leadNone {
			if !yield(0, v.lead) {
				return
			}
			off = 1
			if v.leadMode == leadOverlaid { // the lead stands for entries[0]
				entries = entries[1:]
			}
		}
		// Entries of a view mostly follow each other: look the chunk up
		// only when the entry leaves the last one. Comparing with the
		// chunk's length, not chunkSize, also looks it up again for an
		// entry appended since, should the loop body break the rule that
		// the context does not change during the walk.
		msgs := &l.msgs
		var chunk []logMessage
		var base int64
		for i, mi := range entries {
			if uint64(mi-base) >= uint64(len(chunk)) {
				base = mi &^ (chunkSize - 1)
				chunk = msgs.chunk(mi)
			}
			if !yield(off+i, chunk[mi-base].msg) {
				return
			}
		}
	}
}

// put puts entry mi in slot s (see [eventLog.slotOf]). An append writes
// past the entries, where no other view reads; any other write copies
// entries shared with another view first, in the same pass.
func (v *view) put(s slot, mi int64) {
	switch {
	case s.n == 0 && s.at == len(v.entries):
		v.entries = append(v.entries, mi)
	case v.shared:
		e := make([]int64, 0, len(v.entries)+1-s.n)
		e = append(append(e, v.entries[:s.at]...), mi)
		v.entries, v.shared = append(e, v.entries[s.at+s.n:]...), false
	default:
		v.entries = s.fill(v.entries, mi)
	}
}

// fork returns a view of the same entries for a clone; both sides then
// copy them before a write in place.
func (v *view) fork() view {
	d := *v
	d.entries = slices.Clip(v.entries)
	d.shared, v.shared = true, true
	return d
}

// refreshLead recomputes how the overlay shows, after the overlay or the
// first entry changed; l holds the entries, startedAt stamps an overlay
// shown before no message.
func (v *view) refreshLead(l *eventLog, startedAt time.Time) {
	switch {
	case v.overlay == "":
		v.lead, v.leadMode = Message{}, leadNone
	case len(v.entries) > 0 && l.msg(v.entries[0]).msg.Role == RoleSystem:
		v.lead, v.leadMode = withOverlay(l.msg(v.entries[0]).msg, v.overlay), leadOverlaid
	default:
		// Stamped like the message it goes before, or with the start of
		// the run, so that the view's timestamps do not decrease.
		at := startedAt
		if len(v.entries) > 0 {
			at = l.msg(v.entries[0]).msg.CreatedAt
		}
		v.lead, v.leadMode = Message{Role: RoleSystem, Content: v.overlay, CreatedAt: at}, leadSynthetic
	}
}
