package nous

import (
	"fmt"
	"iter"
	"slices"
)

// Pairing is the one rule about tool calls every provider enforces: the
// results of an assistant message's tool calls follow it, one tool message
// per call, before the conversation goes on; and a tool message answers a
// call of the group it follows.

// PairingError is one break of the pairing rule: where in the view, which
// call, and what is wrong. It wraps [ErrUnpaired]; errors.As finds it in
// what [Context.CheckToolPairing] and the Replace methods return, so that a
// provider adapter can name the message and the call.
type PairingError struct {
	Index   int    // the view index of the message where the problem shows
	CallID  string // the call concerned
	Problem string // what is wrong, in words
}

func (p PairingError) Error() string {
	return fmt.Sprintf("message %d, call %q: %s: %s", p.Index, p.CallID, p.Problem, ErrUnpaired)
}

func (p PairingError) Unwrap() error { return ErrUnpaired }

// same reports whether p and q are the same problem of the same call,
// wherever they show.
func (p PairingError) same(q PairingError) bool {
	return p.CallID == q.CallID && p.Problem == q.Problem
}

// The problems the pairing check reports.
const (
	unpairedOrphan      = "a tool result whose call is not open before it"
	unpairedInterrupted = "a message comes before this call's result"
	unpairedUnanswered  = "the call has no result"
	unpairedDuplicate   = "the call's ID is used twice in one message"
)

// pairing walks msgs, a run of the view with its view indices, and returns
// the problems it finds, given the calls still open before the run. With end
// true the run ends the view, and calls still open at its end are problems
// too.
func pairing(msgs iter.Seq2[int, Message], open []string, end bool) []PairingError {
	var problems []PairingError
	flush := func(at int, what string) {
		for _, id := range open {
			problems = append(problems, PairingError{at, id, what})
		}
		open = open[:0]
	}
	last := -1
	for at, m := range msgs {
		last = at
		if m.Role == RoleTool {
			if k := slices.Index(open, m.ToolCallID); k >= 0 {
				open = slices.Delete(open, k, k+1)
			} else {
				problems = append(problems, PairingError{at, m.ToolCallID, unpairedOrphan})
			}
			continue
		}
		flush(at, unpairedInterrupted)
		for k, tc := range m.ToolCalls {
			if slices.ContainsFunc(m.ToolCalls[:k], func(o ToolCall) bool { return o.ID == tc.ID }) {
				problems = append(problems, PairingError{at, tc.ID, unpairedDuplicate})
				continue
			}
			open = append(open, tc.ID)
		}
	}
	if end {
		flush(last, unpairedUnanswered)
	}
	return problems
}

// CheckToolPairing reports whether the view pairs every tool call with its
// result as providers require: the results of an assistant message's calls
// follow it, one tool message each, in any order, before any other message;
// a tool message answers a call of the group it follows; no message uses one
// call ID twice. A view that ends with calls still to be answered fails too:
// a runtime sends a view once its tools have run.
//
// It returns nil, or the first problem: an error wrapping [ErrUnpaired] that
// names the view index, the call ID and what is wrong. It walks the view
// once, allocating only for the calls of a group.
func (c *Context) CheckToolPairing() error {
	if problems := pairing(c.All(), nil, true); len(problems) > 0 {
		return fmt.Errorf("nous: tool-call pairing: %w", problems[0])
	}
	return nil
}

// checkReplace reports whether replacing the view's first..last with m
// keeps the pairing: it returns the first problem the replacement would
// bring that the view does not already have, or nil. Only the groups the
// range touches can change, so it compares the view and the replaced view
// over that window alone: from the last message before the range that is
// not a tool message to the first after it that is not one.
func (c *Context) checkReplace(first, last int, m *Message) error {
	n := c.Len()
	lo := max(first-1, 0)
	for lo > 0 && c.at(lo).Role == RoleTool {
		lo--
	}
	hi := last + 1
	for hi < n && c.at(hi).Role == RoleTool {
		hi++
	}
	end := hi == n // the window ends the view
	hi = min(hi, n-1)
	touches := func(m *Message) bool { return m.Role == RoleTool || len(m.ToolCalls) > 0 }
	involved := touches(m)
	for i := lo; i <= hi && !involved; i++ {
		involved = touches(c.at(i))
	}
	if !involved {
		return nil // no call and no result near: nothing to pair
	}
	before := func(yield func(int, Message) bool) {
		for i := lo; i <= hi; i++ {
			if !yield(i, *c.at(i)) {
				return
			}
		}
	}
	// after numbers the messages as the view after the replacement does.
	after := func(yield func(int, Message) bool) {
		for i := lo; i <= hi; i++ {
			switch {
			case i < first:
				if !yield(i, *c.at(i)) {
					return
				}
			case i == first:
				if !yield(i, *m) {
					return
				}
			case i > last:
				if !yield(i-(last-first), *c.at(i)) {
					return
				}
			}
		}
	}
	now := pairing(before, nil, end)
	for _, p := range pairing(after, nil, end) {
		// m's own calls, open because m ends the view, are a turn in
		// progress, as when such a message is added.
		if end && last == n-1 && p.Problem == unpairedUnanswered && slices.ContainsFunc(m.ToolCalls, func(tc ToolCall) bool { return tc.ID == p.CallID }) {
			continue
		}
		k := slices.IndexFunc(now, p.same)
		if k < 0 {
			return p
		}
		now = slices.Delete(now, k, k+1)
	}
	return nil
}

// openCalls returns the IDs of the calls the view ends waiting for: the
// calls of its last message that is not a tool message, less those the tool
// messages after it answer (each once). It reads that group alone.
func (c *Context) openCalls() []string {
	n := c.Len()
	i := n - 1
	for i >= 0 && c.at(i).Role == RoleTool {
		i--
	}
	if i < 0 {
		return nil
	}
	var open []string
	for _, tc := range c.at(i).ToolCalls {
		open = append(open, tc.ID)
	}
	for j := i + 1; j < n; j++ {
		if k := slices.Index(open, c.at(j).ToolCallID); k >= 0 {
			open = slices.Delete(open, k, k+1)
		}
	}
	return open
}
