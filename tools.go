package nous

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// ToolResult is what a tool returns for one call: the content of its result,
// and the update it wants made to the context.
type ToolResult struct {
	// Content is the text of the tool message that answers the call.
	Content string
	// Update is applied to the context after every call of the turn has
	// returned, in the order of the calls.
	Update ContextUpdate
	// Err, when set, makes the result an error result
	// ([ToolErrorMessage]): its content is Content, or Err's text when
	// Content is empty, and Update is not applied.
	Err error
	// Started and Ended, when set, are when the tool ran, which the
	// result's event records instead of the times RunToolCalls measures:
	// for a result a runtime got before (a tool that ran before a retry,
	// or elsewhere).
	Started, Ended time.Time
}

// ToolFunc runs one tool call: rc is the call's own snapshot of the context,
// with rc.Call the call it serves. It runs on a goroutine of its own, beside
// the turn's other calls, and must honour ctx.
type ToolFunc func(ctx context.Context, rc RunContext) ToolResult

// RunToolCalls runs a turn's tool calls in parallel and records their
// results, the way a runtime must for the view to stay valid:
//
//   - each call runs on its own goroutine, with its own [RunContext] from
//     [Context.ToRunContext] (opts apply to each; rc.Call is the call), so
//     the tools read their snapshots while nothing writes them;
//   - a tool that panics gives an error result naming the panic (its stack
//     goes to the context's logger), and RunToolCalls waits for every tool,
//     even once ctx is done, as it must not write the context while a tool
//     reads: a tool honours ctx by returning, with Err set, when it is done;
//   - once every call has returned, on the caller's goroutine, each call in
//     turn has its update applied and its tool message added, so the
//     results follow one another in call order in the view (the log events
//     an update carries come just before its call's result in the log),
//     each result's event recording when its tool started and returned
//     ([DataStartedAt], [DataEndedAt]).
//
// An update that fails to apply (an append onto a value that is not a list,
// say) changes nothing, as [ContextUpdate.Apply] does; its call's result is
// turned into an error result whose content says why after the tool's own,
// and the other calls' updates apply. RunToolCalls then returns an error
// joining one error per such call, each naming the call and wrapping the
// update's error. Before running anything, it returns ctx's error when ctx
// is done, and an error wrapping [ErrInvalidMessage] for a call without an
// ID, which no result could answer, and one wrapping [ErrUnpaired] for a
// call the view does not end waiting for (no assistant message made it, or
// a result answers it already), whose result would pair with nothing; then
// nothing changes. Every call run is recorded ([Context.AddToolCall]) just
// before its result, as the reference library records executed calls.
//
// It raises the reference library's events ([Context.Emit]), on the
// caller's goroutine: [CallbackToolCall] with each call before any runs,
// and [CallbackToolResponse] with each result as it is added.
//
// The context must not be used by anything else until RunToolCalls returns.
func (c *Context) RunToolCalls(ctx context.Context, calls []ToolCall, run ToolFunc, opts ...RunContextOption) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: run tool calls: %w", err)
	}
	if run == nil {
		return errors.New("nous: run tool calls: no ToolFunc")
	}
	for i, call := range calls {
		if call.ID == "" {
			return fmt.Errorf("nous: run tool calls: call %d (%s) has no id, so no result can answer it: %w", i, call.Name, ErrInvalidMessage)
		}
	}
	open := c.openCalls()
	for i, call := range calls {
		k := slices.Index(open, call.ID)
		if k < 0 {
			return fmt.Errorf("nous: run tool calls: call %d (%q, %s) is not a call the view ends waiting for (add the assistant message that makes it first), so its result would pair with nothing: %w",
				i, call.ID, call.Name, ErrUnpaired)
		}
		open = slices.Delete(open, k, k+1)
	}
	if c.listens(CallbackToolCall) {
		for _, call := range calls {
			c.Emit(CallbackToolCall, call.clone())
		}
	}
	results := make([]ToolResult, len(calls))
	times := make([][2]time.Time, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		rc := c.ToRunContext(opts...)
		rc.Call = call.clone() // its own: a tool writing it cannot rewrite the log
		wg.Add(1)
		go func() {
			defer wg.Done()
			times[i][0] = now()
			results[i] = runTool(ctx, rc, run)
			times[i][1] = now()
		}()
	}
	wg.Wait()

	var failed []error
	for i, call := range calls {
		c.AddToolCall(call)
		r := &results[i]
		if r.Err == nil {
			if err := r.Update.Apply(c); err != nil {
				r.Err = err
				r.Content = strings.TrimSpace(r.Content + "\n\nThe tool's change to the context was not made: " + err.Error())
				failed = append(failed, fmt.Errorf("nous: tool call %q (%s): %w", call.ID, call.Name, err))
			}
		}
		m := ToolMessage(call.ID, call.Name, r.Content)
		if r.Err != nil {
			if m.Content == "" {
				m.Content = r.Err.Error()
			}
			m.Metadata = map[string]any{MetadataIsError: true}
		}
		if !r.Started.IsZero() && !r.Ended.IsZero() {
			times[i] = [2]time.Time{r.Started, r.Ended}
		}
		c.appendMessageData(m, callTimes(times[i][0], times[i][1]))
		if c.listens(CallbackToolResponse) {
			c.Emit(CallbackToolResponse, m)
		}
	}
	return errors.Join(failed...)
}

// runTool runs one call, turning a panic into an error result.
func runTool(ctx context.Context, rc RunContext, run ToolFunc) (r ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			rc.logger().Error("nous: a tool panicked", "call", rc.Call.ID, "tool", rc.Call.Name, "panic", p, "stack", string(debug.Stack()))
			r = ToolResult{Err: fmt.Errorf("tool %q failed: %v", rc.Call.Name, p)}
		}
	}()
	return run(ctx, rc)
}
