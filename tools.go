package nous

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
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
//   - once every call has returned, on the caller's goroutine, the updates
//     are applied one call at a time, in call order, and one tool message
//     per call is added, in call order, right after one another.
//
// An update that fails to apply (an append onto a value that is not a list,
// say) changes nothing, as [ContextUpdate.Apply] does; its call's result is
// turned into an error result saying why, and the other calls' updates
// apply. RunToolCalls then returns an error joining one error per such call,
// each naming the call and wrapping the update's error. It returns ctx's
// error when ctx is done before any tool runs, having changed nothing.
//
// The context must not be used by anything else until RunToolCalls returns.
func (c *Context) RunToolCalls(ctx context.Context, calls []ToolCall, run ToolFunc, opts ...RunContextOption) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nous: run tool calls: %w", err)
	}
	results := make([]ToolResult, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		rc := c.ToRunContext(opts...)
		rc.Call = call
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runTool(ctx, rc, run)
		}()
	}
	wg.Wait()

	var failed []error
	for i, call := range calls {
		r := &results[i]
		if r.Err == nil {
			if err := r.Update.Apply(c); err != nil {
				r.Err = fmt.Errorf("its update was not applied: %w", err)
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
		c.appendMessage(m, "")
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
