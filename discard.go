package nous

import (
	"errors"
	"fmt"
)

// Discard drops what c has not saved: the events after the seq it was last
// loaded, saved or refreshed at, and the changes of its state since; c is
// then as it was then, but for its runtime fields and the deps its store
// never holds (secrets, values JSON cannot hold), which stay. It is the way
// on from a save that conflicts at the cost of what changed, not of the
// log: Discard, [Context.Refresh] to take the other writer's events, then
// redo the turn's changes and save. A context never saved nor loaded has
// nothing to go back to: an error, and c is unchanged.
//
// A save whose outcome is unknown (a lost reply) may have stored what
// Discard drops: the Refresh that follows brings it back from the store,
// as any writer's events.
func (c *Context) Discard() error {
	c.ready()
	sp := &c.persist.synced
	if sp.store == nil {
		return errors.New("nous: discard: the context was never saved nor loaded: there is no stored state to go back to")
	}
	d, err := decodeState(&Stored{Info: LogInfo{ID: c.log.id}, State: sp.state})
	if err != nil {
		return fmt.Errorf("nous: discard: %w", err) // the state c wrote or read: a bug
	}
	written := c.state(c.sanitizer()) // c's deps as it writes them, for refreshedDeps
	l := c.log.prefix(sp.head)
	entries, err := l.fold()
	if err != nil {
		return fmt.Errorf("nous: discard: %w", err) // a prefix of a log that folds: a bug
	}
	c.log, c.view.entries, c.view.shared = l, entries, false
	c.ToolCalls = c.log.toolCalls()
	c.calls = c.ToolCalls
	c.depsRec = depsRecord{base: cloneDeps(d.Deps), at: sp.head, rule: c.depsRec.rule}
	d.Deps = c.refreshedDeps(d.Deps, written.Deps)
	c.setState(&d)
	c.tokens = tokenCache{}
	c.rederive()
	sp.attempts = nil
	return nil
}

// cloneDeps returns a copy of deps as a state document decodes them,
// deep enough that the record and the context never share a map or list.
func cloneDeps(deps map[string]any) map[string]any {
	out, _ := asWritten(deps)
	m, _ := out.(map[string]any)
	return m
}
