// Package nous is the context layer of an agent runtime: the state of one
// agent run, its conversation as an append-only event log, and the values
// tools return to change it.
//
// # Events fold into messages
//
// A [Context] never stores "the messages" as the truth. Every message added
// becomes an event in the context's [SessionLog], which only grows, and the
// list the model sees is a fold of that log:
//
//	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
//	c.AddMessage(nous.UserMessage("What is 6 × 7?"))
//	c.LogEvent(nous.EventTurnStart, map[string]any{"turn": 1}) // logged, never shown to the model
//	c.AddMessage(nous.AssistantMessage("42"))
//	for i, m := range c.All() {
//		fmt.Println(i, m.Role, m.Text()) // 0 user What is 6 × 7?, 1 assistant 42
//	}
//
// Message events (user, assistant, system, tool result) add a message.
// Bookkeeping events (turn and step boundaries, tool calls, request headers)
// record what happened and add nothing. Compaction does not delete: it
// appends a replace event ([Context.ReplaceMessageRange]) that puts one
// message, a summary say, where a range of the view was, and the originals
// stay in the log. The fold is kept incrementally, so adding a message costs
// the same in the thousandth turn as in the first; [Fold] computes the same
// view from events read back from anywhere.
//
// The system-prompt overlay ([Context.SetSystemPromptOverlay]) is applied when
// the view is read, not logged, so a fragment derived from configuration on
// every run never piles up in the log.
//
// # Tools return updates
//
// A tool does not write to the context. It receives a [RunContext], a
// snapshot of the deps it can read on any goroutine, and returns a
// [ContextUpdate]: a list of set, merge, append, delete and log-event
// operations. One reducer, [ContextUpdate.ToDeps], defines what every
// operation means; [ContextUpdate.Apply] and [ContextUpdate.ApplyToRunContext]
// both go through it.
//
//	rc := c.ToRunContext()
//	update := nous.NewContextUpdate().
//		Append("notes", "user prefers metric units").
//		LogEvent(nous.EventToolCall, map[string]any{"name": "remember"})
//	if err := update.Apply(c); err != nil { ... } // all or nothing
//
// When a model asks for several tools at once, run them in parallel and
// combine their updates in call order with [Combine], so the result does not
// depend on which tool finished first.
//
// # Saving and resuming
//
// [Context.Serialize] writes a versioned JSON document ([FormatVersion] 2)
// holding the log itself, and [Deserialize] reads it back, or reads the
// reference's version 1. Secrets in deps (keys like "api_key" or "token")
// are never written, and runtime-only fields (callbacks, the cancellation
// check, the logger) are never written either. [Context.AppendEventJSON]
// writes one event in the same persisted form, for a store that keeps
// events one by one. A conversation interrupted in the middle of a tool call
// is repaired with [Context.PatchDanglingToolCalls] before it goes back to a
// provider.
//
// # Identity
//
// A log has an ID, a UUID v7 made when its context is created, and each event
// a Seq, 1, 2, 3, ... The pair names an event anywhere, a database included.
// [Context.Clone] forks: the copy's log has a new ID, remembers its parent's
// ID and the seq it forked at, and shares every event they have in common.
// [SessionLog.Snapshot] freezes a log in O(1) for a store on another
// goroutine, and [SessionLog.Since] yields the events it has not saved yet.
//
// # Concurrency
//
// A Context is owned by one goroutine; its methods must not be called
// concurrently. What crosses goroutines is values: a [RunContext] from
// [Context.ToRunContext] holds its own deep copy of the deps, so any number of
// tool goroutines may read their snapshots while the owner keeps adding
// messages; a [ContextUpdate] is immutable; a clone shares nothing that
// either side writes.
//
// # Caveats
//
//   - The messages yielded by [Context.All] share their maps and slices with
//     the log, to avoid copying: read them, do not modify them. [Context.Messages]
//     returns a deep copy.
//   - Deps hold any value, but only JSON-shaped values (maps, []any, strings,
//     numbers, booleans) are copied deeply and serialized. Whole numbers read
//     back from JSON are int; use [Dep] to read a number of any type.
//   - Deep copies (of deps, messages, update values) go down 1,000 levels of
//     nesting and share whatever lies deeper with the original; such a value
//     is not written by [Context.Serialize] either. The package never writes
//     into a value it did not make, at any depth.
package nous
