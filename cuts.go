package nous

import "slices"

// index brings the cache's cut index up to date with the view and returns
// it.
func (k *compaction) index() *cutIndex {
	c, x := k.c, &k.cache.cuts
	from := len(x.entries)
	if from == 0 || from > len(c.view.entries) || !slices.Equal(c.view.entries[:from], x.entries) {
		from = 0
		x.entries, x.pre, x.straddled, x.open, x.last = x.entries[:0], append(x.pre[:0], 0), x.straddled[:0], map[string][]int{}, map[string]int{}
		x.signedRun, x.limit = 0, 0
	}
	for i := from; i < len(c.view.entries); i++ {
		mi := c.view.entries[i]
		m := &c.log.msg(mi).msg
		x.entries = append(x.entries, mi)
		x.pre = append(x.pre, x.pre[i]+int64(k.countAt(mi)))
		x.straddled = append(x.straddled, false)
		if m.Role == RoleTool {
			// It answers the last call of its ID still unanswered (so that
			// an old call no result answered, whose ID a later turn's call
			// reuses, holds no cut), or, a second result, the last call of
			// its ID: either way the two stay on one side of a cut.
			p, ok := x.last[m.ToolCallID]
			if q := x.open[m.ToolCallID]; len(q) > 0 {
				p, ok, x.open[m.ToolCallID] = q[len(q)-1], true, q[:len(q)-1]
			}
			for j := p + 1; ok && j <= i; j++ { // cuts between the call and this result
				x.straddled[j] = true
			}
		}
		for _, call := range m.ToolCalls {
			x.open[call.ID] = append(x.open[call.ID], i)
			x.last[call.ID] = i
		}
		// Signed thinking goes with the calls after it, through the
		// assistant messages without calls between them: no cut there.
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) == 0:
			if x.signedRun == 0 && signedThinking(m) {
				x.signedRun = i + 1
			}
		case m.Role == RoleAssistant && x.signedRun > 0:
			for j := x.signedRun; j <= i; j++ {
				x.straddled[j] = true
			}
			x.signedRun = 0
		default:
			x.signedRun = 0
		}
	}
	return x
}

// pendingCalls returns where the calls the view ends with start, the first
// of them still waiting for its results (tools running), or the view's
// length when none is: a range that took such a call would leave its
// results, when they come, without it. The last group is the calls and
// results the view ends with (calls may span several assistant messages);
// a call no result answers earlier on is dangling and holds nothing.
func (k *compaction) pendingCalls() int {
	c, end := k.c, len(k.c.view.entries)
	for j := len(c.view.entries) - 1; j >= k.lead; j-- {
		m := &c.log.msg(c.view.entries[j]).msg
		if m.Role == RoleTool {
			continue
		}
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			break
		}
		if slices.ContainsFunc(m.ToolCalls, func(tc ToolCall) bool { return slices.Contains(k.cuts.open[tc.ID], j) }) {
			end = j
		}
	}
	return end
}

// safe reports whether the view may be cut at position i, keeping
// c.view.entries[i:]: no call before i has a result at or after i, and the message
// at i is not a tool message, which would follow the summary without its
// call; nor does a cut separate signed thinking in assistant messages of
// its own from the calls that follow them. A call no result answers
// (dangling) holds nothing; a result answers the last call of its ID
// before it that no result answered, or, a second result, the last call of
// its ID before it. A cut past calls whose results are still to come (the
// view ends with them) is not safe either: see [compaction.pendingCalls].
func (k *compaction) safe(i int) bool {
	if i == len(k.c.view.entries) {
		return true
	}
	m := &k.c.log.msg(k.c.view.entries[i]).msg
	return !k.cuts.straddled[i] && m.Role != RoleTool
}

// signedThinking reports whether m is an assistant message of signed
// thinking and no calls: the thinking of the calls that follow it, which a
// provider wants with them.
func signedThinking(m *Message) bool {
	if m.Role != RoleAssistant || len(m.ToolCalls) > 0 {
		return false
	}
	for _, p := range m.Parts {
		if p.Type == PartThinking && signed(p.Options) {
			return true
		}
	}
	return false
}
