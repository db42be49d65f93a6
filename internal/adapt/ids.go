package adapt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nous-go/nous"
)

// CallIDs are the tool-call IDs to send for a view to an API that wants
// each call's ID unique in a request and of a form it takes: a call keeps
// its ID when it is of that form and no call before it in the view has it;
// any other (an ID from a server that numbers calls per turn, call_0 each
// time, or one with characters the API refuses) is sent as a made-up one,
// and its results with it. The made-up ID is a function of the view: the
// ID made valid, then _2, _3, ... (the first of those no call in the view
// has), cut to fit; so the same view sends the same IDs, and a view that
// grows keeps those of its earlier turns (a prompt cache sees the same
// prefix). The log keeps the IDs as they came.
type CallIDs struct {
	calls   map[[2]int]string // (view index, call index) → the ID sent
	results map[int]string    // the view index of a tool message → the ID sent
	back    map[string]string // an ID sent → the call's own
}

// NewCallIDs returns the IDs to send for msgs, a view whose pairing holds:
// valid reports whether an ID is of the API's form, and max (0 for none)
// is the length it takes.
func NewCallIDs(msgs []nous.Message, valid func(id string) bool, max int) *CallIDs {
	ids := &CallIDs{calls: map[[2]int]string{}, results: map[int]string{}, back: map[string]string{}}
	taken := map[string]bool{} // every ID of the view, and every ID made up
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			taken[tc.ID] = true
		}
	}
	used := map[string]bool{} // the IDs sent so far
	open := map[string]string{}
	for i, m := range msgs {
		if m.Role == nous.RoleTool {
			ids.results[i] = open[m.ToolCallID]
			if ids.results[i] == "" {
				ids.results[i] = m.ToolCallID
			}
			continue
		}
		for k, tc := range m.ToolCalls {
			sent := tc.ID
			if used[sent] || !valid(sent) || max > 0 && len(sent) > max {
				sent = madeUp(tc.ID, taken, valid, max)
				taken[sent] = true
			}
			used[sent] = true
			open[tc.ID] = sent
			ids.calls[[2]int{i, k}] = sent
			ids.back[sent] = tc.ID
		}
	}
	return ids
}

// madeUp returns an ID of the form valid takes, not in taken, made of id.
func madeUp(id string, taken map[string]bool, valid func(string) bool, max int) string {
	base := strings.Map(func(r rune) rune {
		if valid(string(r)) {
			return r
		}
		return '_'
	}, id)
	if base == "" || !valid(base) {
		base = "call"
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		b := base
		if max > 0 && len(b)+len(suffix) > max {
			cut := max - len(suffix)
			for cut > 0 && !utf8.RuneStart(b[cut]) {
				cut-- // a whole character, or none
			}
			b = b[:cut]
		}
		if cand := b + suffix; !taken[cand] && valid(cand) {
			return cand
		}
	}
}

// Call returns the ID to send for call k of view message i.
func (ids *CallIDs) Call(i, k int, id string) string {
	if sent, ok := ids.calls[[2]int{i, k}]; ok {
		return sent
	}
	return id
}

// Result returns the ID to send for the tool message at view index i,
// whose ToolCallID is id.
func (ids *CallIDs) Result(i int, id string) string {
	if sent, ok := ids.results[i]; ok {
		return sent
	}
	return id
}

// Original returns the call's own ID for an ID sent, and the ID itself for
// any other: what an adapter reads back from a reply that names a call
// of the request.
func (ids *CallIDs) Original(sent string) string {
	if id, ok := ids.back[sent]; ok {
		return id
	}
	return sent
}

// DistinctIDs gives each of calls, a reply's, an ID no other of them has:
// a call without one, or with one a call before it has (a server that
// gives none, or the same to parallel calls), gets one made of its own,
// or of "call", with _2, _3, ... after it. Without it the context would
// refuse the reply (a call without an ID), or hold one whose results no
// provider could pair. It returns the indices of the calls it changed.
func DistinctIDs(calls []nous.ToolCall) []int {
	taken := map[string]bool{}
	for _, tc := range calls {
		taken[tc.ID] = true
	}
	seen := map[string]bool{}
	var changed []int
	for k := range calls {
		if id := calls[k].ID; id == "" || seen[id] {
			calls[k].ID = madeUp(id, taken, func(s string) bool { return s != "" }, 0)
			taken[calls[k].ID] = true
			changed = append(changed, k)
		}
		seen[calls[k].ID] = true
	}
	return changed
}
