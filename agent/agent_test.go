package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
	"github.com/nous-go/nous/internal/crashtest"
	"github.com/nous-go/nous/storetest"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// weather is a typed tool whose call counts its runs and sets the last
// city in the deps.
func weather(t *testing.T, runs *counter) agent.Tool {
	type in struct {
		City string `json:"city"`
	}
	tool, err := agent.NewTool("weather", "The weather in a city.", func(_ context.Context, rc nous.RunContext, a in) (string, nous.ContextUpdate, error) {
		runs.add(rc.Call.ID)
		if a.City == "" {
			return "", nous.ContextUpdate{}, errors.New("no city")
		}
		return "sunny in " + a.City, nous.NewContextUpdate().Set("last_city", a.City), nil
	})
	must(t, err)
	return tool
}

// events returns the types of the events of c's log, from seq from on.
func events(c *nous.Context, from int64) []nous.EventType {
	var out []nous.EventType
	for e := range c.Log().Since(from) {
		out = append(out, e.Type)
	}
	return out
}

// batches records the event types of each batch a store is given.
type batches struct {
	nous.Store
	mu  sync.Mutex
	got [][]string
}

func (s *batches) Append(ctx context.Context, b nous.Batch) error {
	var types []string
	for _, raw := range b.Events {
		var e struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &e)
		types = append(types, e.Type)
	}
	s.mu.Lock()
	s.got = append(s.got, types)
	s.mu.Unlock()
	return s.Store.Append(ctx, b)
}

// A turn with parallel calls of a typed tool: the user's message, the
// model's calls, their starts and their results are each saved as they
// happen (the starts before any tool runs), the tool's update applies,
// a call whose arguments the tool refuses gets an error result, and the
// turn ends with the model's reply, which the stored session holds.
func TestATurnIsSavedStepByStep(t *testing.T) {
	ctx := context.Background()
	var runs counter
	s := &batches{Store: storetest.NewMemory()}
	r := &agent.Runner{
		Model: &fakeModel{reply: toolLoop(nous.ToolCall{ID: "paris", Name: "weather", Arguments: args(map[string]string{"city": "Paris"})},
			nous.ToolCall{ID: "none", Name: "weather", Arguments: args(map[string]string{})})},
		Tools: []agent.Tool{weather(t, &runs)},
		Store: s,
	}
	turn, err := r.Run(ctx, "s1", agent.Input{Messages: []nous.Message{nous.UserMessage("weather?")}, Key: "req-1"})
	must(t, err)
	if !strings.HasPrefix(turn.Reply.Content, "done: ") || !strings.Contains(turn.Reply.Content, "sunny in Paris") || !strings.Contains(turn.Reply.Content, "no city") {
		t.Fatalf("reply %q", turn.Reply.Content)
	}
	want := [][]string{
		{"user_message", "batch"},
		{"assistant_message", "step_end", "batch"},
		{"tool_start", "tool_start", "batch"},
		{"tool_call", "deps_update", "tool_result", "tool_call", "tool_result", "batch"},
		{"assistant_message", "step_end", "batch"},
	}
	if fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Fatalf("batches\n%v\nwant\n%v", s.got, want)
	}
	stored, err := nous.LoadByName(ctx, s, "s1")
	must(t, err)
	if stored.Deps["last_city"] != "Paris" || !stored.Pending().Done() || runs.get("paris-1") != 1 {
		t.Fatalf("stored deps %v, pending %+v, runs %v", stored.Deps, stored.Pending(), runs.runs)
	}
	must(t, stored.CheckToolPairing())
	// The same request again adds nothing, runs nothing.
	again, err := r.Run(ctx, "s1", agent.Input{Messages: []nous.Message{nous.UserMessage("weather?")}, Key: "req-1"})
	must(t, err)
	if again.Context.Log().Len() != stored.Log().Len() || runs.get("paris-1") != 1 {
		t.Fatalf("a retried request grew the log from %d to %d events", stored.Log().Len(), again.Context.Log().Len())
	}
}

// crashed returns a session stored as a runner that died mid-turn left
// it: the model's reply with the calls given, each of the started ones
// started (its start saved) and none answered.
func crashed(t *testing.T, s nous.Store, name string, calls []nous.ToolCall, started ...string) {
	t.Helper()
	ctx := context.Background()
	c, _, err := nous.Resume(ctx, s, name)
	must(t, err)
	must(t, c.AddMessage(nous.UserMessage("go")))
	must(t, c.AddMessage(nous.AssistantMessage("", calls...)))
	for _, id := range started {
		_, err := c.StartToolCall(id, nous.Lease{Owner: "dead"})
		must(t, err)
	}
	must(t, c.Save(ctx, s))
}

// A turn resumed after a crash runs each call as its tool's policy says:
// one never started runs; one in doubt runs again (Rerun), is answered as
// interrupted (AtMostOnce), or is answered by the system of record
// (Reconcile, when its effect happened; run again when not). The model is
// not asked again for the reply the log holds.
func TestResumeAfterACrash(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	var runs counter
	tool := func(name string, policy agent.InDoubt, happened bool) agent.Tool {
		def, err := nous.NewTool(name, name, nil)
		must(t, err)
		return agent.Tool{Def: def, InDoubt: policy,
			Run: func(_ context.Context, rc nous.RunContext) nous.ToolResult {
				runs.add(rc.Call.ID)
				return nous.ToolResult{Content: name + " ran"}
			},
			Reconcile: func(_ context.Context, call nous.ToolCall) (nous.ToolResult, bool, error) {
				return nous.ToolResult{Content: "found in the ledger"}, happened, nil
			}}
	}
	calls := []nous.ToolCall{{ID: "fresh", Name: "idem"}, {ID: "again", Name: "idem"}, {ID: "once", Name: "pay"}, {ID: "ledger", Name: "book"}, {ID: "missing", Name: "mail"}}
	crashed(t, s, "s", calls, "again", "once", "ledger", "missing")
	model := &fakeModel{reply: toolLoop()}
	r := &agent.Runner{Model: model, Store: s, Tools: []agent.Tool{
		tool("idem", agent.Rerun, false), tool("pay", agent.AtMostOnce, false),
		tool("book", agent.Reconcile, true), tool("mail", agent.Reconcile, false)}}
	turn, err := r.Run(ctx, "s", agent.Input{})
	must(t, err)
	for id, want := range map[string]int{"fresh": 1, "again": 1, "once": 0, "ledger": 0, "missing": 1} {
		if got := runs.get(id); got != want {
			t.Errorf("call %s ran %d times, want %d", id, got, want)
		}
	}
	results := map[string]string{}
	for _, m := range turn.Context.Messages() {
		if m.Role == nous.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["once"], "interrupted") || results["ledger"] != "found in the ledger" || results["missing"] != "mail ran" {
		t.Fatalf("results %v", results)
	}
	if model.calls.Load() != 1 {
		t.Fatalf("the model was called %d times, want once (for the reply to the results)", model.calls.Load())
	}
	must(t, turn.Context.CheckToolPairing())
}

// A call that needs approval stops the turn; another runner (another
// process) decides, after a restart, with other arguments; a decision on
// the old arguments or made twice is refused; the turn goes on with the
// approved arguments, and a rejected call is answered with its reason.
func TestApprovalAcrossRunners(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	var runs counter
	var ran []string
	var mu sync.Mutex
	pay, err := agent.NewTool("pay", "Pay an amount.", func(_ context.Context, rc nous.RunContext, a struct {
		Amount int `json:"amount"`
	}) (string, nous.ContextUpdate, error) {
		runs.add(rc.Call.ID)
		mu.Lock()
		ran = append(ran, fmt.Sprint(a.Amount))
		mu.Unlock()
		return fmt.Sprint("paid ", a.Amount), nous.ContextUpdate{}, nil
	})
	must(t, err)
	pay.Approve = func(nous.ToolCall) bool { return true }
	newRunner := func() *agent.Runner {
		return &agent.Runner{Store: s, Tools: []agent.Tool{pay}, Model: &fakeModel{reply: toolLoop(
			nous.ToolCall{ID: "big", Name: "pay", Arguments: args(map[string]int{"amount": 900})},
			nous.ToolCall{ID: "small", Name: "pay", Arguments: args(map[string]int{"amount": 10})})}}
	}
	turn, err := newRunner().Run(ctx, "s", agent.Input{Messages: []nous.Message{nous.UserMessage("pay both")}})
	must(t, err)
	if len(turn.Waiting) != 2 || runs.get("big-1")+runs.get("small-1") != 0 {
		t.Fatalf("waiting %v, runs %v", turn.Waiting, runs.runs)
	}
	big, small := turn.Waiting[0], turn.Waiting[1]
	web := newRunner() // a second process: a web handler
	stale := nous.Decision{CallID: big.Call.ID, Request: big.Request, Digest: nous.CallDigest(nous.ToolCall{Name: "pay", Arguments: args(map[string]int{"amount": 1})}), Approve: true}
	if err := web.Decide(ctx, "s", stale); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("a decision on other arguments: %v", err)
	}
	must(t, web.Decide(ctx, "s", nous.Decision{CallID: big.Call.ID, Request: big.Request, Digest: big.Digest, Approve: true, Arguments: args(map[string]int{"amount": 500}), By: "ada"}))
	must(t, web.Decide(ctx, "s", nous.Decision{CallID: small.Call.ID, Request: small.Request, Digest: small.Digest, Reason: "not today"}))
	if err := web.Decide(ctx, "s", nous.Decision{CallID: small.Call.ID, Request: small.Request, Digest: small.Digest, Approve: true}); !errors.Is(err, nous.ErrStaleDecision) {
		t.Fatalf("a second decision: %v", err)
	}
	turn, err = newRunner().Run(ctx, "s", agent.Input{})
	must(t, err)
	if fmt.Sprint(ran) != "[500]" || !strings.Contains(turn.Reply.Content, "paid 500") || !strings.Contains(turn.Reply.Content, "rejected: not today") {
		t.Fatalf("ran %v, reply %q", ran, turn.Reply.Content)
	}
	must(t, turn.Context.CheckToolPairing())
}

// A context's ApprovalHandler decides at once: the turn does not stop,
// and the decision is in the log like any other.
func TestApprovalHandlerDecidesAtOnce(t *testing.T) {
	var runs counter
	tool := weather(t, &runs)
	tool.Approve = func(call nous.ToolCall) bool { return strings.Contains(string(call.Arguments), "Paris") }
	r := &agent.Runner{Tools: []agent.Tool{tool}, Model: &fakeModel{reply: toolLoop(
		nous.ToolCall{ID: "p", Name: "weather", Arguments: args(map[string]string{"city": "Paris"})},
		nous.ToolCall{ID: "l", Name: "weather", Arguments: args(map[string]string{"city": "Lyon"})})}}
	c := nous.NewContext()
	c.ApprovalHandler = func(call nous.ToolCall) (nous.ToolCall, bool) {
		call.Arguments = args(map[string]string{"city": "Nice"})
		return call, true
	}
	turn, err := r.Continue(context.Background(), c, agent.Input{Messages: []nous.Message{nous.UserMessage("go")}})
	must(t, err)
	if len(turn.Waiting) != 0 || !strings.Contains(turn.Reply.Content, "sunny in Nice") || !strings.Contains(turn.Reply.Content, "sunny in Lyon") {
		t.Fatalf("waiting %v, reply %q", turn.Waiting, turn.Reply.Content)
	}
	if !slices.Contains(events(c, 0), nous.EventApprovalDecision) {
		t.Fatal("the handler's decision is not in the log")
	}
}

// A streamed reply that ctx cuts (Ctrl-C) is saved as far as it got, and
// the turn returns ctx's error; the next Run asks the model again only if
// the log needs a reply, which an interrupted one ends.
func TestCutStreamIsSaved(t *testing.T) {
	s := storetest.NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	model := &fakeModel{reply: func([]nous.Message) nous.Message { return nous.AssistantMessage("one two three four") }}
	model.cut = func(word int) {
		if word == 2 {
			cancel()
		}
	}
	var deltas []string
	r := &agent.Runner{Model: model, Store: s, Stream: true, OnDelta: func(d nous.Delta) { deltas = append(deltas, d.Text) }}
	_, err := r.Run(ctx, "s", agent.Input{Messages: []nous.Message{nous.UserMessage("count")}})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, nous.ErrInterrupted) {
		t.Fatalf("a cut stream: %v", err)
	}
	stored, err := nous.LoadByName(context.Background(), s, "s")
	must(t, err)
	last := stored.Messages()[stored.Len()-1]
	if last.Content != "one two " || !last.Interrupted() || strings.Join(deltas, "") != last.Content {
		t.Fatalf("stored %q (interrupted %v), streamed %q", last.Content, last.Interrupted(), deltas)
	}
}

// Runners driving one session at once, each its own turns: every user
// message is stored once, every turn is answered, the log pairs, and no
// runner is starved.
func TestRunnersShareASession(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	model := &fakeModel{reply: func(view []nous.Message) nous.Message {
		return nous.AssistantMessage("answer to " + view[len(view)-1].Content)
	}}
	const runners, turns = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, runners)
	for w := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &agent.Runner{Model: model, Store: s}
			for i := range turns {
				msg := fmt.Sprint("w", w, " t", i)
				if _, err := r.Run(ctx, "shared", agent.Input{Messages: []nous.Message{nous.UserMessage(msg)}, Key: msg}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c, err := nous.LoadByName(ctx, s, "shared")
	must(t, err)
	must(t, c.CheckToolPairing())
	crashtest.CheckAnswered(t, c.All(), runners*turns)
}

// A Run's messages never come between a call and its result: a session
// whose turn has calls without a result (another writer's, stopped or
// under way) has them run first, then the messages; one whose call waits
// for a decision refuses them with ErrAwaitingDecision, adding nothing.
func TestMessagesWaitForTheCalls(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	var runs counter
	crashed(t, s, "s", []nous.ToolCall{{ID: "w", Name: "weather", Arguments: args(map[string]string{"city": "Rome"})}})
	r := &agent.Runner{Model: &fakeModel{reply: toolLoop()}, Tools: []agent.Tool{weather(t, &runs)}, Store: s}
	turn, err := r.Run(ctx, "s", agent.Input{Messages: []nous.Message{nous.UserMessage("and now?")}})
	must(t, err)
	must(t, turn.Context.CheckToolPairing())
	var roles []string
	for _, m := range turn.Context.Messages() {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool user assistant" || runs.get("w") != 1 {
		t.Fatalf("roles %s, runs %v", got, runs.runs)
	}
	pay := weather(t, &runs)
	pay.Approve = func(nous.ToolCall) bool { return true }
	crashed(t, s, "t", []nous.ToolCall{{ID: "p", Name: "weather", Arguments: args(map[string]string{"city": "Oslo"})}})
	r = &agent.Runner{Model: &fakeModel{reply: toolLoop()}, Tools: []agent.Tool{pay}, Store: s}
	if _, err := r.Run(ctx, "t", agent.Input{Messages: []nous.Message{nous.UserMessage("and now?")}}); !errors.Is(err, agent.ErrAwaitingDecision) {
		t.Fatalf("a message while a call waits for a decision: %v", err)
	}
	c, err := nous.LoadByName(ctx, s, "t")
	must(t, err)
	if last, _ := c.LastMessage(); last.Role != nous.RoleAssistant || len(c.Pending().Calls) != 1 || c.Pending().Calls[0].State != nous.CallAwaitingApproval {
		t.Fatalf("the session after the refused messages: %+v", c.Pending())
	}
}
