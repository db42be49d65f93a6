package nous

import (
	"math"
	"reflect"
	"slices"
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

// tokenCache is what planning keeps of the log's view between plans, so
// that a plan costs the messages added since the last one, not the view:
// what the counter counted of each log message (a message in the log never
// changes), and, for the view as of the last plan, the prefix sums of the
// counts and where a cut would separate a call from a result. A view that
// changed otherwise than by appends (a replacement, an insertion) is
// indexed again.
type tokenCache struct {
	counter TokenCounter
	counts  []int32 // by log message index: count+1; 0: not counted

	entries   []int64          // the view (c.view) the rest describes
	pre       []int64          // pre[i]: the counts of entries[:i]
	straddled []bool           // straddled[i]: a call in entries[:i] has a result in entries[i:]
	open      map[string][]int // the positions of the calls of each ID no result answered yet
	last      map[string]int   // the position of the last call of each ID
	signedRun int              // 1 + the position of the first signed thinking in the run of assistant messages without calls going on; 0: none
}

// maxTokens bounds what a counter may say of one message (or a reserve):
// a count beyond it is taken as it, so that sums of counts never overflow.
const maxTokens = 1 << 40

// tokens returns what tc counts of m, within [0, maxTokens].
func tokens(tc TokenCounter, m Message) int { return min(max(tc.CountTokens(m), 0), maxTokens) }

// count returns what tc counts of log message mi, from the cache when tc is
// the counter it holds.
func (c *Context) count(tc TokenCounter, mi int64) int {
	if c.tokens.counter == nil {
		return tokens(tc, c.log.msg(mi).msg)
	}
	if need := int(mi) + 1; len(c.tokens.counts) < need {
		c.tokens.counts = append(c.tokens.counts, make([]int32, need-len(c.tokens.counts))...)
	}
	if v := c.tokens.counts[mi]; v > 0 {
		return int(v) - 1
	}
	k := tokens(tc, c.log.msg(mi).msg) // a count is never below zero
	if k < math.MaxInt32 {
		c.tokens.counts[mi] = int32(k) + 1
	}
	return k
}

// index brings c.tokens up to date with the view, for counter tc, and
// returns it: the messages appended since the last plan are counted and
// indexed; a view that changed otherwise is indexed again (its counts come
// from the cache).
func (c *Context) index(tc TokenCounter) *tokenCache {
	t := &c.tokens
	if !sameValue(t.counter, tc) {
		*t = tokenCache{}
		if reflect.ValueOf(tc).Comparable() {
			t.counter = tc
		}
	}
	k := len(t.entries)
	if k == 0 || t.counter == nil || k > len(c.view) || !slices.Equal(c.view[:k], t.entries) {
		k = 0
		t.entries, t.pre, t.straddled, t.open, t.last = t.entries[:0], append(t.pre[:0], 0), t.straddled[:0], map[string][]int{}, map[string]int{}
		t.signedRun = 0
	}
	for i := k; i < len(c.view); i++ {
		mi := c.view[i]
		m := &c.log.msg(mi).msg
		t.entries = append(t.entries, mi)
		t.pre = append(t.pre, t.pre[i]+int64(c.count(tc, mi)))
		t.straddled = append(t.straddled, false)
		if m.Role == RoleTool {
			// It answers the last call of its ID still unanswered (so that
			// an old call no result answered, whose ID a later turn's call
			// reuses, holds no cut), or, a second result, the last call of
			// its ID: either way the two stay on one side of a cut.
			p, ok := t.last[m.ToolCallID]
			if q := t.open[m.ToolCallID]; len(q) > 0 {
				p, ok, t.open[m.ToolCallID] = q[len(q)-1], true, q[:len(q)-1]
			}
			for j := p + 1; ok && j <= i; j++ { // cuts between the call and this result
				t.straddled[j] = true
			}
		}
		for _, call := range m.ToolCalls {
			t.open[call.ID] = append(t.open[call.ID], i)
			t.last[call.ID] = i
		}
		// Signed thinking goes with the calls after it, through the
		// assistant messages without calls between them: no cut there.
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) == 0:
			if t.signedRun == 0 && signedThinking(m) {
				t.signedRun = i + 1
			}
		case m.Role == RoleAssistant && t.signedRun > 0:
			for j := t.signedRun; j <= i; j++ {
				t.straddled[j] = true
			}
			t.signedRun = 0
		default:
			t.signedRun = 0
		}
	}
	if t.counter == nil { // not kept: a counter that cannot be compared
		defer func() { c.tokens = tokenCache{} }()
		cp := *t
		return &cp
	}
	return t
}
