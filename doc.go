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
// When a model asks for several tools at once, [Context.RunToolCalls] runs
// them in parallel, each on its own snapshot ([RunContext.Call] is the call it
// serves), then applies their updates and adds their results in call order,
// so the result does not depend on which tool finished first. A runtime that
// runs tools itself combines their updates in call order with [Combine].
//
// # Tool calls and their results
//
// Every provider requires the results of an assistant message's tool calls
// to follow it, one tool message each, before the conversation goes on.
// [Context.CheckToolPairing] says whether the view does; ReplaceMessage and
// ReplaceMessageRange refuse a replacement that would break it; and
// [Context.PatchDanglingToolCalls] answers, right after its group, a call a
// run was interrupted before answering. A model's malformed arguments are
// kept as they came: [ToolCall.ParseArguments] says they are unusable, and a
// runtime answers the call with [ToolErrorMessage] so that the model retries.
//
// [Context.AddToolCall] records a call the runtime made: a tool_call event
// whose [Event.Call] is the call. Context.ToolCalls is the fold of those
// events, kept as they are appended, so a store keeps recorded calls as it
// keeps every event and a save costs the calls added since, not all of
// them. A call appended to the field directly is recorded at the next save;
// a list edited otherwise is refused ([ErrToolCallsEdited]).
//
// # The system prompt, reasoning and the loop
//
// The system prompt lives in three places, each with its job. The
// SystemPrompt field is the agent's instructions, state saved with the
// context; a system message in the log (often the first) is part of the
// transcript, such as a summary compaction wrote; and the overlay
// ([Context.SetSystemPromptOverlay]) is derived from configuration at every
// run and never logged. An adapter sends the view ([Context.All]), overlay
// included, and the SystemPrompt field when the view does not start with a
// system message of its own.
//
// ReasoningContent is a model's reasoning as plain text, for display and
// logs; a thinking part ([PartThinking]) is a provider's reasoning block
// with its signature, which the provider requires back byte for byte on the
// next request. An adapter sends thinking parts, not ReasoningContent.
//
// Iteration and MaxIterations count the model calls of one run, not of the
// session: a runtime adds one per call ([Context.IncrementIteration]), stops
// at [Context.MaxIterationsReached], and sets Iteration back to 0 when a new
// user turn starts a new run. The runtime fields (Stream, Callbacks, Notify,
// ApprovalHandler, CancellationCheck) are for the runner: nous stores them,
// calls the callbacks when the runner raises an event ([Context.Emit]),
// and raises the tool events itself in [Context.RunToolCalls].
//
// Each model call a provider adapter's Send or Stream makes ends with
// [Context.EndStep]: its usage added to Usage, and a step_end event that
// records it ([StepOf]), so that the log says what each call cost. An
// [Context.Observer] sees every event as the context appends it: a live
// trace of the run, as the log is one after the fact.
//
// # Streaming
//
// Each provider adapter reads its SDK's own stream: a reader that takes the
// stream's events one by one, and a Stream function beside Send that fills
// the request, reads the stream and adds the reply. As the reply streams,
// the caller gets its [Delta]s (text, thinking, a tool call's name and
// arguments as they grow); [Context.EmitDelta] routes them to the
// context's Callbacks under the reference library's names
// ([CallbackLLMNewDelta], [CallbackLLMNewThinkingDelta]). A stream that
// ends gives the message and usage the same response not streamed gives,
// byte for byte. One that stops early (cancelled, cut, an error event)
// returns an error wrapping [ErrInterrupted] and a partial reply marked
// [MetadataInterrupted]: the text so far, thinking as plain text, no tool
// call; its usage is counted, and the caller adds the partial reply, or
// not, so that the view stays one a provider takes.
//
// # Saving and resuming
//
// [Context.Serialize] writes a versioned JSON document ([FormatVersion] 2)
// holding the log itself, and [Deserialize] reads it back, or reads the
// reference's version 1. Secrets in deps (keys like "api_key" or "token")
// are never written, nor are their values wherever the conversation
// repeats them (a tool that echoes a key): they are masked with
// [MaskedSecret]. Runtime-only fields (callbacks, the observer, the
// cancellation check, the logger) are never written either.
// [Context.AppendEventJSON] writes one event in the same persisted form,
// for a store that keeps events one by one. What is never written (a
// credential, a handle to a database, the runtime fields) a runtime
// supplies once per process, as the options of [LoadWith], [LoadByName] or [Resume];
// [Context.Refresh] then keeps it, taking only what another writer
// changed. A conversation interrupted in the middle of a tool call
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
