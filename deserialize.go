package nous

import (
	"fmt"
	"log/slog"
)

// Deserialize reads a context written by [Context.Serialize] (format version
// 2), by the reference library's version 1, or by its own version 2 (Nous
// v0.17.1: top-level events instead of a log, replacements by position);
// FORMAT.md says how.
//
// A version 2 blob rebuilds the session log, its ID, parent and fork seq
// included, folds it once and gets back the same view: the restored
// context's next event has the next seq. A version 1 blob has no log: each
// of its messages becomes one event in a new log with a new ID, stamped, like
// the message, with the time of the restore; an unknown role is read as user,
// with a warning on slog.Default() ([DeserializeWithLogger] says where). The
// reference's version 2 keeps every event, its time and its data, in a new
// log with a new ID. Deps, event data and metadata decode whole numbers as
// int. The runtime-only fields are unset and there is no
// overlay.
//
// Deserialize fails closed: anything it cannot trust is an error that names
// the place, and no context. Not JSON, not an object or an unexpected type in
// a field wraps [ErrMalformed]; a missing or non-integer version
// [ErrMissingVersion]; another version [ErrUnsupportedVersion]; events whose
// seqs are not 1, 2, 3, ..., that break the rules of their type or that do
// not fold [ErrInvalidLog], [ErrUnknownEventType] or [ErrInvalidMessage].
// It never panics, whatever data holds.
func Deserialize(data []byte) (*Context, error) { return DeserializeWithLogger(data, nil) }

// DeserializeWithLogger is [Deserialize] with a logger: the warnings reading
// data gives go to l, and l is the restored context's Logger. A nil l is
// slog.Default(), as for a [Context].
func DeserializeWithLogger(data []byte, l *slog.Logger) (*Context, error) {
	warn := l
	if warn == nil {
		warn = slog.Default()
	}
	r, err := readDocument(data, warn)
	if err != nil {
		return nil, err
	}
	c, err := contextOf(r)
	if err != nil {
		return nil, fmt.Errorf("nous: deserialize: %w", err)
	}
	c.Logger = l
	return c, nil
}

// contextOf returns the context of what a reader made of a document or a
// store; the tool calls it kept apart from the log are recorded in it (see
// takeToolCalls), and an error says where they do not fit.
func contextOf(r *restored) (*Context, error) {
	c := &Context{persist: newPersistence()}
	c.setState(&r.state)
	c.ToolCalls = r.state.ToolCalls
	c.log, c.view.entries = r.log, r.view
	if err := c.takeToolCalls(now(), "tool_calls"); err != nil {
		return nil, err
	}
	lists := map[string][]any{}
	deps, err := foldDeps(nil, lists, &c.log, 0, c.log.len())
	if err != nil {
		return nil, err
	}
	c.depsRec = depsRecord{base: deps, at: c.log.len(), lists: lists}
	return c, nil
}

// setState sets c's plain state to st's, but for the tool calls, which are
// the log's: the one place Deserialize, Load and Refresh take a state.
func (c *Context) setState(st *state) {
	c.SystemPrompt, c.Deps, c.Usage, c.NeedsResponse = st.SystemPrompt, st.Deps, st.Usage, st.NeedsResponse
	c.Iteration, c.MaxIterations, c.AgentName, c.StartedAt = st.Iteration, st.MaxIterations, st.AgentName, st.StartedAt
}
