package nous_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// states returns the state of each pending call of p, by call ID.
func states(p nous.Pending) string {
	var b strings.Builder
	for _, pc := range p.Calls {
		fmt.Fprintf(&b, "%s:%s/%d ", pc.Call.ID, pc.State, pc.Attempts)
	}
	return strings.TrimSpace(fmt.Sprintf("model=%v %s", p.CallModel, b.String()))
}

// A turn as the log records it: the model is called while the view ends
// with the user's message or every call's result; the calls of its reply
// without a result are, each, not started, in doubt once started,
// waiting once approval is asked, then approved (with the arguments the
// decision gives) or rejected; the turn is done when a reply makes no
// call. The log alone says it: a context loaded from a store, and
// PendingOf of its events, say the same at every step.
func TestPendingThroughATurn(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	check := func(want string) {
		t.Helper()
		got := c.Pending()
		if states(got) != want {
			t.Fatalf("pending %s, want %s", states(got), want)
		}
		of, err := nous.PendingOf(c.Log().Events())
		mustDo(t, err)
		if !reflect.DeepEqual(of, got) {
			t.Fatalf("PendingOf the events %s, the context's %s", states(of), states(got))
		}
		mustDo(t, c.Save(ctx, s))
		if loaded := mustLoad(t, s, c.Log().ID()).Pending(); !reflect.DeepEqual(loaded, got) {
			t.Fatalf("loaded: pending %s, want %s", states(loaded), states(got))
		}
	}
	check("model=false")
	mustDo(t, c.AddMessage(nous.UserMessage("pay the invoices")))
	check("model=true")
	a := nous.ToolCall{ID: "a", Name: "lookup", Arguments: json.RawMessage(`{"q":1}`)}
	b := nous.ToolCall{ID: "b", Name: "pay", Arguments: json.RawMessage(`{"amount":100}`)}
	d := nous.ToolCall{ID: "d", Name: "pay", Arguments: json.RawMessage(`{"amount":900}`)}
	mustDo(t, c.AddMessage(nous.AssistantMessage("", a, b, d)))
	check("model=false a:not started/0 b:not started/0 d:not started/0")
	if n, err := c.StartToolCall("a", nous.Lease{}); err != nil || n != 1 {
		t.Fatalf("StartToolCall: %d %v", n, err)
	}
	reqB, err := c.RequestApproval("b")
	mustDo(t, err)
	reqD, err := c.RequestApproval("d")
	mustDo(t, err)
	check("model=false a:in doubt/1 b:awaiting approval/0 d:awaiting approval/0")
	if _, err := c.StartToolCall("b", nous.Lease{}); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("start of a call awaiting approval: %v, want ErrStaleDecision", err)
	}
	mustDo(t, c.Decide(nous.Decision{CallID: "b", Request: reqB, Digest: nous.CallDigest(b), Approve: true, Arguments: json.RawMessage(`{"amount":90}`), By: "ada"}))
	mustDo(t, c.Decide(nous.Decision{CallID: "d", Request: reqD, Digest: nous.CallDigest(d), Reason: "too much"}))
	check("model=false a:in doubt/1 b:approved/0 d:rejected/0")
	if got := c.Pending().Calls[1]; string(got.Call.Arguments) != `{"amount":90}` || got.Decision.By != "ada" {
		t.Fatalf("an approval with arguments: the call runs with %s, decided by %q", got.Call.Arguments, got.Decision.By)
	}
	if n, err := c.StartToolCall("a", nous.Lease{}); err != nil || n != 2 {
		t.Fatalf("a call in doubt started again: attempt %d %v, want 2", n, err)
	}
	check("model=false a:in doubt/2 b:approved/0 d:rejected/0")
	mustDo(t, c.AddMessage(nous.ToolMessage("a", "lookup", "found")))
	mustDo(t, c.AddMessage(nous.ToolMessage("d", "pay", "rejected: too much")))
	check("model=false b:approved/0")
	mustDo(t, c.AddMessage(nous.ToolMessage("b", "pay", "paid")))
	check("model=true")
	mustDo(t, c.AddMessage(nous.AssistantMessage("Paid one of two.")))
	check("model=false")
	if p := c.Pending(); !p.Done() {
		t.Fatal("a reply without calls: the turn is not done")
	}
}

// A decision is refused, and nothing logged, unless the call waits on the
// request it names with the digest of what the decider read: decided
// already, asked again since, of other arguments, answered, started, or
// not a call of the turn.
func TestStaleDecisions(t *testing.T) {
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("go")))
	call := nous.ToolCall{ID: "x", Name: "pay", Arguments: json.RawMessage(`{"amount":1}`)}
	other := nous.ToolCall{ID: "y", Name: "pay", Arguments: json.RawMessage(`{"amount":2}`)}
	mustDo(t, c.AddMessage(nous.AssistantMessage("", call, other)))
	first, err := c.RequestApproval("x")
	mustDo(t, err)
	second, err := c.RequestApproval("x") // the rule changed: asked again
	mustDo(t, err)
	approve := func(id string, req int64, digest string) error {
		return c.Decide(nous.Decision{CallID: id, Request: req, Digest: digest, Approve: true})
	}
	if _, err := c.StartToolCall("y", nous.Lease{}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"a superseded request":        approve("x", first, nous.CallDigest(call)),
		"other arguments":             approve("x", second, nous.CallDigest(other)),
		"a call not waiting":          approve("y", second, nous.CallDigest(other)),
		"a call not of the turn":      approve("z", second, nous.CallDigest(call)),
		"arguments that are not JSON": c.Decide(nous.Decision{CallID: "x", Request: second, Digest: nous.CallDigest(call), Approve: true, Arguments: json.RawMessage(`{`)}),
	} {
		if err == nil || errors.Is(err, nous.ErrStaleDecision) == (name == "arguments that are not JSON") {
			t.Errorf("%s: %v", name, err)
		}
	}
	n := c.Log().Len()
	mustDo(t, approve("x", second, nous.CallDigest(call)))
	if err := approve("x", second, nous.CallDigest(call)); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("a second decision: %v, want ErrStaleDecision", err)
	}
	if c.Log().Len() != n+1 {
		t.Fatalf("refused decisions logged %d events", c.Log().Len()-n-1)
	}
	mustDo(t, c.AddMessage(nous.ToolMessage("x", "pay", "paid")))
	if err := approve("x", second, nous.CallDigest(call)); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("a decision on an answered call: %v, want ErrStaleDecision", err)
	}
	if _, err := c.StartToolCall("x", nous.Lease{}); !errors.Is(err, nous.ErrUnpaired) {
		t.Fatalf("start of an answered call: %v, want ErrUnpaired", err)
	}
	if _, err := c.RequestApproval("y"); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("approval asked of a started call: %v, want ErrStaleDecision", err)
	}
	if err := c.LogEvent(nous.EventToolStart, map[string]any{nous.DataCallID: "y", nous.DataAttempt: 1}); !errors.Is(err, nous.ErrUnknownEventType) {
		t.Fatalf("LogEvent of a tool_start: %v", err)
	}
}

// The events of a turn are checked as they are read: a document whose
// tool_start, approval_request or approval_decision lacks what it must
// hold does not load; a redaction rule that names their fields keeps
// them.
func TestTurnEventsChecked(t *testing.T) {
	for name, ev := range map[string]string{
		"a start without a call":      `"type":"tool_start","data":{"attempt":1}`,
		"a start of attempt 0":        `"type":"tool_start","data":{"call_id":"a","attempt":0}`,
		"a start until no time":       `"type":"tool_start","data":{"call_id":"a","attempt":1,"until":"soon"}`,
		"a request without a digest":  `"type":"approval_request","data":{"call_id":"a"}`,
		"a decision without request":  `"type":"approval_decision","data":{"call_id":"a","digest":"d","decision":"approve"}`,
		"a decision neither way":      `"type":"approval_decision","data":{"call_id":"a","digest":"d","request":1,"decision":"maybe"}`,
		"a decision with bad JSON":    `"type":"approval_decision","data":{"call_id":"a","digest":"d","request":1,"decision":"approve","arguments":"{"}`,
		"a decision with a number id": `"type":"approval_decision","data":{"call_id":7,"digest":"d","request":1,"decision":"approve"}`,
	} {
		doc := `{"version":2,"messages":[],"log":{"id":"01a251c5-926b-7d7c-b25b-a89fe67b1295","events":[{"seq":1,` + ev + `,"created_at":"2026-12-07T12:00:00Z"}]}}`
		if _, err := nous.Deserialize([]byte(doc)); !errors.Is(err, nous.ErrInvalidLog) {
			t.Errorf("%s: %v, want ErrInvalidLog", name, err)
		}
	}
	c := nous.NewContext(quietOption)
	c.Redact = func(k string) bool {
		return k == "reason" || k == "by" || k == "arguments" || k == "digest" || nous.IsSecretKey(k)
	}
	mustDo(t, c.AddMessage(nous.UserMessage("go")))
	call := nous.ToolCall{ID: "x", Name: "pay", Arguments: json.RawMessage(`{}`)}
	mustDo(t, c.AddMessage(nous.AssistantMessage("", call)))
	req, err := c.RequestApproval("x")
	mustDo(t, err)
	mustDo(t, c.Decide(nous.Decision{CallID: "x", Request: req, Digest: nous.CallDigest(call), Approve: true, Arguments: json.RawMessage(`{"a":1}`), Reason: "fine", By: "ada"}))
	doc, err := c.Serialize()
	mustDo(t, err)
	back, err := nous.DeserializeWithLogger(doc, quietLogger())
	mustDo(t, err)
	if !reflect.DeepEqual(back.Pending(), c.Pending()) {
		t.Fatalf("a rule naming the decision's fields: pending %s, want %s", states(back.Pending()), states(c.Pending()))
	}
}

// RunToolCalls records when each call's tool started and returned: a
// fast tool ends before a slow one of the same turn.
func TestRunToolCallsRecordsEachCallsTimes(t *testing.T) {
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("go")))
	fast, slow := nous.ToolCall{ID: "fast", Name: "f"}, nous.ToolCall{ID: "slow", Name: "f"}
	mustDo(t, c.AddMessage(nous.AssistantMessage("", fast, slow)))
	release := make(chan struct{})
	done := make(chan struct{})
	mustDo(t, c.RunToolCalls(context.Background(), []nous.ToolCall{fast, slow}, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		if rc.Call.ID == "fast" {
			defer close(release)
			return nous.ToolResult{Err: errors.New("failed at once")}
		}
		<-release
		time.Sleep(5 * time.Millisecond)
		close(done)
		return nous.ToolResult{Content: "ok"}
	}))
	<-done
	times := map[string][2]time.Time{}
	for e := range c.Log().All() {
		if e.Type != nous.EventToolResult {
			continue
		}
		var tt [2]time.Time
		for i, k := range []string{nous.DataStartedAt, nous.DataEndedAt} {
			s, _ := e.Data[k].(string)
			at, err := time.Parse(time.RFC3339Nano, s)
			mustDo(t, err)
			tt[i] = at
		}
		times[e.Message.ToolCallID] = tt
	}
	if f, s := times["fast"], times["slow"]; f[1].IsZero() || !f[1].Before(s[1]) || f[0].After(f[1]) || s[0].After(s[1]) {
		t.Fatalf("times fast %v, slow %v: want the fast call to end first", f, s)
	}
}

// Random turns, as runners drive them, with saves, reloads, refreshes
// from a second writer and compactions in between: PendingOf of the
// events always equals the context's Pending, across every reload.
func TestPendingRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(nous.Seed(t), 3))
	ctx := context.Background()
	s := storetest.NewMemory()
	for run := range 40 {
		c := nous.NewContext(quietOption)
		for step := range 60 {
			p := c.Pending()
			switch {
			case p.CallModel || len(p.Calls) == 0 && r.IntN(3) == 0:
				var calls []nous.ToolCall
				for k := range r.IntN(4) {
					calls = append(calls, nous.ToolCall{ID: fmt.Sprint("c", run, "_", step, "_", k), Name: "t", Arguments: json.RawMessage(fmt.Sprint(`{"n":`, r.IntN(3), `}`))})
				}
				mustDo(t, c.AddMessage(nous.AssistantMessage("reply", calls...)))
			case len(p.Calls) == 0:
				mustDo(t, c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", step))))
			default:
				pc := p.Calls[r.IntN(len(p.Calls))]
				driveCall(t, r, c, pc)
			}
			if r.IntN(4) == 0 {
				mustDo(t, c.Save(ctx, s))
				if r.IntN(2) == 0 {
					c = mustLoad(t, s, c.Log().ID())
				}
			}
			of, err := nous.PendingOf(c.Log().Events())
			mustDo(t, err)
			if got := c.Pending(); !reflect.DeepEqual(of, got) {
				t.Fatalf("run %d step %d: PendingOf %s, the context's %s", run, step, states(of), states(got))
			}
		}
	}
}

// driveCall takes one random step on the pending call pc of c.
func driveCall(t *testing.T, r *rand.Rand, c *nous.Context, pc nous.PendingCall) {
	t.Helper()
	switch {
	case pc.State == nous.CallAwaitingApproval:
		mustDo(t, c.Decide(nous.Decision{CallID: pc.Call.ID, Request: pc.Request, Digest: pc.Digest, Approve: r.IntN(2) == 0}))
	case pc.State == nous.CallNotStarted && r.IntN(3) == 0:
		_, err := c.RequestApproval(pc.Call.ID)
		mustDo(t, err)
	case pc.State == nous.CallRejected || r.IntN(2) == 0:
		mustDo(t, c.AddMessage(nous.ToolMessage(pc.Call.ID, pc.Call.Name, "done")))
	default:
		_, err := c.StartToolCall(pc.Call.ID, nous.Lease{Owner: "r", Until: time.Unix(int64(r.IntN(1e9)), 0)})
		mustDo(t, err)
	}
}
