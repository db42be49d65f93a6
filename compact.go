package nous

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"
)

// MetadataSummary is the Metadata key, set to true, that marks the message
// a compaction put in place of a range (a summary or a marker). A later
// compaction takes such a message, when it follows the leading system
// messages (which it keeps), into its range: the leading system messages
// end at it, and what comes after it, system messages too, is conversation
// a range may take.
const MetadataSummary = "compaction_summary"

// CompactOption configures [Context.PlanCompaction], [Context.Compact] and
// [Context.ViewWithin].
type CompactOption func(*compactConfig)

// compactConfig is what the options of one call say: one struct that they
// fill once, as log/slog's HandlerOptions is one struct for a handler's
// options. [newCompaction] fills it and applies the defaults and bounds;
// every step of the call (planning, summarizing, counting) reads the same
// one.
type compactConfig struct {
	counter        TokenCounter
	summarizer     Summarizer
	keepTurns      int
	reserve        int
	summaryReserve int
	split          bool
	target         int // 0: the budget
	resultLimit    int // 0: off
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
// run needs them (and a run without a user message, all active turn, can
// be compacted only with them). A range never takes an assistant message
// whose calls are still waiting for their results at the end of the view:
// they would come back without it. Such a cut keeps everything before the turn's user
// message and the message itself, and replaces part of what follows it;
// it never separates a tool call from its results. Default false. A plan
// is one range, so the older turns go into a summary by a cut before the
// active turn, which compacting before each request makes as soon as the
// view outgrows the budget: only a single step that makes the active turn
// alone outgrow it while older turns are still there gives ErrOverBudget
// (compact those first, with a budget the active turn fits in).
func WithSplitActiveTurn(on bool) CompactOption {
	return func(o *compactConfig) { o.split = on }
}

// WithTarget makes a view that does not fit the budget compact down to
// tokens, not just to the budget: a view that fits the budget is left
// alone, and one that does not is planned to fit within the smaller of
// tokens and the budget, the reserve included, as a budget is. So a
// conversation that grows by g tokens a turn, compacted before every
// request, calls the summarizer about once every (budget-tokens)/g turns,
// not every turn once it is full. When the target cannot be met (what
// must be kept, the active turn above all, leaves no room for it), the plan
// cuts as far as the active turn allows: the smallest view a plan can make,
// if it fits the budget (ErrOverBudget if not). So a larger target never
// cuts more than a smaller one, and a view compacted so stays within the
// budget for as many turns as it can. tokens < 1 (the default) means the
// budget; [Context.ApplyCompaction] checks the real summary against the
// budget.
//
// Half the budget is a good target: each compaction then frees half the
// window, so the summarizer runs once every budget/(2g) turns, and the
// half kept holds the recent turns word for word, which a model follows
// better than a summary. Without a target every request over the budget
// calls the summarizer again (each compaction frees only what that
// request needed). Claude Code compacts when the window is nearly full,
// down to a summary; LangChain's summarization middleware has a trigger
// and a size to keep: the budget and the target are those two numbers.
func WithTarget(tokens int) CompactOption {
	return func(o *compactConfig) { o.target = tokens }
}

// CompactPlan says which range of the view a compaction replaces. Its
// fields are the caller's to read; a plan whose fields were changed, or
// whose range no longer holds the same messages, is refused by
// [Context.ApplyCompaction].
type CompactPlan struct {
	First, Last  int       // view indices of the range to replace, inclusive
	TokensBefore int       // the view, overlay included, as counted
	TokensAfter  int       // the view after the compaction, counting the summary reserve
	Dropped      []Message // a copy of the range, for the summarizer, its tool results pruned; empty when the view fits
	Pruned       []int     // view indices of the tool results shortened in place, outside the range ([WithToolResultLimit])

	made           planFields   // the exported fields as planned
	entries        []int64      // the view entries (log message indices) of the range
	prunes         []prune      // the tool results shortened outside the range
	budget         int          // the budget it was planned for
	reserve        int          // the reserve it planned with
	summaryReserve int          // the summary reserve it planned with
	overlayTokens  int          // the tokens the overlay added
	headJoin       int          // the token kept for the overlay's join to the summary (a range that starts the view)
	counter        TokenCounter // the counter it counted with
	log            uuid.UUID    // the log it was made for
	logLen         int64        // its length then
	lastAt         time.Time    // the time of its last event then: which events it was made of
	prefix         []int64      // the view entries before the range
	next           int64        // the entry after the range; -1 at the end
	overlayText    string       // the overlay as planned
}

// planFields are the exported fields of a [CompactPlan], as
// [Context.ApplyCompaction] compares them with the plan as made: Dropped
// and Pruned by their first element's address and their length, so that a
// slice put in the place of one is told from the plan's own.
type planFields struct {
	first, last, tokensBefore, tokensAfter int
	dropped                                *Message // &Dropped[0]; nil when nothing is dropped
	droppedLen                             int
	pruned                                 *int // &Pruned[0]; nil when nothing is pruned
	prunedLen                              int
}

// fields returns p's exported fields as [planFields].
func (p *CompactPlan) fields() planFields {
	f := planFields{first: p.First, last: p.Last, tokensBefore: p.TokensBefore, tokensAfter: p.TokensAfter,
		droppedLen: len(p.Dropped), prunedLen: len(p.Pruned)}
	if len(p.Dropped) > 0 {
		f.dropped = &p.Dropped[0]
	}
	if len(p.Pruned) > 0 {
		f.pruned = &p.Pruned[0]
	}
	return f
}

// cut is where a compaction of the view goes, in positions of c.view.entries: the
// range [lo, hi) replaced, and the tokens of the view after it, the
// overlay, the summary reserve and the reserve counted.
type cut struct {
	lo, hi int
	after  int
}

// compaction is one call of [Context.PlanCompaction], [Context.Compact] or
// [Context.ViewWithin] on c, with everything the call reads:
//
//   - its compactConfig, filled once by newCompaction (a nil counter is
//     ApproxCounter, keepTurns is at least 1, the reserves are within
//     [0, maxTokens]): Compact plans and summarizes from the one it made;
//   - the token cache it counts through: the context's when the cache is
//     bound to the call's counter ([tokenCache.bind]), one of the call's
//     own otherwise;
//   - what it found of the view ([compaction.survey]): the cut index, the
//     cost, the leading system messages, the active turn, the calls still
//     running.
//
// It lives as long as the call. What outlives it is the context's token
// cache, the one piece of compaction state a Context holds (Clone resets it
// whole), and the plan, which carries what [Context.ApplyCompaction] needs
// of the call (the budget, the reserves, the counter) with it.
type compaction struct {
	compactConfig
	c     *Context
	cache *tokenCache // c.tokens when bound to the counter, a cache of the call's own otherwise
	cuts  *cutIndex   // the cache's index of the view

	pruning bool    // the cut index's account of pruning is the call's (see indexPrunes)
	prunes  []prune // the tool results a plan shortens, by position, once it has one (see listPrunes)

	overlay  int // the tokens the overlay adds to the view
	total    int // the view's tokens, overlay included
	lead     int // the leading system messages kept
	active   int // where the active turn starts
	end      int // no cut goes past it: where the calls whose results are still to come start
	headJoin int // the token a range that starts the view keeps for the overlay's join to its summary
}

// newCompaction starts a call of compaction on c with opts: it fills the
// options, binds the token cache to the counter, and reads the view.
func newCompaction(c *Context, opts []CompactOption) *compaction {
	c.ready()
	k := &compaction{c: c, compactConfig: compactConfig{counter: ApproxCounter{}, keepTurns: 1, summaryReserve: DefaultSummaryReserve}}
	for _, opt := range opts {
		if opt != nil {
			opt(&k.compactConfig)
		}
	}
	if k.counter == nil {
		k.counter = ApproxCounter{}
	}
	k.keepTurns = max(k.keepTurns, 1)
	k.reserve, k.summaryReserve = min(max(k.reserve, 0), maxTokens), min(max(k.summaryReserve, 0), maxTokens)
	k.target, k.resultLimit = min(max(k.target, 0), maxTokens), min(max(k.resultLimit, 0), maxTokens)
	k.cache = &c.tokens
	if !c.tokens.bind(k.counter) {
		k.cache = &tokenCache{}
	}
	k.survey()
	return k
}

// count returns what the counter counts of m.
func (k *compaction) count(m Message) int { return countTokens(k.counter, m) }

// countAt returns what the counter counts of log message mi, through the cache.
func (k *compaction) countAt(mi int64) int { return k.cache.count(k.counter, mi, &k.c.log.msg(mi).msg) }

// survey reads what planning needs of the view: its index, its cost, the
// leading system messages, the active turn and the calls it ends with.
func (k *compaction) survey() {
	c := k.c
	k.cuts = k.index()
	switch c.view.leadMode {
	case leadSynthetic:
		k.overlay = k.count(c.view.lead)
	case leadOverlaid:
		k.overlay = k.count(c.view.lead) - k.countAt(c.view.entries[0])
		k.headJoin = 1 // a counter's rounding of the overlay joined to another message
	}
	n := len(c.view.entries)
	k.total = int(k.cuts.pre[n]) + k.overlay
	// The leading system messages, but for the summary of an earlier
	// compaction (marked with MetadataSummary), which a new one takes into
	// its range, so that summaries do not pile up.
	for k.lead < n {
		m := &c.log.msg(c.view.entries[k.lead]).msg
		if m.Role != RoleSystem || m.Metadata[MetadataSummary] == true {
			break
		}
		k.lead++
	}
	k.active = k.lead
	for i, users := n-1, 0; i >= k.lead; i-- {
		if c.log.msg(c.view.entries[i]).msg.Role == RoleUser {
			if users++; users == k.keepTurns {
				k.active = i
				break
			}
		}
	}
	k.end = k.pendingCalls()
}

// after returns the tokens of the view with [lo, hi) replaced by a summary
// and the tool results outside it pruned.
func (k *compaction) after(lo, hi int) int {
	pre := k.cuts.pre
	return k.overlay + k.join(lo) + int(pre[lo]) + k.summaryReserve + int(pre[len(pre)-1]-pre[hi]) + k.reserve - k.savedBy(lo, hi)
}

// join returns the token a range from lo keeps for the overlay's join to
// its summary: only a range that starts the view has one.
func (k *compaction) join(lo int) int {
	if lo == 0 {
		return k.headJoin
	}
	return 0
}

// fit returns the smallest safe cut hi in (lo, end] whose replacement of
// [lo, hi) fits budget: the first hi whose prefix is long enough, found by
// a binary search, then the first safe one from there.
func (k *compaction) fit(lo, end, budget int) (cut, bool) {
	if lo >= end {
		return cut{}, false
	}
	start := lo + 1 + sort.Search(end-lo, func(i int) bool { return k.after(lo, lo+1+i) <= budget })
	for hi := start; hi <= end; hi++ {
		if k.safe(hi) {
			return cut{lo, hi, k.after(lo, hi)}, true
		}
	}
	return cut{}, false
}

// search finds the cut that fits budget: the leading system messages and
// the suffix from the smallest safe cut that fits kept, before the active
// turn, or, with split, inside it between its user messages (or, in a run
// without one, anywhere after the leading system messages). ok is false
// when nothing fits; then fallback is the cut of the smallest valid view
// (the last safe cut at or before the active turn; lo == hi when nothing
// can be dropped).
func (k *compaction) search(budget int) (best cut, ok bool, fallback cut) {
	if best, ok = k.fit(k.lead, min(k.active, k.end), budget); ok {
		return best, true, best
	}
	if k.split {
		k.segments(func(lo, end int) bool {
			best, ok = k.fit(lo, end, budget)
			return !ok
		})
		if ok {
			return best, true, best
		}
	}
	fallback = cut{k.lead, k.lead, k.total + k.reserve - k.savedBy(k.lead, k.lead)}
	if last, ok := k.last(k.lead, min(k.active, k.end)); ok {
		fallback = last
	}
	return cut{}, false, fallback
}

// segments calls f with each stretch [lo, end) of the kept turns a cut
// with split may take, until f returns false: the stretches between their
// user messages, which stay, the oldest first (the first from the active
// turn's start when that is not a user message, as in a run without one),
// each from its first safe place, none past k.end.
func (k *compaction) segments(f func(lo, end int) bool) {
	lo := k.active
	for i := k.active; i <= k.end; i++ {
		if i < k.end && k.c.log.msg(k.c.view.entries[i]).msg.Role != RoleUser {
			continue
		}
		for lo < i && !k.safe(lo) {
			lo++
		}
		if lo < i && !f(lo, i) {
			return
		}
		lo = i + 1
	}
}

// last returns the largest cut from lo: [lo, hi) for the last safe hi in
// (lo, end]; ok is false when there is none.
func (k *compaction) last(lo, end int) (cut, bool) {
	for hi := end; hi > lo; hi-- {
		if k.safe(hi) {
			return cut{lo, hi, k.after(lo, hi)}, true
		}
	}
	return cut{}, false
}

// furthest returns the cut of the smallest view a plan can make, for a
// target that cannot be met: of pruning alone and the largest cut of each
// place a range may take (before the active turn, and with split each
// stretch inside it), the one that leaves the fewest tokens, pruning alone
// on a tie (it calls no summarizer). So a target that cannot be met cuts as
// far as the active turn allows, never less than a larger target would.
func (k *compaction) furthest() cut {
	best := cut{after: k.total + k.reserve - k.savedBy(0, 0)}
	consider := func(lo, end int) bool {
		if x, ok := k.last(lo, end); ok && x.after < best.after {
			best = x
		}
		return true
	}
	consider(k.lead, min(k.active, k.end))
	if k.split {
		k.segments(consider)
	}
	return best
}

// goals returns what a view over budget is compacted to fit: the target,
// then, when that cannot be met, the budget (n is 1 without a target below
// the budget). A plan meets the second as [compaction.choose] says.
func (k *compaction) goals(budget int) (goals [2]int, n int) {
	if k.target > 0 && k.target < budget {
		return [2]int{k.target, budget}, 2
	}
	return [2]int{budget}, 1
}

// plan makes the plan of the call's compaction into budget.
func (k *compaction) plan(budget int) (CompactPlan, error) {
	c := k.c
	p := CompactPlan{TokensBefore: k.total, TokensAfter: k.total, budget: budget, reserve: k.reserve, summaryReserve: k.summaryReserve, counter: k.counter}
	if k.total+k.reserve <= budget {
		p.made = p.fields()
		return p, nil
	}
	k.indexPrunes()
	best, ok := k.choose(budget)
	if !ok {
		return p, fmt.Errorf("nous: compact %d tokens (with a reserve of %d) into %d: %w", k.total, k.reserve, budget, k.overBudget(budget))
	}
	k.prunes = k.listPrunes()
	off := c.overlayOffset()
	p.TokensAfter, p.log, p.logLen = best.after-k.reserve, c.log.id, c.log.len()
	if p.logLen > 0 {
		p.lastAt = c.log.rec(p.logLen).at
	}
	// The prunes before the range and after it go with the plan, those in
	// it with Dropped.
	first := sort.Search(len(k.prunes), func(j int) bool { return k.prunes[j].pos >= best.lo })
	p.prunes = k.prunes
	if best.hi > best.lo {
		j := first
		p.First, p.Last = best.lo+off, best.hi-1+off
		p.Dropped = make([]Message, 0, best.hi-best.lo)
		for i := best.lo; i < best.hi; i++ { // as stored (the overlay is no message's), tool results as pruned
			m := &c.log.msg(c.view.entries[i]).msg
			if j < len(k.prunes) && k.prunes[j].pos == i {
				m, j = k.prunes[j].msg, j+1
			}
			p.Dropped = append(p.Dropped, m.clone())
		}
		p.entries, p.prefix, p.next = slices.Clone(c.view.entries[best.lo:best.hi]), slices.Clone(c.view.entries[:best.lo]), -1
		if best.hi < len(c.view.entries) {
			p.next = c.view.entries[best.hi]
		}
		p.overlayTokens, p.overlayText, p.headJoin = k.overlay, c.view.overlay, k.join(best.lo)
		p.prunes = slices.Concat(k.prunes[:first], k.prunes[j:])
	}
	if len(p.prunes) > 0 {
		p.Pruned = make([]int, len(p.prunes))
		for i, pr := range p.prunes {
			p.Pruned[i] = pr.pos + off
		}
	}
	p.made = p.fields()
	return p, nil
}

// choose returns the cut that compacts a view over budget into its goal,
// the target or else the budget: none (lo == hi) when pruning alone brings
// the view within it, or the smallest range that does. A target that
// cannot be met gets the smallest view a plan can make ([compaction.furthest])
// when that fits the budget: a plan for a larger target never cuts more.
func (k *compaction) choose(budget int) (cut, bool) {
	goals, n := k.goals(budget)
	goal := goals[0]
	if pruned := k.total + k.reserve - k.savedBy(0, 0); k.savedBy(0, 0) > 0 && pruned <= goal {
		return cut{after: pruned}, true
	}
	if best, ok, _ := k.search(goal); ok {
		return best, true
	}
	if n == 1 {
		return cut{}, false
	}
	best := k.furthest()
	return best, best.after <= budget
}

// overBudget returns the error of a view whose smallest valid view (see
// search) does not fit into budget: it names the largest message that must
// be kept, its view index, role and count, and what may help, or, when
// what must be kept fits but not beside the summary reserve, says so; and
// it wraps [ErrOverBudget].
func (k *compaction) overBudget(budget int) error {
	c := k.c
	_, _, keep := k.search(0)
	if keep.hi > keep.lo && k.summaryReserve > 0 && keep.after-k.summaryReserve <= budget {
		return fmt.Errorf("what must be kept fits, but not beside the %d tokens reserved for the summary; a smaller WithSummaryReserve or a larger budget may help: %w",
			k.summaryReserve, ErrOverBudget)
	}
	largest, most := -1, -1
	for _, r := range [2][2]int{{0, k.lead}, {max(keep.hi, k.lead), len(c.view.entries)}} {
		for i := r[0]; i < r[1]; i++ {
			if n := int(k.cuts.pre[i+1]-k.cuts.pre[i]) - (k.savedBefore(i+1) - k.savedBefore(i)); n > most { // its count, pruned
				largest, most = i, n
			}
		}
	}
	if largest < 0 {
		return fmt.Errorf("what must be kept does not fit (a larger budget would help): %w", ErrOverBudget)
	}
	m := &c.log.msg(c.view.entries[largest]).msg
	help := "a larger budget"
	if !k.split && largest >= k.active {
		help = "WithSplitActiveTurn(true) or " + help
	}
	if m.Role == RoleTool && k.resultLimit == 0 {
		help = "WithToolResultLimit, " + help
	}
	return fmt.Errorf("what must be kept does not fit: the largest of it is message %d (%s, %d tokens); %s may help: %w",
		largest+c.overlayOffset(), m.Role, most, help, ErrOverBudget)
}

// overlayOffset returns 1 when the overlay is a message of its own at the
// head of the view, which the log does not hold, and 0 otherwise: view
// index i is position i-overlayOffset of c.view.
func (c *Context) overlayOffset() int {
	if c.view.leadMode == leadSynthetic {
		return 1
	}
	return 0
}

// PlanCompaction plans the compaction of the view into budget tokens: the
// range whose replacement by one summary brings the view, as counted by the
// counter (overlay included), plus [WithReserve], within budget (or within
// [WithTarget]), leaving [WithSummaryReserve] for the summary, and with
// [WithToolResultLimit] the tool results it shortens (its Pruned; a plan
// that pruning alone makes fit drops nothing). It changes nothing. The
// leading system messages are kept (but for the summary of an earlier
// compaction, which a new one takes into its range, so that the summarizer
// sees it and summaries do not pile up), and the active turn (from the last
// user message on, or the last [WithKeepTurns] user turns) unless
// [WithSplitActiveTurn]; the range is the smallest that fits, and never
// separates a tool call from its results, however they are spread. A view
// that fits already gets a plan with an empty Dropped and Pruned, which
// changes nothing when applied. When nothing fits, it returns an error
// wrapping [ErrOverBudget], and a plan whose TokensBefore says what the view
// costs.
func (c *Context) PlanCompaction(budget int, opts ...CompactOption) (CompactPlan, error) {
	return newCompaction(c, opts).plan(budget)
}

// ApplyCompaction replaces the plan's range with summary: one
// [Context.ReplaceMessageRange], so the originals stay in the log and the
// summary takes the first one's time; then it shortens the tool results of
// the plan's Pruned, each by one [Context.ReplaceMessage]. Messages added
// since the plan was made stay. A plan whose range no longer holds the same
// messages (one of them replaced, or the range moved), whose tool results
// to prune moved, or whose fields were changed, is an error wrapping
// [ErrConflict]; a summary that is empty, a tool message or carries tool
// calls, one wrapping [ErrInvalidMessage]; a view as planned that, with the
// summary as counted, does not fit the plan's budget, one wrapping
// [ErrOverBudget] (what was added or changed after the range since the plan
// is the next plan's to count: a summarizer that is slow does not make its
// work void). On error nothing changes. A plan with nothing dropped only
// prunes, and summary is not read; one with nothing dropped or pruned (the
// view fit) changes nothing.
func (c *Context) ApplyCompaction(p CompactPlan, summary Message) error {
	c.ready()
	switch {
	case p.fields() != p.made:
		return fmt.Errorf("nous: apply compaction: the plan was changed: %w", ErrConflict)
	case len(p.entries) == 0 && len(p.prunes) == 0:
		return nil
	case p.log != c.log.id:
		return fmt.Errorf("nous: apply compaction: the plan is of log %s: %w", uuid.UUID(p.log), ErrConflict)
	case p.logLen > c.log.len() || p.logLen > 0 && !c.log.rec(p.logLen).at.Equal(p.lastAt):
		// The events the plan names are not the ones it was made of: the
		// log was loaded again after another writer's save, say, and its
		// entries hold other messages at the same places.
		return fmt.Errorf("nous: apply compaction: the log's first %d events are not those the plan was made of (loaded again since?): %w", p.logLen, ErrConflict)
	}
	for _, pr := range p.prunes {
		if pr.pos >= len(c.view.entries) || c.view.entries[pr.pos] != pr.entry {
			return fmt.Errorf("nous: apply compaction: message %d is not the tool result planned: %w", pr.pos+c.overlayOffset(), ErrConflict)
		}
	}
	if len(p.entries) > 0 {
		if err := c.replaceRange(&p, summary); err != nil {
			return err
		}
	}
	for _, pr := range p.prunes {
		at := pr.pos + c.overlayOffset()
		if len(p.entries) > 0 && at > p.Last {
			at -= len(p.entries) - 1 // after the range, which is one message now
		}
		// It cannot fail: a tool result in place of one answering the same
		// call breaks no pairing, and it was checked when planned.
		if err := c.ReplaceMessage(at, *pr.msg); err != nil {
			return fmt.Errorf("nous: apply compaction: prune message %d: %w", at, err)
		}
	}
	return nil
}

// replaceRange checks that the view still holds p's range as planned and
// that it fits p's budget with summary in place of the summary reserve,
// and replaces the range with summary. On error nothing changes.
func (c *Context) replaceRange(p *CompactPlan, summary Message) error {
	if err := checkSummary(&summary); err != nil {
		return fmt.Errorf("nous: apply compaction: %w", err)
	}
	off := c.overlayOffset()
	lo, hi := p.First-off, p.Last+1-off
	if lo < 0 || hi > len(c.view.entries) || hi-lo != len(p.entries) || !slices.Equal(c.view.entries[:lo], p.prefix) ||
		!slices.Equal(c.view.entries[lo:hi], p.entries) || (p.next >= 0 && (hi == len(c.view.entries) || c.view.entries[hi] != p.next)) ||
		(p.next < 0 && hi < len(c.view.entries) && c.log.msg(c.view.entries[hi]).msg.Role == RoleTool) || // a result of a call in the range
		c.view.overlay != p.overlayText {
		return fmt.Errorf("nous: apply compaction of %d..%d: the view is not the one planned: %w", p.First, p.Last, ErrConflict)
	}
	summary = summary.clone()
	if summary.Metadata == nil {
		summary.Metadata = map[string]any{}
	}
	summary.Metadata[MetadataSummary] = true
	// The view as planned, with the real summary in place of its reserve,
	// and the overlay as it will show (joined to the summary, or on its own,
	// when the range starts the log): messages added or changed after the
	// range since are the next turn's, which a later plan counts.
	overlay := p.overlayTokens
	if lo == 0 && c.view.overlay != "" {
		if summary.Role == RoleSystem {
			overlay = countTokens(p.counter, withOverlay(summary, c.view.overlay)) - countTokens(p.counter, summary)
		} else {
			overlay = countTokens(p.counter, Message{Role: RoleSystem, Content: c.view.overlay})
		}
	}
	if after := p.TokensAfter - p.summaryReserve - p.overlayTokens - p.headJoin + overlay + countTokens(p.counter, summary) + p.reserve; after > p.budget {
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
	return Message{Role: RoleSystem, Content: fmt.Sprintf("[%d earlier messages omitted]", n), Metadata: map[string]any{MetadataSummary: true}}
}

// Compact plans a compaction into budget tokens, summarizes the range with
// the [WithSummarizer] summarizer (or a marker without one), and applies
// it: [Context.PlanCompaction], then [Summarizer.Summarize] with its own
// copy of the range, then [Context.ApplyCompaction]. It returns the plan. A
// view that fits is left alone, and the summarizer is called only for a
// plan that drops a range (one that pruning alone makes fit only prunes).
// A [UsageSummarizer]'s usage is added to the context's Usage, and its
// call, once its summary is in place, is logged as a step_end right after
// the replace event ([Context.EndStep]: a trace shows it as a model call).
// A summarizer that fails, or whose summary is refused, changes nothing
// but Usage; its error is wrapped. The summarizer runs on the caller's goroutine; to
// run it elsewhere, plan and apply apart.
func (c *Context) Compact(ctx context.Context, budget int, opts ...CompactOption) (CompactPlan, error) {
	k := newCompaction(c, opts)
	p, err := k.plan(budget)
	if err != nil || len(p.Dropped) == 0 && len(p.Pruned) == 0 {
		return p, err
	}
	summary := marker(len(p.Dropped))
	if k.summarizer != nil && len(p.Dropped) > 0 {
		dropped := make([]Message, len(p.Dropped))
		for i := range p.Dropped {
			dropped[i] = p.Dropped[i].clone()
		}
		us, called := k.summarizer.(UsageSummarizer)
		var u Usage
		if called {
			summary, u, err = us.SummarizeUsage(ctx, dropped)
		} else {
			summary, err = k.summarizer.Summarize(ctx, dropped)
		}
		if err != nil {
			c.AddUsage(u)
			return p, fmt.Errorf("nous: compact: summarize %d messages: %w", len(dropped), err)
		}
		if err := c.ApplyCompaction(p, summary); err != nil {
			c.AddUsage(u)
			return p, err
		}
		if called {
			c.EndStep(Step{Usage: u}) // the summary's model call, right after the replace it made
		}
		return p, nil
	}
	return p, c.ApplyCompaction(p, summary)
}
