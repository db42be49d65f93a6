package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nous-go/nous"
)

// The errors of the results a runner gives calls it does not run; the
// model sees their Content.
var (
	errRejected    = errors.New("rejected")
	errInterrupted = errors.New("interrupted, not run again")
)

// plan is what a step of tool calls does with each call without a result.
type plan struct {
	run     []nous.ToolCall            // to start, save, and run
	fixed   map[string]nous.ToolResult // answered without running: rejected, interrupted, reconciled, unknown
	order   []nous.ToolCall            // the calls of run and fixed, in the reply's order
	waiting []nous.PendingCall         // waiting for a decision
	leased  time.Time                  // the earliest end of a lease another runner holds; zero for none
}

// calls takes one step of the turn's calls without a result (pending):
// asks for approvals, applies the policy of calls in doubt, starts the
// calls to run and saves their starts, runs them, and records and saves
// the results. It returns the calls that wait for a decision.
func (r *Runner) calls(ctx context.Context, s *turnState, pending []nous.PendingCall) ([]nous.PendingCall, error) {
	p, err := r.plan(ctx, s, pending)
	if err != nil {
		return nil, err
	}
	if len(p.waiting) > 0 {
		_, err := r.save(ctx, s, nil) // the requests; on a conflict, the next Run finds what remains
		return p.waiting, err
	}
	if len(p.run) == 0 && len(p.fixed) == 0 {
		return nil, r.awaitLease(ctx, s, p.leased)
	}
	lease := nous.Lease{Owner: r.ownerID()}
	switch {
	case r.Lease == 0:
		lease.Until = time.Now().Add(time.Minute)
	case r.Lease > 0:
		lease.Until = time.Now().Add(r.Lease)
	}
	for _, call := range p.run {
		if _, err := s.c.StartToolCall(call.ID, lease); err != nil {
			return nil, fmt.Errorf("agent: run %q: %w", s.name, err)
		}
	}
	if len(p.run) > 0 {
		if reloaded, err := r.save(ctx, s, nil); err != nil || reloaded {
			return nil, err // not started: the session as stored says what remains
		}
	}
	results := &resultSet{byID: make(map[string]nous.ToolResult, len(p.order))}
	// An update that fails to apply is in its call's result, which the
	// model reads: the turn goes on. An error before any call ran (ctx
	// done) ends it, the calls in doubt for the next Run.
	if err := s.c.RunToolCalls(ctx, p.order, r.dispatch(p, results)); err != nil && len(results.byID) == 0 {
		return nil, fmt.Errorf("agent: run %q: %w", s.name, err)
	}
	_, err = r.save(ctx, s, func(c *nous.Context) error { return redoResults(ctx, c, results.byID) })
	return nil, err
}

// plan decides what a step does with each call of pending.
func (r *Runner) plan(ctx context.Context, s *turnState, pending []nous.PendingCall) (*plan, error) {
	p := &plan{fixed: map[string]nous.ToolResult{}}
	fix := func(call nous.ToolCall, res nous.ToolResult) {
		p.fixed[call.ID] = res
		p.order = append(p.order, call)
	}
	for _, pc := range pending {
		t, ok := r.tool(pc.Call.Name)
		if !ok {
			fix(pc.Call, nous.ToolResult{Err: fmt.Errorf("there is no tool named %q", pc.Call.Name)})
			continue
		}
		if pc.State == nous.CallNotStarted && t.Approve != nil && t.Approve(pc.Call) || pc.State == nous.CallAwaitingApproval {
			decided, err := r.approval(s.c, &pc)
			if err != nil {
				return nil, err
			}
			if !decided {
				p.waiting = append(p.waiting, pc)
				continue
			}
		}
		if err := r.planCall(ctx, p, t, pc, fix); err != nil {
			return nil, fmt.Errorf("agent: run %q: %w", s.name, err)
		}
	}
	return p, nil
}

// planCall puts pc, a call of tool t whose approval, if any, is decided,
// in p: to run, answered at once, or left to the runner whose lease it is
// under.
func (r *Runner) planCall(ctx context.Context, p *plan, t Tool, pc nous.PendingCall, fix func(nous.ToolCall, nous.ToolResult)) error {
	switch pc.State {
	case nous.CallRejected:
		why := "The call was rejected"
		if pc.Decision.Reason != "" {
			why += ": " + pc.Decision.Reason
		}
		fix(pc.Call, nous.ToolResult{Content: why + ".", Err: errRejected})
	case nous.CallInDoubt:
		if pc.Lease.Owner != r.ownerID() && time.Now().Before(pc.Lease.Until) {
			if p.leased.IsZero() || pc.Lease.Until.Before(p.leased) {
				p.leased = pc.Lease.Until
			}
			return nil
		}
		switch t.InDoubt {
		case AtMostOnce:
			fix(pc.Call, nous.ToolResult{Content: "The call was interrupted before its result was recorded, and is not run again: it may or may not have taken effect.", Err: errInterrupted})
			return nil
		case Reconcile:
			if t.Reconcile == nil {
				return fmt.Errorf("tool %q reconciles calls in doubt but has no Reconcile", t.Def.Name)
			}
			res, happened, err := t.Reconcile(ctx, pc.Call)
			if err != nil {
				return fmt.Errorf("reconcile call %q of %s: %w", pc.Call.ID, t.Def.Name, err)
			}
			if happened {
				fix(pc.Call, res)
				return nil
			}
		}
		p.run, p.order = append(p.run, pc.Call), append(p.order, pc.Call)
	default:
		p.run, p.order = append(p.run, pc.Call), append(p.order, pc.Call)
	}
	return nil
}

// approval asks for a decision on pc, a call that needs one, when none
// was asked, and has the context's ApprovalHandler, when set, decide at
// once. It reports whether pc is decided, and updates it.
func (r *Runner) approval(c *nous.Context, pc *nous.PendingCall) (bool, error) {
	if pc.State == nous.CallNotStarted {
		req, err := c.RequestApproval(pc.Call.ID)
		if err != nil {
			return false, err
		}
		pc.Request, pc.State = req, nous.CallAwaitingApproval
	}
	if c.ApprovalHandler == nil {
		return false, nil
	}
	call, ok := c.ApprovalHandler(pc.Call)
	d := nous.Decision{CallID: pc.Call.ID, Request: pc.Request, Digest: pc.Digest, Approve: ok, By: "ApprovalHandler"}
	if ok && !slices.Equal(call.Arguments, pc.Call.Arguments) {
		d.Arguments = call.Arguments
	}
	if err := c.Decide(d); err != nil {
		return false, err
	}
	for _, now := range c.Pending().Calls {
		if now.Call.ID == pc.Call.ID {
			*pc = now
		}
	}
	return true, nil
}

// awaitLease waits until the earliest lease another runner holds on a
// call of s ends, within the backoff's longest wait, then loads the
// session again: that runner may have saved its result meanwhile.
func (r *Runner) awaitLease(ctx context.Context, s *turnState, until time.Time) error {
	if s.store == nil || until.IsZero() {
		return fmt.Errorf("agent: run %q: a call is in doubt under another runner's lease, and there is no store to follow it in", s.name)
	}
	wait := min(time.Until(until), r.backoff().Max)
	t := time.NewTimer(max(wait, time.Millisecond))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("agent: run %q: waiting for another runner's call: %w", s.name, ctx.Err())
	}
	return s.catchUp(ctx)
}

// tool returns the runner's tool named name.
func (r *Runner) tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Def.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// resultSet is the results a step's calls gave, kept to record them again
// on the session as stored after a conflict.
type resultSet struct {
	mu   sync.Mutex
	byID map[string]nous.ToolResult
}

// dispatch returns the ToolFunc of a step: a call p answers without
// running gets that result, any other runs its tool; each result goes into
// results too, with when its tool ran.
func (r *Runner) dispatch(p *plan, results *resultSet) nous.ToolFunc {
	return func(ctx context.Context, rc nous.RunContext) nous.ToolResult {
		res, fixed := p.fixed[rc.Call.ID]
		if !fixed {
			t, _ := r.tool(rc.Call.Name)
			started := time.Now()
			res = runSafely(ctx, rc, t.Run)
			res.Started, res.Ended = started, time.Now()
		}
		results.mu.Lock()
		results.byID[rc.Call.ID] = res
		results.mu.Unlock()
		return res
	}
}

// runSafely runs one call, a panic of the tool its error result: as
// RunToolCalls does, but kept here so that the result is recorded with the
// others.
func runSafely(ctx context.Context, rc nous.RunContext, run nous.ToolFunc) (res nous.ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			res = nous.ToolResult{Err: fmt.Errorf("tool %q failed: %v", rc.Call.Name, p)}
		}
	}()
	return run(ctx, rc)
}

// recorded returns the ToolFunc that gives each call its result among
// results, already had.
func recorded(results map[string]nous.ToolResult) nous.ToolFunc {
	return func(_ context.Context, rc nous.RunContext) nous.ToolResult { return results[rc.Call.ID] }
}

// redoResults records again, in c, a session loaded after a conflict, the
// results of results whose calls c still waits for; the others another
// writer answered.
func redoResults(ctx context.Context, c *nous.Context, results map[string]nous.ToolResult) error {
	var calls []nous.ToolCall
	for _, pc := range c.Pending().Calls {
		if _, ok := results[pc.Call.ID]; ok {
			calls = append(calls, pc.Call)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return c.RunToolCalls(context.WithoutCancel(ctx), calls, recorded(results))
}
