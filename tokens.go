package nous

import (
	"math"
	"reflect"
)

// TokenCounter counts the tokens a message costs in a model request, its
// own framing (role, IDs, per-message overhead) included.
type TokenCounter interface {
	CountTokens(m Message) int
}

// ApproxCounter counts a quarter of a token per byte of a message's text,
// reasoning and thinking, tool names, arguments and IDs, rounded up, plus
// [ApproxMessageTokens] of framing per message and [ApproxAttachmentTokens]
// per image or file part, whatever its size (never the length of its
// base64). Its zero value is ready to use. It is an estimate that needs
// no vocabulary: against OpenAI's o200k_base it is within a third on
// English, code and JSON, counts up to twice too many on scripts of several
// bytes a character, and about half too few on long numbers and IDs, which
// a vocabulary splits finely (leave room for those with [WithReserve]). An
// exact counter (the module github.com/nous-go/nous/tokens/tiktoken) can
// take its place.
type ApproxCounter struct{}

// The fixed costs of [ApproxCounter].
const (
	ApproxMessageTokens    = 4   // framing per message
	ApproxAttachmentTokens = 512 // per image or file part
)

// CountTokens implements [TokenCounter].
func (ApproxCounter) CountTokens(m Message) int {
	n := len(m.Role) + len(m.Content) + len(m.ReasoningContent) + len(m.ToolCallID) + len(m.Name)
	attachments := 0
	for _, p := range m.Parts {
		switch p.Type {
		case PartText, PartThinking:
			n += len(p.Content)
		default:
			attachments++
		}
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return (n+3)/4 + ApproxMessageTokens + attachments*ApproxAttachmentTokens
}

// maxTokens bounds what a counter may say of one message (or a reserve):
// a count beyond it is taken as it, so that sums of counts never overflow.
const maxTokens = 1 << 40

// countTokens returns what tc counts of m, within [0, maxTokens].
func countTokens(tc TokenCounter, m Message) int { return min(max(tc.CountTokens(m), 0), maxTokens) }

// tokenCache is what a [Context] keeps of compaction's counting between
// calls, so that a plan costs the messages added since the last one, not
// the view: what one counter counted of each log message (a message in the
// log never changes), and the index of the view as of the last plan
// ([cutIndex]), which holds the prefix sums of those counts. It is the
// context's only compaction state: a clone starts with an empty one.
//
// The counts are the counter's: a call of compaction reads them only when
// its counter is the one they were counted with (see [tokenCache.bind]);
// a call whose counter cannot be told from another counts in a cache of
// its own, which it drops, and leaves the context's as it was.
type tokenCache struct {
	counter TokenCounter // whose counts these are; nil: nobody's yet
	counts  []int32      // by log message index: count+1; 0: not counted
	cuts    cutIndex     // the view as of the last plan
	limit   int          // the tool-result limit shortened holds results for
	short   map[int64]shortened
}

// shortened is what pruning makes of a tool result over the limit: the
// message it is shortened to, and the tokens that saves (0: none, the
// result is left as it is).
type shortened struct {
	msg   *Message // never written: plans share it
	saved int
}

// bind makes t the cache of tc's counts and reports whether it is: it keeps
// what it holds when tc is equal by == to the counter it holds them for,
// and starts empty for tc otherwise. A counter whose value == cannot
// compare (a func, a map or a slice, or a struct holding one, also in an
// interface field) cannot be told from another: bind returns false and
// leaves t as it was.
//
// Only a new counter costs reflection (reflect.Value.Comparable, which
// looks at the value, not only its type). The counter t holds passed it, and
// == of a value that passed it with any other never panics (values of
// another dynamic type differ; values of its own compare field by field,
// each with the same guarantee), so a call with the counter of the last one
// costs one ==.
func (t *tokenCache) bind(tc TokenCounter) bool {
	if t.counter != nil && t.counter == tc {
		return true
	}
	if !reflect.ValueOf(tc).Comparable() {
		return false
	}
	*t = tokenCache{counter: tc}
	return true
}

// count returns what tc counts of m, the log message mi, from the cache
// when it holds it.
func (t *tokenCache) count(tc TokenCounter, mi int64, m *Message) int {
	if need := int(mi) + 1; len(t.counts) < need {
		t.counts = append(t.counts, make([]int32, need-len(t.counts))...)
	}
	if v := t.counts[mi]; v > 0 {
		return int(v) - 1
	}
	k := countTokens(tc, *m) // a count is never below zero
	if k < math.MaxInt32 {
		t.counts[mi] = int32(k) + 1
	}
	return k
}

// cutIndex is where a compaction may cut the view, and what the view costs
// up to each place: for the view as of the last plan, the prefix sums of
// its counts and the places where a cut would separate a call from its
// result, or signed thinking from its calls. It lives in the [tokenCache]
// (its sums are one counter's), and follows the view by appends: a plan
// indexes the messages added since the last one; a view that changed
// otherwise (a replacement, an insertion) is indexed again, its counts
// from the cache.
type cutIndex struct {
	entries   []int64          // the view (c.view.entries) the rest describes
	pre       []int64          // pre[i]: the counts of entries[:i]
	straddled []bool           // straddled[i]: a cut at i separates a call in entries[:i] from a result in entries[i:], or signed thinking from its calls
	open      map[string][]int // the positions of the calls of each ID no result answered yet
	last      map[string]int   // the position of the last call of each ID
	signedRun int              // 1 + the position of the first signed thinking in the run of assistant messages without calls going on; 0: none

	// Pruning's account of the view, for one tool-result limit (see
	// [compaction.indexPrunes]); limit 0: none kept.
	limit  int     // the limit it is for
	saved  []int64 // saved[i]: the tokens shortening the tool results of entries[:i] over the limit saves
	pruned []prune // the tool results it shortens, by position
}

// prune is a tool result a plan shortens.
type prune struct {
	pos   int      // its position in c.view.entries
	entry int64    // the log message it is
	msg   *Message // what it is shortened to, the token cache's: never written
}
