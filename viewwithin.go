package nous

import "fmt"

// ViewWithin returns the view compacted into budget tokens (or into
// [WithTarget], as a plan would be), with a marker, "[N earlier messages
// omitted]", in place of the range a plan would replace, without changing
// the context or calling a summarizer; the messages are the caller's
// copies. When nothing fits it returns an error wrapping [ErrOverBudget]
// and the smallest valid view: the leading system messages, a marker, and
// everything from the last safe cut at or before the active turn (the view
// itself when nothing can be dropped).
func (c *Context) ViewWithin(budget int, opts ...CompactOption) ([]Message, error) {
	k := newCompaction(c, opts)
	k.summaryReserve = k.count(marker(1)) // each cut's own marker is counted by markerFits
	if k.total+k.reserve <= budget {
		return k.viewWithMarker(cut{}), nil
	}
	k.indexPrunes()
	k.prunes = k.listPrunes()
	goals, n := k.goals(budget)
	for _, goal := range goals[:n] {
		if x, ok := k.within(goal); ok {
			return k.viewWithMarker(x), nil
		}
	}
	_, _, fallback := k.search(budget)
	return k.viewWithMarker(fallback), fmt.Errorf("nous: view within %d tokens: %w", budget, k.overBudget(budget))
}

// within returns the cut whose view, with its marker, fits goal. A plan
// prices the marker of one omitted message, and the overlay as it shows on
// the head it has now: the real marker, and the overlay on it when it takes
// the head's place, are counted, and a tighter plan made while they miss.
func (k *compaction) within(goal int) (cut, bool) {
	if pruned := k.total + k.reserve - k.savedBy(0, 0); len(k.prunes) > 0 && pruned <= goal {
		return cut{after: pruned}, true
	}
	var fallback cut
	for b := goal; b >= goal-8; b-- {
		best, ok, fb := k.search(b)
		if b == goal {
			fallback = fb
		}
		if !ok {
			break
		}
		if k.markerFits(best, goal) {
			return best, true
		}
	}
	if fallback.hi > fallback.lo && k.markerFits(fallback, goal) { // planned with more than its real marker, it fits
		return fallback, true
	}
	return cut{}, false
}

// markerFits reports whether the view with the range of cut x replaced by
// its marker fits budget: x.after with the marker and the overlay as they
// show in place of the summary reserve and the overlay as planned.
func (k *compaction) markerFits(x cut, budget int) bool {
	mk := marker(x.hi - x.lo)
	cost := k.count(mk) + k.overlay
	if x.lo == 0 && k.c.view.leadMode == leadOverlaid {
		cost = k.count(withOverlay(mk, k.c.view.overlay))
	}
	return x.after-k.summaryReserve-k.overlay-k.join(x.lo)+cost <= budget
}

// viewWithMarker returns the view, the caller's copy, with the range of
// cut x replaced by its marker (none when x is empty) and the tool results
// of k.prunes pruned.
func (k *compaction) viewWithMarker(x cut) []Message {
	c, off := k.c, k.c.overlayOffset()
	out := make([]Message, 0, off+len(c.view.entries)-(x.hi-x.lo)+1)
	j := 0 // the next prune
	for i, m := range c.All() {
		at := i - off
		for j < len(k.prunes) && k.prunes[j].pos < at {
			j++
		}
		if j < len(k.prunes) && k.prunes[j].pos == at {
			m = *k.prunes[j].msg
		}
		switch {
		case at == x.lo && x.hi > x.lo:
			mk := marker(x.hi - x.lo)
			mk.CreatedAt = m.CreatedAt
			if x.lo == 0 && c.view.leadMode == leadOverlaid {
				mk = withOverlay(mk, c.view.overlay) // as the overlay joins a summary there
			}
			out = append(out, mk)
		case at >= x.lo && at < x.hi:
		default:
			out = append(out, m.clone())
		}
	}
	return out
}
