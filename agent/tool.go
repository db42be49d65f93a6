package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nous-go/nous"
)

// InDoubt says what a runner does with a call of a tool that was started
// and has no result when it resumes the turn: the process that ran it
// stopped (a crash, a kill, a deploy) before the result was saved, so the
// tool may have run, in part or whole.
type InDoubt int

// The policies for a call in doubt.
const (
	// Rerun runs the call again: for tools that are idempotent (a
	// lookup, a read, a write of the same value). It is the default.
	Rerun InDoubt = iota
	// AtMostOnce never runs the call again: its result, which the model
	// sees, says that it was interrupted and not retried, so a tool with
	// an effect that must not happen twice (a payment, an email) has it at
	// most once.
	AtMostOnce
	// Reconcile asks the tool's Reconcile function, which looks in the
	// system of record whether the call's effect happened: its result if
	// it did, and otherwise the call runs again.
	Reconcile
)

// Tool is a tool a runner offers the model and runs: its definition, its
// function, and what the runner does with a call of it that is in doubt
// or needs approval.
type Tool struct {
	Def nous.Tool
	Run nous.ToolFunc
	// InDoubt is the policy for a call started and not finished when the
	// turn resumes; Rerun unless set.
	InDoubt InDoubt
	// Reconcile, for InDoubt == Reconcile, reports whether the call's
	// effect happened, and then its result; an error leaves the call in
	// doubt, and ends the turn with it.
	Reconcile func(ctx context.Context, call nous.ToolCall) (result nous.ToolResult, happened bool, err error)
	// Approve, when set, reports whether a call needs a decision before it
	// runs ([nous.Context.RequestApproval]): the turn stops there until a
	// decision is made ([Runner.Decide]), or the context's
	// ApprovalHandler decides at once.
	Approve func(call nous.ToolCall) bool
}

// NewTool returns the tool of that name and description whose arguments
// are a value of type A (its JSON Schema from [nous.SchemaOf]): run gets
// them decoded, and returns the result's content, an optional update of
// the context and an error (which makes the result an error result the
// model sees). Arguments that do not decode into A give an error result
// naming what was wrong, and run is not called.
func NewTool[A any](name, description string, run func(ctx context.Context, rc nous.RunContext, args A) (string, nous.ContextUpdate, error)) (Tool, error) {
	var zero A
	def, err := nous.NewTool(name, description, zero)
	if err != nil {
		return Tool{}, err
	}
	return Tool{Def: def, Run: func(ctx context.Context, rc nous.RunContext) nous.ToolResult {
		var args A
		if err := json.Unmarshal(argumentsOrEmpty(rc.Call.Arguments), &args); err != nil {
			return nous.ToolResult{Err: fmt.Errorf("the arguments of %s do not match its schema: %v", name, err)}
		}
		content, update, err := run(ctx, rc, args)
		return nous.ToolResult{Content: content, Update: update, Err: err}
	}}, nil
}

// argumentsOrEmpty returns args, or an empty object for a call without
// arguments.
func argumentsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}
