package nous

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// AddToolCall records a copy of call: a tool_call event in the log whose
// Call is the call, and the call at the end of ToolCalls. ToolCalls is the
// fold of those events, so a save stores only the calls recorded since the
// last one, and a loaded or refreshed context gets them back from its log.
//
// ToolCalls is a record: a write to it is found at the next Save, Refresh
// or Serialize (and the next AddToolCall or Clone). Calls appended to it
// directly are recorded then, as AddToolCall would have recorded them; a
// list that no longer starts with the recorded calls (one removed,
// replaced, or the field set to a shorter or another list) makes those
// calls fail with an error wrapping [ErrToolCallsEdited], changing
// nothing; set ToolCalls = c.Log().ToolCalls() to go on. Save and Refresh
// tell a direct write by the slice alone, at no cost per call, so they do
// not see an element edited in place (c.ToolCalls[0].Name = "x"); Serialize
// compares every call and refuses that too. The log keeps what was
// recorded: record a corrected call rather than editing one.
func (c *Context) AddToolCall(call ToolCall) {
	_ = c.recordToolCalls(false) // calls appended directly go first; an edited list is refused at the next save
	c.recordCall(call.clone(), now())
}

// recordCall appends a tool_call event recording tc, which the log keeps,
// and tc's copy to ToolCalls.
func (c *Context) recordCall(tc ToolCall, at time.Time) {
	own := tc.clone()
	r := record{typ: EventToolCall, at: at}
	c.ToolCalls = append(c.ToolCalls, own)
	c.calls = c.ToolCalls
	c.mustAdd(&r, nil, &tc, slot{})
}

// recordToolCalls makes ToolCalls and the log agree again after a direct
// write: calls appended to the recorded ones are recorded, and a list that
// does not start with them is an error wrapping [ErrToolCallsEdited]. With
// deep false it trusts an unchanged slice header and costs nothing per
// call; with deep true it compares every call, as they would be written.
func (c *Context) recordToolCalls(deep bool) error {
	n := c.log.calls.len()
	same := len(c.ToolCalls) == len(c.calls) && int64(len(c.calls)) == n &&
		(n == 0 || &c.ToolCalls[0] == &c.calls[0])
	if same && !deep {
		return nil
	}
	if int64(len(c.ToolCalls)) < n {
		return fmt.Errorf("nous: tool calls: %d in Context.ToolCalls, %d recorded in the log: %w", len(c.ToolCalls), n, ErrToolCallsEdited)
	}
	var san *sanitizer
	for i := range n {
		if san == nil {
			san = newSanitizer(c.Redact)
		}
		if !sameCall(san, &c.ToolCalls[i], c.log.calls.at(i)) {
			return fmt.Errorf("nous: tool calls: Context.ToolCalls[%d] (%q, %s) is not the call the log records there (%q, %s): %w",
				i, c.ToolCalls[i].ID, c.ToolCalls[i].Name, c.log.calls.at(i).ID, c.log.calls.at(i).Name, ErrToolCallsEdited)
		}
	}
	if int64(len(c.ToolCalls)) == n {
		if !same { // the same calls in another slice: written only then, so that an idle Serialize reads only
			c.calls = c.ToolCalls
		}
		return nil
	}
	added, at := c.ToolCalls[n:], now()
	c.ToolCalls = slices.Clip(c.ToolCalls[:n]) // the caller's array is not written
	for i := range added {
		c.recordCall(added[i].clone(), at)
	}
	return nil
}

// sameCall reports whether a and b are written alike, sanitized by s: the
// same call as the log would store it.
func sameCall(s *sanitizer, a, b *ToolCall) bool {
	if a.ID != b.ID || a.Name != b.Name || !bytes.Equal(a.Arguments, b.Arguments) {
		return false
	}
	if len(a.Metadata) == 0 && len(b.Metadata) == 0 && (a.Metadata == nil) == (b.Metadata == nil) {
		return true
	}
	return bytes.Equal(encodeCall(s, a), encodeCall(s, b))
}

// encodeCall returns tc's JSON as the log writes it, sanitized by s.
func encodeCall(s *sanitizer, tc *ToolCall) []byte {
	out, _ := s.toolCall(tc)
	var buf bytes.Buffer
	newJSONWriter(&buf).toolCall(&out)
	return buf.Bytes()
}

// adoptToolCalls takes the tool calls a document or a store kept apart
// from the log (a writer from before tool_call events recorded them, or a
// reader's projection of them): they must start with the calls the log
// records, and the ones after those are recorded, stamped at, as tool_call
// events at the end of the log. place names them in errors.
func (c *Context) adoptToolCalls(calls []ToolCall, at time.Time, place string) error {
	n := c.log.calls.len()
	if int64(len(calls)) < n && len(calls) > 0 {
		return fmt.Errorf("%s: %d calls, the log records %d: %w", place, len(calls), n, ErrInvalidLog)
	}
	san := newSanitizer(nil)
	for i := range min(int64(len(calls)), n) {
		if !sameCall(san, &calls[i], c.log.calls.at(i)) {
			return fmt.Errorf("%s[%d]: %q is not the call the log records there (%q): %w", place, i, calls[i].ID, c.log.calls.at(i).ID, ErrInvalidLog)
		}
	}
	for i := n; i < int64(len(calls)); i++ {
		c.recordCall(calls[i], at)
	}
	return nil
}

// takeToolCalls replaces ToolCalls, as a decoder read them from a
// document's or a state's tool_calls, with the calls the log records, and
// adopts the ones read (see adoptToolCalls).
func (c *Context) takeToolCalls(at time.Time, place string) error {
	read := c.ToolCalls
	c.ToolCalls = c.log.toolCalls()
	c.calls = c.ToolCalls
	return c.adoptToolCalls(read, at, place)
}
