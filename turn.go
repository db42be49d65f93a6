package nous

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// CallDigest returns the digest an approval binds a call to: the
// hexadecimal SHA-256 of its name, a NUL and its arguments, as the model
// sent them. A decision for a call whose arguments changed since the
// decider read them has another digest, and is refused.
func CallDigest(call ToolCall) string {
	h := sha256.New()
	h.Write([]byte(call.Name))
	h.Write([]byte{0})
	h.Write(call.Arguments)
	return hex.EncodeToString(h.Sum(nil))
}

// CallState is where a tool call of the turn a log ends in stands
// ([Pending]).
type CallState int

// The states of a call without a result.
const (
	// CallNotStarted: nothing was done about the call yet; it may run.
	CallNotStarted CallState = iota
	// CallInDoubt: the call was started ([EventToolStart]) and has no
	// result: it may have run, in part or whole, when its runner stopped.
	// Whether it runs again is its tool's policy.
	CallInDoubt
	// CallAwaitingApproval: the call waits for a decision
	// ([Context.Decide]).
	CallAwaitingApproval
	// CallApproved: the call was approved, and may run, with the
	// decision's arguments when it gave some.
	CallApproved
	// CallRejected: the call was rejected; its result says so.
	CallRejected
)

// String returns the state's name.
func (s CallState) String() string {
	switch s {
	case CallNotStarted:
		return "not started"
	case CallInDoubt:
		return "in doubt"
	case CallAwaitingApproval:
		return "awaiting approval"
	case CallApproved:
		return "approved"
	case CallRejected:
		return "rejected"
	}
	return fmt.Sprintf("CallState(%d)", int(s))
}

// Decision is a decision on a tool call that waits for approval
// ([Context.Decide]). It names the call, the request it answers and the
// digest of the call the decider read, so that a decision made on
// anything but what waits now is refused.
type Decision struct {
	CallID  string // the call decided on
	Request int64  // the seq of the approval_request it answers ([PendingCall.Request])
	Digest  string // the [CallDigest] of the call as the decider read it
	Approve bool   // run it (true), or answer it with a rejection (false)
	// Arguments, when an approval sets them, are the arguments the call
	// runs with instead of the model's: JSON, as a model sends them.
	Arguments json.RawMessage
	Reason    string // why, for the log and, on a rejection, the model
	By        string // who decided, for the log
}

// PendingCall is a tool call of the turn a log ends in that has no result.
type PendingCall struct {
	// Call is the call as it runs: the model's, its arguments those of
	// an approval that replaced them.
	Call     ToolCall
	State    CallState
	Attempts int   // the times it was started ([EventToolStart])
	Lease    Lease // the lease of its last start; zero for none
	Request  int64 // the seq of its last approval request; 0 for none
	// Digest is the [CallDigest] of the model's call, which a decision
	// names.
	Digest   string
	Decision *Decision // the decision on Request; nil for none
}

// Pending is what remains of the turn a log ends in, from the log alone:
// whether the model must be called, and the calls of its last reply that
// have no result, each with where it stands. A reply the log holds is
// never asked for again, nor a call with a result run again.
type Pending struct {
	// CallModel reports that the model must be called: the view ends with
	// a message of the user's, or with a result of every call of the
	// model's last reply.
	CallModel bool
	// Calls are the calls of the model's last reply without a result, in
	// its order; none when the model is to be called or the turn ended
	// (the view ends with a reply that makes no call).
	Calls []PendingCall
}

// Done reports whether the turn ended: nothing to call, nothing to run.
func (p Pending) Done() bool { return !p.CallModel && len(p.Calls) == 0 }

// Pending returns what remains of the turn c's log ends in ([Pending]).
func (c *Context) Pending() Pending {
	c.ready()
	return pendingOf(&c.log, c.view.entries)
}

// PendingOf returns what remains of the turn the log of events ends in
// ([Pending]), as [Context.Pending] does of a context's log: a pure
// function of the log, for a runtime that reads events from elsewhere. A
// log that does not fold is an error, as [Fold]'s.
func PendingOf(events []Event) (Pending, error) {
	l, entries, err := restoreLog(uuid.Nil, uuid.Nil, 0, events, false)
	if err != nil {
		return Pending{}, fmt.Errorf("nous: pending: %w", err)
	}
	return pendingOf(&l, entries), nil
}

// pendingOf returns what remains of the turn of log l, whose view is
// entries.
func pendingOf(l *eventLog, entries []int64) Pending {
	n := len(entries)
	if n == 0 {
		return Pending{}
	}
	i := n - 1
	for i >= 0 && l.msg(entries[i]).msg.Role == RoleTool {
		i--
	}
	if i < 0 || l.msg(entries[i]).msg.Role != RoleAssistant {
		return Pending{CallModel: true}
	}
	reply := l.msg(entries[i])
	var open []PendingCall
	for _, tc := range reply.msg.ToolCalls {
		open = append(open, PendingCall{Call: tc.clone(), Digest: CallDigest(tc)})
	}
	for _, mi := range entries[i+1:] {
		id := l.msg(mi).msg.ToolCallID
		open = slices.DeleteFunc(open, func(p PendingCall) bool { return p.Call.ID == id })
	}
	if len(open) == 0 {
		return Pending{CallModel: i < n-1}
	}
	for seq := reply.seq + 1; seq <= l.len(); seq++ {
		r := l.rec(seq)
		id, _ := r.data[DataCallID].(string)
		if k := slices.IndexFunc(open, func(p PendingCall) bool { return p.Call.ID == id }); k >= 0 {
			open[k].take(seq, r)
		}
	}
	return Pending{Calls: open}
}

// take folds the event r, of seq seq, about p's call into p.
func (p *PendingCall) take(seq int64, r *record) {
	switch r.typ {
	case EventToolStart:
		p.Attempts++
		p.State = CallInDoubt
		p.Lease.Owner, _ = r.data[DataOwner].(string)
		until, _ := r.data[DataUntil].(string)
		p.Lease.Until, _ = time.Parse(time.RFC3339Nano, until)
	case EventApprovalRequest:
		if p.Attempts == 0 {
			p.Request, p.Decision, p.State = seq, nil, CallAwaitingApproval
		}
	case EventApprovalDecision:
		d := decisionOf(r.data)
		if p.Attempts > 0 || d.Request != p.Request || p.Decision != nil {
			return
		}
		p.Decision, p.State = &d, CallRejected
		if d.Approve {
			p.State = CallApproved
			if d.Arguments != nil {
				p.Call.Arguments = slices.Clone(d.Arguments)
			}
		}
	}
}

// decisionOf returns the decision an approval_decision event's data
// records.
func decisionOf(data map[string]any) Decision {
	d := Decision{}
	d.CallID, _ = data[DataCallID].(string)
	d.Digest, _ = data[DataDigest].(string)
	d.Request = int64Of(data[DataRequest])
	d.Approve = data[DataDecision] == decisionApprove
	if args, ok := data[DataArguments].(string); ok {
		d.Arguments = json.RawMessage(args)
	}
	d.Reason, _ = data[DataReason].(string)
	d.By, _ = data[DataBy].(string)
	return d
}

// int64Of returns the whole number v holds, as event data reads back (an
// int) or as it was put (any integer type); 0 for anything else.
func int64Of(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// ErrStaleDecision reports a decision, or a start, on a tool call that is
// not where it must be for it: answered already, decided already, not
// waiting for a decision, waiting on another request, or of another
// digest than the call's (its arguments are not what the decider read).
// Nothing is logged; read [Context.Pending] again.
var ErrStaleDecision = errors.New("stale decision: the call is not waiting for it")

// pendingCall returns the call of ID id among those c's turn waits on.
func (c *Context) pendingCall(id string) (PendingCall, bool) {
	p := c.Pending()
	k := slices.IndexFunc(p.Calls, func(pc PendingCall) bool { return pc.Call.ID == id })
	if k < 0 {
		return PendingCall{}, false
	}
	return p.Calls[k], true
}

// Lease says who starts a tool call and until when it is taken as running
// there: a runner that finds a call in doubt within another's lease
// leaves it to that one. The zero Lease is none: a call in doubt is then
// for whoever resumes the turn.
type Lease struct {
	Owner string    // the runner that starts the call
	Until time.Time // until when the call is taken as running there
}

// StartToolCall logs that the call of ID id, of the model's last reply
// and without a result, is about to run ([EventToolStart]), under lease
// ([PendingCall.Lease]), and returns the attempt, from 1. A runner saves it before the tool runs: a call
// started without a result is then known to be in doubt after a crash
// ([CallInDoubt]). A call without a result that waits for approval, or
// was rejected, is refused with an error wrapping [ErrStaleDecision]; one
// that is not among the calls without a result, with one wrapping
// [ErrUnpaired]. Nothing is logged then.
func (c *Context) StartToolCall(id string, lease Lease) (int, error) {
	pc, ok := c.pendingCall(id)
	switch {
	case !ok:
		return 0, fmt.Errorf("nous: start tool call %q: not a call of the model's last reply without a result: %w", id, ErrUnpaired)
	case pc.State == CallAwaitingApproval || pc.State == CallRejected:
		return 0, fmt.Errorf("nous: start tool call %q: it is %s: %w", id, pc.State, ErrStaleDecision)
	}
	attempt := pc.Attempts + 1
	data := map[string]any{DataCallID: id, DataAttempt: attempt}
	if lease.Owner != "" {
		data[DataOwner] = lease.Owner
	}
	if !lease.Until.IsZero() {
		data[DataUntil] = lease.Until.UTC().Format(time.RFC3339Nano)
	}
	c.mustAdd(&record{typ: EventToolStart, at: now(), data: data}, nil, nil, slot{})
	return attempt, nil
}

// RequestApproval logs that the call of ID id, of the model's last reply,
// not started and without a result, waits for a decision
// ([EventApprovalRequest]), and returns the request's seq, which a
// decision names. A request again (the rule that asks for approval
// changed) supersedes the last: a decision on that one is then stale. A
// call that is not among those without a result is an error wrapping
// [ErrUnpaired]; one started already, wrapping [ErrStaleDecision].
func (c *Context) RequestApproval(id string) (int64, error) {
	pc, ok := c.pendingCall(id)
	switch {
	case !ok:
		return 0, fmt.Errorf("nous: request approval of call %q: not a call of the model's last reply without a result: %w", id, ErrUnpaired)
	case pc.Attempts > 0:
		return 0, fmt.Errorf("nous: request approval of call %q: it was started: %w", id, ErrStaleDecision)
	}
	c.mustAdd(&record{typ: EventApprovalRequest, at: now(), data: map[string]any{DataCallID: id, DataDigest: pc.Digest}}, nil, nil, slot{})
	return c.log.len(), nil
}

// Decide logs d, the decision on a call that waits for approval
// ([EventApprovalDecision]): an approval runs the call, with d.Arguments
// when set (which must be JSON); a rejection answers it with d.Reason.
// Any process may decide, on a context loaded after any restart: the
// decision binds to the call, the request it answers and the digest of
// the call as the decider read it. A decision on a call that does not
// wait on that request with that digest (answered, decided, started,
// asked again, or of other arguments) is refused with an error wrapping
// [ErrStaleDecision], and nothing is logged.
func (c *Context) Decide(d Decision) error {
	pc, ok := c.pendingCall(d.CallID)
	switch {
	case !ok:
		return fmt.Errorf("nous: decide on call %q: it has a result, or is not a call of the model's last reply: %w", d.CallID, ErrStaleDecision)
	case pc.State != CallAwaitingApproval:
		return fmt.Errorf("nous: decide on call %q: it is %s: %w", d.CallID, pc.State, ErrStaleDecision)
	case d.Request != pc.Request:
		return fmt.Errorf("nous: decide on call %q: the decision answers request %d, the call waits on request %d: %w", d.CallID, d.Request, pc.Request, ErrStaleDecision)
	case d.Digest != pc.Digest:
		return fmt.Errorf("nous: decide on call %q: the decision is on other arguments than the call's (digest %.12s, the call's %.12s): %w", d.CallID, d.Digest, pc.Digest, ErrStaleDecision)
	case d.Approve && d.Arguments != nil && !json.Valid(d.Arguments):
		return fmt.Errorf("nous: decide on call %q: the arguments the approval gives are not JSON: %w", d.CallID, ErrInvalidMessage)
	}
	data := map[string]any{DataCallID: d.CallID, DataDigest: d.Digest, DataRequest: int(d.Request), DataDecision: decisionReject}
	if d.Approve {
		data[DataDecision] = decisionApprove
		if d.Arguments != nil {
			data[DataArguments] = string(d.Arguments)
		}
	}
	if d.Reason != "" {
		data[DataReason] = d.Reason
	}
	if d.By != "" {
		data[DataBy] = d.By
	}
	c.mustAdd(&record{typ: EventApprovalDecision, at: now(), data: data}, nil, nil, slot{})
	return nil
}

// callTimes returns the data a tool_result event records of when its
// call's tool started and returned.
func callTimes(started, ended time.Time) map[string]any {
	return map[string]any{DataStartedAt: started.UTC().Format(time.RFC3339Nano), DataEndedAt: ended.UTC().Format(time.RFC3339Nano)}
}
