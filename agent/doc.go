// Package agent is a runner of agent turns on nous sessions: it calls a
// model ([nous.Model], which each provider module implements for each API
// it adapts), runs the tools the model calls, and records every step in
// the session's log, saved after each step. It is built on the public API
// of package nous alone; a runtime of another kind can use the same
// primitives ([nous.Context.Pending], [nous.Context.StartToolCall],
// [nous.Context.RequestApproval], [nous.Context.Decide]).
//
// # The turn's record
//
// A turn is recorded as it goes, and the log alone says what remains of
// it ([nous.Context.Pending]):
//
//   - the user's messages, saved under the turn's key ([Input.Key]), so a
//     turn retried after a lost reply or a restart adds them once;
//   - each model reply, saved as soon as it is whole (or cut short: a
//     stream ctx ended is saved as far as it got), never asked for again;
//   - before a tool runs, its start (a tool_start event, with the runner
//     and its lease), saved: the write-ahead that makes a call started and
//     not finished known to be in doubt after a crash;
//   - each result, with when its tool started and returned, saved.
//
// A turn stopped anywhere is resumed by a Run with no messages, in any
// process: the model is called only if the log holds no reply to what it
// last saw, a call with a result never runs again, a call never started
// runs, and a call in doubt follows its tool's policy ([InDoubt]: run it
// again, answer that it was interrupted, or ask the system of record).
//
// # Approvals
//
// A tool whose Approve says so stops the turn at its call: the call is
// recorded as waiting (an approval_request event) and Run returns it in
// [Turn.Waiting]. Any process, after any restart, decides
// ([Runner.Decide]): approve, approve with other arguments, or reject with
// a reason, bound to the call, the request and the digest of the arguments
// the decider read, so a decision on anything else is refused. A context's
// ApprovalHandler, when set, decides at once instead.
//
// # Several writers
//
// A Runner runs one turn of a session at a time. Across processes the log
// decides: a save that conflicts (another writer saved the session first)
// loads the session again and goes on from what it holds, with a jittered
// backoff ([Backoff]) so the slower writer is not starved. A reply the
// other writer made redundant is dropped (the model is called again only if
// the log still needs a reply); results of tools that ran are recorded
// again on the session as stored, never run again. A call started under
// another runner's lease ([Runner.Lease], a minute unless set) is left to
// it until the lease ends; a Run's messages wait until no call of the
// session is without a result, so a message never comes between a call
// and its result.
package agent
