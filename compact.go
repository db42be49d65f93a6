package nous

import (
	"context"
	"fmt"
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

// Summarizer writes the message that replaces a compacted range.
type Summarizer interface {
	// Summarize returns the summary of dropped, its own copy of the range
	// the compaction replaces. It may take long and run on any goroutine:
	// [Context.Compact] calls it without holding anything.
	Summarize(ctx context.Context, dropped []Message) (Message, error)
}

// SummarizerFunc is a function that is a [Summarizer].
type SummarizerFunc func(ctx context.Context, dropped []Message) (Message, error)

// Summarize implements [Summarizer].
func (f SummarizerFunc) Summarize(ctx context.Context, dropped []Message) (Message, error) {
	return f(ctx, dropped)
}

// CompactOption configures [Context.PlanCompaction], [Context.Compact] and
// [Context.ViewWithin].
type CompactOption func(*compactConfig)

type compactConfig struct {
	counter        TokenCounter
	summarizer     Summarizer
	keepTurns      int
	reserve        int
	summaryReserve int
	split          bool
}

// DefaultSummaryReserve is the room a plan leaves for the summary when
// [WithSummaryReserve] does not say.
const DefaultSummaryReserve = 512

// WithTokenCounter counts with tc; the default is [ApproxCounter].
func WithTokenCounter(tc TokenCounter) CompactOption {
	return func(o *compactConfig) { o.counter = tc }
}

// WithSummarizer makes [Context.Compact] summarize with s; without it (or
// with nil) the range is replaced by a marker, "[N earlier messages
// omitted]".
func WithSummarizer(s Summarizer) CompactOption {
	return func(o *compactConfig) { o.summarizer = s }
}

// WithKeepTurns keeps the last n user turns whole (n < 1 means 1, the
// default): from the n-th last user message on, nothing is cut.
func WithKeepTurns(n int) CompactOption {
	return func(o *compactConfig) { o.keepTurns = n }
}

// WithReserve keeps tokens of the budget for what the view does not hold:
// tool schemas, the reply, per-request framing. Default 0.
func WithReserve(tokens int) CompactOption {
	return func(o *compactConfig) { o.reserve = tokens }
}

// WithSummaryReserve is the room a plan leaves for the summary; default
// [DefaultSummaryReserve]. The real summary is counted when it is applied.
func WithSummaryReserve(tokens int) CompactOption {
	return func(o *compactConfig) { o.summaryReserve = tokens }
}

// WithSplitActiveTurn allows cuts inside the active turn, after its user
// message, when cutting before it is not enough: a long single-turn agent
// run needs them. Such a cut keeps everything before the turn's user
// message and the message itself, and replaces part of what follows it;
// it never separates a tool call from its results. Default false.
func WithSplitActiveTurn(on bool) CompactOption {
	return func(o *compactConfig) { o.split = on }
}

func compactOptions(opts []CompactOption) compactConfig {
	o := compactConfig{counter: ApproxCounter{}, keepTurns: 1, summaryReserve: DefaultSummaryReserve}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.counter == nil {
		o.counter = ApproxCounter{}
	}
	o.keepTurns = max(o.keepTurns, 1)
	return o
}

// CompactPlan says which range of the view a compaction replaces. Its
// fields are the caller's to read; a plan whose fields were changed, or
// whose range no longer holds the same messages, is refused by
// [Context.ApplyCompaction].
type CompactPlan struct {
	First, Last  int       // view indices of the range to replace, inclusive
	TokensBefore int       // the view, overlay included, as counted
	TokensAfter  int       // the view after the compaction, counting the summary reserve
	Dropped      []Message // a copy of the range, for the summarizer; empty when the view fits

	entries  []int64 // the view entries (log message indices) of the range
	orig     [4]int  // First, Last, TokensBefore, TokensAfter as made
	budget   int
	reserve  int
	sumRes   int // the summary reserve it planned with
	counter  TokenCounter
	dropped0 *Message // &Dropped[0] as made
}

// tokenCache remembers what a counter counted of each message of the log,
// by its index among the log's messages: a message in the log never
// changes, so it is counted once.
type tokenCache struct {
	counter TokenCounter
	counts  []int32 // count+1; 0: not counted
}

// sameCounter reports whether a and b count alike: the same comparable
// value.
func sameCounter(a, b TokenCounter) bool {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}

// viewCounts returns the messages of the view, overlay included, their
// counts by tc, and the log message index of each (-1 for the overlay's
// synthetic message).
func (c *Context) viewCounts(tc TokenCounter) (msgs []Message, counts []int, entries []int64) {
	cacheable := reflect.TypeOf(tc).Comparable()
	if !sameCounter(c.tokens.counter, tc) {
		c.tokens = tokenCache{}
		if cacheable {
			c.tokens.counter = tc
		}
	}
	n := len(c.view)
	off := 0
	if c.leadMode == leadSynthetic {
		off = 1
	}
	msgs = make([]Message, 0, n+off)
	counts = make([]int, 0, n+off)
	entries = make([]int64, 0, n+off)
	if off == 1 {
		msgs, counts, entries = append(msgs, c.lead), append(counts, tc.CountTokens(c.lead)), append(entries, -1)
	}
	for i, mi := range c.view {
		m := c.log.msg(mi).msg
		var k int
		switch {
		case i == 0 && c.leadMode == leadOverlaid:
			m = c.lead
			k = tc.CountTokens(m)
		case cacheable:
			if need := int(mi) + 1; len(c.tokens.counts) < need {
				c.tokens.counts = append(c.tokens.counts, make([]int32, need-len(c.tokens.counts))...)
			}
			if v := c.tokens.counts[mi]; v > 0 {
				k = int(v) - 1
			} else {
				k = tc.CountTokens(m)
				c.tokens.counts[mi] = int32(k) + 1
			}
		default:
			k = tc.CountTokens(m)
		}
		msgs, counts, entries = append(msgs, m), append(counts, k), append(entries, mi)
	}
	return msgs, counts, entries
}

// cut is where a compaction of a view goes: the range [lo, hi) replaced.
type cut struct {
	lo, hi int
	after  int // the tokens of the view after it, the summary reserve counted
}

// planCut finds the cut of the view msgs (with counts) that fits budget:
// the lead leading system messages and the suffix from the smallest safe
// cut that fits kept, and before the active turn unless o.split. It returns
// ok false when nothing fits; then fallback is the cut of the minimal
// valid view (the last safe cut at or before the active turn; lo == hi
// when nothing can be dropped).
func planCut(msgs []Message, counts []int, lead, budget int, o *compactConfig) (best cut, ok bool, fallback cut) {
	n := len(msgs)
	pre := make([]int, n+1)
	for i, k := range counts {
		pre[i+1] = pre[i] + k
	}
	active, users := lead, 0
	for i := n - 1; i >= lead; i-- {
		if msgs[i].Role == RoleUser {
			if users++; users == o.keepTurns {
				active = i
				break
			}
		}
	}
	safe := safeCuts(msgs)
	after := func(lo, hi int) int { return pre[lo] + o.summaryReserve + pre[n] - pre[hi] + o.reserve }
	fallback = cut{lo: lead, hi: lead, after: pre[n] + o.reserve}
	for hi := lead + 1; hi <= active; hi++ {
		if !safe[hi] {
			continue
		}
		if fallback = (cut{lead, hi, after(lead, hi)}); fallback.after <= budget {
			return fallback, true, fallback
		}
	}
	if o.split && active < n && msgs[active].Role == RoleUser && safe[active+1] {
		lo := active + 1
		for hi := lo + 1; hi <= n; hi++ {
			if safe[hi] {
				if c := (cut{lo, hi, after(lo, hi)}); c.after <= budget {
					return c, true, c
				}
			}
		}
	}
	return cut{}, false, fallback
}

// keptLead returns the number of leading system messages of the view that a
// compaction keeps: those before the first other message, but for a
// summary of an earlier compaction (a replacement), which a new one may
// take into its range, so that summaries do not pile up.
func (c *Context) keptLead(msgs []Message, entries []int64) int {
	n := 0
	for n < len(msgs) && msgs[n].Role == RoleSystem {
		if mi := entries[n]; mi >= 0 && c.log.rec(c.log.msg(mi).seq).typ == EventReplace {
			break
		}
		n++
	}
	return n
}

// safeCuts returns, for each index i of the view (and len), whether the
// view may be cut there, keeping msgs[i:]: no tool call before i that a
// result answers is still waiting for one of its results at or after i, and
// msgs[i] is not a tool message, which would follow the summary without its
// call. A call no result answers (dangling) opens nothing; a result answers
// only a call before it.
func safeCuts(msgs []Message) []bool {
	answered := map[string]bool{} // call IDs some later result answers
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			seen[tc.ID] = true
		}
		if m.Role == RoleTool && seen[m.ToolCallID] {
			answered[m.ToolCallID] = true
		}
	}
	// The results still to come of each open call.
	remaining := map[string]int{}
	for _, m := range msgs {
		if m.Role == RoleTool && answered[m.ToolCallID] {
			remaining[m.ToolCallID]++
		}
	}
	safe := make([]bool, len(msgs)+1)
	open := 0
	opened := map[string]bool{}
	for i, m := range msgs {
		safe[i] = open == 0 && m.Role != RoleTool
		for _, tc := range m.ToolCalls {
			if answered[tc.ID] && !opened[tc.ID] && remaining[tc.ID] > 0 {
				opened[tc.ID] = true
				open++
			}
		}
		if m.Role == RoleTool && opened[m.ToolCallID] {
			if remaining[m.ToolCallID]--; remaining[m.ToolCallID] == 0 {
				open--
			}
		}
	}
	safe[len(msgs)] = open == 0
	return safe
}

// PlanCompaction plans the compaction of the view into budget tokens: the
// range whose replacement by one summary brings the view, as counted by the
// counter (overlay included), plus [WithReserve], within budget, leaving
// [WithSummaryReserve] for the summary. It changes nothing. The leading
// system messages are kept (but for the summary of an earlier compaction,
// which a new one takes into its range, so that the summarizer sees it and
// summaries do not pile up), and the active turn (from the last user
// message on, or the last [WithKeepTurns] user turns) unless
// [WithSplitActiveTurn]; the range is the smallest that fits, and never
// separates a tool call from its results, however they are spread. A view
// that fits already gets a plan with an empty Dropped, which changes
// nothing when applied. When nothing fits, it returns an error wrapping
// [ErrOverBudget], and a plan whose TokensBefore says what the view costs.
func (c *Context) PlanCompaction(budget int, opts ...CompactOption) (CompactPlan, error) {
	c.ready()
	o := compactOptions(opts)
	msgs, counts, entries := c.viewCounts(o.counter)
	total := 0
	for _, k := range counts {
		total += k
	}
	p := CompactPlan{TokensBefore: total, TokensAfter: total, budget: budget, reserve: o.reserve, sumRes: o.summaryReserve, counter: o.counter}
	if total+o.reserve <= budget {
		p.orig = [4]int{p.First, p.Last, p.TokensBefore, p.TokensAfter}
		return p, nil
	}
	best, ok, _ := planCut(msgs, counts, c.keptLead(msgs, entries), budget, &o)
	if !ok {
		return p, fmt.Errorf("nous: compact %d tokens (with a reserve of %d) into %d: what must be kept does not fit: %w", total, o.reserve, budget, ErrOverBudget)
	}
	p.First, p.Last, p.TokensAfter = best.lo, best.hi-1, best.after-o.reserve
	p.Dropped = make([]Message, 0, best.hi-best.lo)
	for _, m := range msgs[best.lo:best.hi] {
		p.Dropped = append(p.Dropped, m.clone())
	}
	p.entries = entries[best.lo:best.hi:best.hi]
	p.orig = [4]int{p.First, p.Last, p.TokensBefore, p.TokensAfter}
	p.dropped0 = &p.Dropped[0]
	return p, nil
}

// ApplyCompaction replaces the plan's range with summary: one
// [Context.ReplaceMessageRange], so the originals stay in the log and the
// summary takes the first one's time. Messages added since the plan was
// made stay. A plan whose range no longer holds the same messages (one of
// them replaced, or the range moved), or whose fields were changed, is an
// error wrapping [ErrConflict]; a summary that is empty, a tool message or
// carries tool calls, one wrapping [ErrInvalidMessage]; a view that, with
// the summary as counted, does not fit the plan's budget, one wrapping
// [ErrOverBudget]. On error nothing changes. A plan with nothing dropped
// (the view fit) changes nothing.
func (c *Context) ApplyCompaction(p CompactPlan, summary Message) error {
	c.ready()
	if p.orig != [4]int{p.First, p.Last, p.TokensBefore, p.TokensAfter} || len(p.Dropped) != len(p.entries) ||
		(len(p.Dropped) > 0 && &p.Dropped[0] != p.dropped0) {
		return fmt.Errorf("nous: apply compaction: the plan was changed: %w", ErrConflict)
	}
	if len(p.entries) == 0 {
		return nil
	}
	if err := checkSummary(&summary); err != nil {
		return fmt.Errorf("nous: apply compaction: %w", err)
	}
	off := 0
	if c.leadMode == leadSynthetic {
		off = 1
	}
	lo, hi := p.First-off, p.Last+1-off
	if lo < 0 || hi > len(c.view) || hi-lo != len(p.entries) {
		return fmt.Errorf("nous: apply compaction of %d..%d: the view moved: %w", p.First, p.Last, ErrConflict)
	}
	for i, mi := range p.entries {
		if c.view[lo+i] != mi {
			return fmt.Errorf("nous: apply compaction of %d..%d: message %d is not the one planned: %w", p.First, p.Last, p.First+i, ErrConflict)
		}
	}
	// The view as planned, with the real summary in place of its reserve:
	// messages added since are the next turn's, which a later plan counts.
	if after := p.TokensAfter - p.sumRes + p.counter.CountTokens(summary) + p.reserve; after > p.budget {
		return fmt.Errorf("nous: apply compaction: with the summary the view costs %d tokens (with the reserve), over the budget of %d: %w", after, p.budget, ErrOverBudget)
	}
	return c.ReplaceMessageRange(p.First, p.Last, summary)
}

// checkSummary checks a message that replaces a range.
func checkSummary(m *Message) error {
	switch {
	case m.Role == RoleTool:
		return fmt.Errorf("the summary is a tool message: %w", ErrInvalidMessage)
	case len(m.ToolCalls) > 0:
		return fmt.Errorf("the summary carries tool calls: %w", ErrInvalidMessage)
	case m.Content == "" && !hasContent(m.Parts):
		return fmt.Errorf("the summary is empty: %w", ErrInvalidMessage)
	}
	return m.validate()
}

func hasContent(parts []ContentPart) bool {
	for _, p := range parts {
		if p.hasContent() {
			return true
		}
	}
	return false
}

// marker returns the message that stands for n omitted messages.
func marker(n int) Message {
	return Message{Role: RoleSystem, Content: fmt.Sprintf("[%d earlier messages omitted]", n)}
}

// Compact plans a compaction into budget tokens, summarizes the range with
// the [WithSummarizer] summarizer (or a marker without one), and applies
// it: [Context.PlanCompaction], then [Summarizer.Summarize] with its own
// copy of the range, then [Context.ApplyCompaction]. It returns the plan. A
// view that fits is left alone and the summarizer is not called. A
// summarizer that fails, or whose summary is refused, changes nothing; its
// error is wrapped. The summarizer runs on the caller's goroutine; to run
// it elsewhere, plan and apply apart.
func (c *Context) Compact(ctx context.Context, budget int, opts ...CompactOption) (CompactPlan, error) {
	p, err := c.PlanCompaction(budget, opts...)
	if err != nil || len(p.Dropped) == 0 {
		return p, err
	}
	o := compactOptions(opts)
	summary := marker(len(p.Dropped))
	if o.summarizer != nil {
		dropped := make([]Message, len(p.Dropped))
		for i := range p.Dropped {
			dropped[i] = p.Dropped[i].clone()
		}
		if summary, err = o.summarizer.Summarize(ctx, dropped); err != nil {
			return p, fmt.Errorf("nous: compact: summarize %d messages: %w", len(dropped), err)
		}
	}
	return p, c.ApplyCompaction(p, summary)
}

// ViewWithin returns the view compacted into budget tokens, a marker,
// "[N earlier messages omitted]", in place of the range a plan would
// replace, without changing the context or calling a summarizer; the
// messages are the caller's copies. When nothing fits it returns an error
// wrapping [ErrOverBudget] and the smallest valid view: the leading system
// messages, a marker, and everything from the last safe cut at or before
// the active turn (the view itself when nothing can be dropped).
func (c *Context) ViewWithin(budget int, opts ...CompactOption) ([]Message, error) {
	c.ready()
	o := compactOptions(opts)
	msgs, counts, entries := c.viewCounts(o.counter)
	total := 0
	for _, k := range counts {
		total += k
	}
	view := func(k cut) []Message {
		out := make([]Message, 0, len(msgs)-(k.hi-k.lo)+1)
		for _, m := range msgs[:k.lo] {
			out = append(out, m.clone())
		}
		if k.hi > k.lo {
			m := marker(k.hi - k.lo)
			m.CreatedAt = msgs[k.lo].CreatedAt
			out = append(out, m)
		}
		for _, m := range msgs[k.hi:] {
			out = append(out, m.clone())
		}
		return out
	}
	if total+o.reserve <= budget {
		return view(cut{}), nil
	}
	o.summaryReserve = o.counter.CountTokens(marker(len(msgs)))
	best, ok, fallback := planCut(msgs, counts, c.keptLead(msgs, entries), budget, &o)
	if !ok {
		return view(fallback), fmt.Errorf("nous: view within %d tokens: what must be kept does not fit: %w", budget, ErrOverBudget)
	}
	return view(best), nil
}
