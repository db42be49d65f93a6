package nous

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"unicode/utf8"
)

// MetadataPruned is the Metadata key, set to true, that marks a tool
// result a compaction shortened ([WithToolResultLimit]): its content is
// the head and the tail of the original, which stays in the log, with a
// marker between them saying how much was cut. A pruned result is never
// pruned again.
const MetadataPruned = "compaction_pruned"

// WithToolResultLimit makes a compaction shorten, before it summarizes
// anything, every tool result of the view (the active turn's too) that
// counts over tokens: in place, by [Context.ReplaceMessage], into a tool
// message answering the same call whose content is the head and the tail
// of the original, as much of them as fits tokens, joined by a marker
// saying how many bytes were cut; the original stays in the log. When that
// alone brings the view within the budget (or [WithTarget]), nothing is
// summarized. Only a view over the budget is pruned; a result marked with
// [MetadataPruned] is not pruned again, nor one whose content is too short
// to gain by it. tokens < 1 (the default): off.
func WithToolResultLimit(tokens int) CompactOption {
	return func(o *compactConfig) { o.resultLimit = tokens }
}

// indexPrunes brings the cut index's account of pruning up to date with
// the view, for the call's limit: what shortening each tool result over
// it saves, as prefix sums beside the counts' (cutIndex.saved), and where
// those results are (cutIndex.pruned). Like the counts, it follows the view
// by appends: a plan looks only at the messages added since the last one,
// and a plan that finds nothing to prune before the active turn never
// looks at the results it already knows. A new limit indexes the view
// again, from the shortened results the token cache keeps.
func (k *compaction) indexPrunes() {
	if k.resultLimit <= 0 {
		return
	}
	x := k.cuts
	if x.limit != k.resultLimit {
		// A new slice: plans share the old one's elements.
		x.limit, x.saved, x.pruned = k.resultLimit, append(x.saved[:0], 0), nil
	}
	for i := len(x.saved) - 1; i < len(x.entries); i++ {
		mi, saved := x.entries[i], 0
		m := &k.c.log.msg(mi).msg
		if n := int(x.pre[i+1] - x.pre[i]); m.Role == RoleTool && n > k.resultLimit && m.Metadata[MetadataPruned] != true {
			if s := k.shortened(mi, m, n); s.saved > 0 {
				saved, x.pruned = s.saved, append(x.pruned, prune{pos: i, entry: mi, msg: s.msg})
			}
		}
		x.saved = append(x.saved, x.saved[i]+int64(saved))
	}
	k.pruning = true
}

// listPrunes returns the tool results a plan of the view shortens, by
// position, each with what it is shortened to: the index's own list,
// which only grows at its end (a new one takes its place when it is made
// again), so that a plan shares it and costs no copy of it.
func (k *compaction) listPrunes() []prune {
	if !k.pruning {
		return nil
	}
	return slices.Clip(k.cuts.pruned)
}

// shortened returns what pruning makes of m, log message mi, a tool result
// that counts n: from the token cache when it holds it for the limit (a
// message of the log never changes, and the cache is the counter's), so
// that a plan shortens only the results added since the last one.
func (k *compaction) shortened(mi int64, m *Message, n int) shortened {
	t := k.cache
	if t.limit != k.resultLimit || t.short == nil {
		t.limit, t.short = k.resultLimit, map[int64]shortened{}
	}
	if s, ok := t.short[mi]; ok {
		return s
	}
	var s shortened
	if short, ok := k.shorten(m); ok {
		if saved := n - k.count(short); saved > 0 {
			s = shortened{msg: &short, saved: saved}
		}
	}
	t.short[mi] = s
	return s
}

// savedBefore returns the tokens pruning saves before position i.
func (k *compaction) savedBefore(i int) int {
	if !k.pruning {
		return 0
	}
	return int(k.cuts.saved[i])
}

// savedBy returns the tokens pruning saves outside the range [lo, hi).
func (k *compaction) savedBy(lo, hi int) int {
	if !k.pruning {
		return 0
	}
	return k.savedBefore(lo) + int(k.cuts.saved[len(k.cuts.saved)-1]) - k.savedBefore(hi)
}

// shorten returns the tool result m with as much of the head and the tail
// of its content as fits the limit, joined by the marker of what was cut
// (the marker alone when nothing more fits), marked with [MetadataPruned];
// ok is false when that is no shorter than m's content. m is not written.
func (k *compaction) shorten(m *Message) (short Message, ok bool) {
	text := m.Content
	cut := func(keep int) Message {
		s := *m // its maps are m's: counted, never written
		head := keep / 2
		for head > 0 && !utf8.RuneStart(text[head]) {
			head--
		}
		tail := len(text) - (keep - head)
		for tail < len(text) && !utf8.RuneStart(text[tail]) {
			tail++
		}
		s.Content = text[:head] + fmt.Sprintf("\n[... %d of %d bytes cut ...]\n", tail-head, len(text)) + text[tail:]
		return s
	}
	// The most kept whose count fits the limit: counts grow with what is kept.
	keep := sort.Search(len(text), func(keep int) bool { return k.count(cut(keep+1)) > k.resultLimit })
	short = cut(keep)
	if len(short.Content) >= len(text) {
		return Message{}, false
	}
	short.Metadata = maps.Clone(m.Metadata)
	if short.Metadata == nil {
		short.Metadata = map[string]any{}
	}
	short.Metadata[MetadataPruned] = true
	return short, true
}
