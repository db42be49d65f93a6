// Package storetest is the conformance suite of [nous.Store]: every backend
// runs [Run] against fresh stores of its own, and one that passes works with
// nous's Save, Load and Refresh. [Memory] is its reference backend.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Option configures [Run].
type Option func(*options)

type options struct {
	reopen func(t *testing.T, s nous.Store) nous.Store
}

// WithReopen gives Run a way to reopen a store: reopen closes s and returns
// a new handle on the same data. Run then checks that what was saved
// through one handle loads, and saves on, through the next.
func WithReopen(reopen func(t *testing.T, s nous.Store) nous.Store) Option {
	return func(o *options) { o.reopen = reopen }
}

// Run runs the suite. open returns a new, empty store for one subtest; the
// suite does not close it (register a t.Cleanup in open to do so). A store
// that implements [nous.Watcher] has its Watch checked too.
func Run(t *testing.T, open func(t *testing.T) nous.Store, opts ...Option) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	t.Run("Reopen", func(t *testing.T) {
		if o.reopen == nil {
			t.Skip("no WithReopen")
		}
		testReopen(t, open(t), o.reopen)
	})
	tests := []struct {
		name string
		run  func(t *testing.T, s nous.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Incremental", testIncremental},
		{"Conflict", testConflict},
		{"NeverSavedConflicts", testNeverSavedConflicts},
		{"RacingWriters", testRacingWriters},
		{"Forks", testForks},
		{"Delete", testDelete},
		{"List", testList},
		{"Canceled", testCanceled},
		{"Idle", testIdle},
		{"Refresh", testRefresh},
		{"StateOnlySaves", testStateOnlySaves},
		{"BackendHonoursContext", testBackendHonoursContext},
		{"ToolCalls", testToolCalls},
		{"BadFirstBatch", testBadFirstBatch},
		{"BadBatches", testBadBatches},
		{"WatchEnds", testWatchEnds},
		{"ReadCopies", testReadCopies},
		{"RefreshToolCalls", testRefreshToolCalls},
		{"Recreated", testRecreated},
		{"LostAcknowledgement", testLostAcknowledgement},
		{"Watch", testWatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
	t.Run("SecondStore", func(t *testing.T) { testSecondStore(t, open(t), open(t)) })
}

var quiet = slog.New(slog.DiscardHandler)

// conversation returns a context of n turns with a bit of everything a
// store must keep exactly: a NUL in text, a huge number, a secret in the
// deps, a tool call with arguments kept as sent, a replacement.
func conversation(t *testing.T, n int) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quiet), nous.WithSystemPrompt("be brief"),
		nous.WithDeps(map[string]any{"user": "ada", "api_key": "sk-secret", "big": json.Number("123456789012345678901234567890")}))
	for i := range n {
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprintf("question %d \x00 é", i))))
		must(t, c.LogEvent(nous.EventTurnStart, map[string]any{"turn": i}))
		call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "f", Arguments: json.RawMessage(`{"n": 1.50,  "x":"<y>"}`)}
		must(t, c.AddMessages(nous.AssistantMessage("", call), nous.ToolMessage(call.ID, "f", "ok")))
		must(t, c.AddMessage(nous.AssistantMessage(fmt.Sprint("answer ", i))))
	}
	if n > 1 {
		must(t, c.ReplaceMessageRange(0, 3, nous.SystemMessage("summary of turn 0")))
	}
	c.AddUsage(nous.Usage{Requests: n, InputTokens: 10 * n})
	return c
}

// refused fails unless op, a call on c, returns an error wrapping want and
// leaves c as it was.
func refused(t *testing.T, what string, c *nous.Context, want error, op func() error) {
	t.Helper()
	before, err := c.Serialize()
	must(t, err)
	if err := op(); !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
	after, err := c.Serialize()
	must(t, err)
	if string(before) != string(after) {
		t.Fatalf("%s was refused, and changed the context", what)
	}
}

// load returns the context s holds under id, failing t when it cannot.
func load(t *testing.T, s nous.Store, id uuid.UUID) *nous.Context {
	t.Helper()
	c, err := nous.Load(context.Background(), s, id)
	must(t, err)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sameContext fails unless got holds what want saved: the same Serialize
// bytes, byte for byte.
func sameContext(t *testing.T, want, got *nous.Context) {
	t.Helper()
	a, err := want.Serialize()
	must(t, err)
	b, err := got.Serialize()
	must(t, err)
	if string(a) != string(b) {
		t.Fatalf("loaded context differs from the saved one:\nsaved  %s\nloaded %s", a, b)
	}
}

func testRoundTrip(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 3)
	must(t, c.Save(ctx, s))
	got := load(t, s, c.Log().ID())
	sameContext(t, c, got)
	if _, ok := got.Deps["api_key"]; ok {
		t.Fatal("a secret was stored")
	}
	if _, err := nous.Load(ctx, s, uuid.Must(uuid.NewV7())); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Load of an unknown log: %v, want ErrNotFound", err)
	}
}

func testIncremental(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	for i := range 5 {
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprint("more ", i))))
		c.IncrementIteration()
		must(t, c.Save(ctx, s))
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
	}
	// A loaded context saves on from where it was loaded.
	got := load(t, s, c.Log().ID())
	must(t, got.AddMessage(nous.AssistantMessage("from the loaded one")))
	must(t, got.Save(ctx, s))
	again := load(t, s, c.Log().ID())
	sameContext(t, got, again)
}

func testConflict(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())
	must(t, a.AddMessage(nous.UserMessage("a's turn")))
	must(t, b.AddMessage(nous.UserMessage("b's turn")))
	must(t, a.Save(ctx, s))
	refused(t, "the second save", b, nous.ErrConflict, func() error { return b.Save(ctx, s) })
	got := load(t, s, c.Log().ID())
	sameContext(t, a, got)
}

func testNeverSavedConflicts(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	data, err := c.Serialize()
	must(t, err)
	d, err := nous.DeserializeWithLogger(data, quiet)
	must(t, err)
	must(t, d.AddMessage(nous.UserMessage("restored elsewhere")))
	if err := d.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("save of a context never saved to the store, whose log is there: %v, want ErrConflict", err)
	}
}

func testRacingWriters(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessage(nous.UserMessage("start")))
	must(t, c.Save(ctx, s))
	const writers, turns = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range turns {
				for {
					d, err := nous.Load(ctx, s, c.Log().ID())
					if err != nil {
						errs <- err
						return
					}
					if err := d.AddMessage(nous.UserMessage(fmt.Sprintf("writer %d turn %d", w, turn))); err != nil {
						errs <- err
						return
					}
					err = d.Save(ctx, s)
					if err == nil {
						break
					}
					if !errors.Is(err, nous.ErrConflict) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := load(t, s, c.Log().ID())
	events := got.Log().Events()
	if len(events) != 1+writers*turns {
		t.Fatalf("%d events stored, want %d", len(events), 1+writers*turns)
	}
	seen := map[string]bool{}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if seen[e.Message.Content] {
			t.Fatalf("%q stored twice", e.Message.Content)
		}
		seen[e.Message.Content] = true
	}
}

func testForks(t *testing.T, s nous.Store) {
	ctx := context.Background()
	for _, parentFirst := range []bool{true, false} {
		c := conversation(t, 2)
		fork := c.Clone()
		must(t, fork.AddMessage(nous.UserMessage("the fork's own")))
		if parentFirst {
			must(t, c.Save(ctx, s))
			must(t, fork.Save(ctx, s))
		} else {
			must(t, fork.Save(ctx, s))
			must(t, c.Save(ctx, s))
		}
		// Whatever happens to the parent, the fork loads as saved.
		must(t, c.AddMessage(nous.UserMessage("the parent goes on")))
		must(t, c.Save(ctx, s))
		must(t, s.Delete(ctx, c.Log().ID()))
		got := load(t, s, fork.Log().ID())
		sameContext(t, fork, got)
		pid, seq, ok := got.Log().Parent()
		if wantID, wantSeq, _ := fork.Log().Parent(); !ok || pid != wantID || seq != wantSeq {
			t.Fatalf("loaded fork's parent %v %d %v, want %v %d", pid, seq, ok, wantID, wantSeq)
		}
	}
}

func testDelete(t *testing.T, s nous.Store) {
	ctx := context.Background()
	a, b := conversation(t, 1), conversation(t, 1)
	must(t, a.Save(ctx, s))
	must(t, b.Save(ctx, s))
	must(t, s.Delete(ctx, a.Log().ID()))
	if _, err := nous.Load(ctx, s, a.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Load after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, a.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Delete of a deleted log: %v, want ErrNotFound", err)
	}
	got := load(t, s, b.Log().ID())
	sameContext(t, b, got)
	must(t, a.AddMessage(nous.UserMessage("after the delete")))
	if err := a.Save(ctx, s); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Save of a deleted log: %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, s nous.Store) {
	ctx := context.Background()
	var ids []uuid.UUID
	var head int64
	for range 5 {
		c := conversation(t, 1)
		must(t, c.Save(ctx, s))
		ids, head = append(ids, c.Log().ID()), int64(c.Log().Len())
		time.Sleep(2 * time.Millisecond) // distinct UUID v7 times, for CreatedAt
	}
	list := func(opts nous.ListOptions) []nous.LogInfo {
		var out []nous.LogInfo
		for info, err := range s.List(ctx, opts) {
			must(t, err)
			out = append(out, info)
		}
		return out
	}
	all := list(nous.ListOptions{})
	if len(all) != 5 {
		t.Fatalf("List gave %d logs, want 5", len(all))
	}
	for i, info := range all {
		if info.ID != ids[i] {
			t.Fatalf("List[%d] = %v, want %v (ID order)", i, info.ID, ids[i])
		}
		sec, nsec := ids[i].Time().UnixTime()
		if info.Head != head || info.UpdatedAt.IsZero() || !info.CreatedAt.Equal(time.Unix(sec, nsec)) {
			t.Fatalf("List[%d] = %+v: head or times wrong (created at the time of its UUID v7)", i, info)
		}
	}
	// UpdatedAt is the time of the last save.
	time.Sleep(2 * time.Millisecond)
	c := load(t, s, ids[0])
	must(t, c.AddMessage(nous.UserMessage("later")))
	must(t, c.Save(ctx, s))
	if later := list(nous.ListOptions{Limit: 1})[0]; !later.UpdatedAt.After(all[0].UpdatedAt) || later.Head != head+1 {
		t.Fatalf("after a later save, List gives %+v; before it %+v", later, all[0])
	}
	page := list(nous.ListOptions{After: ids[1], Limit: 2})
	if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[3] {
		t.Fatalf("List after %v limit 2 = %v", ids[1], page)
	}
}

func testCanceled(t *testing.T, s nous.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := conversation(t, 1)
	if err := c.Save(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save with a canceled ctx: %v", err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatalf("Save after a canceled one: %v (nothing must have been stored)", err)
	}
	if _, err := nous.Load(ctx, s, c.Log().ID()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a canceled ctx: %v", err)
	}
	if err := s.Delete(ctx, c.Log().ID()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Delete with a canceled ctx: %v", err)
	}
	for _, err := range s.List(ctx, nous.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List with a canceled ctx: %v", err)
		}
	}
	// Idle, with a done ctx, a save still says so.
	if err := c.Save(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("idle Save with a canceled ctx: %v", err)
	}
}

// counting counts the appends that reach a store, and the events of the
// last.
type counting struct {
	nous.Store
	appends int
	events  int // in the last batch
}

func (c *counting) Append(ctx context.Context, b nous.Batch) error {
	c.appends++
	c.events = len(b.Events)
	return c.Store.Append(ctx, b)
}

func testIdle(t *testing.T, s nous.Store) {
	ctx := context.Background()
	cs := &counting{Store: s}
	c := conversation(t, 1)
	must(t, c.Save(ctx, cs))
	must(t, c.Save(ctx, cs))
	c.SetSystemPromptOverlay("not state")
	c.Notify = func(string, any) {}
	must(t, c.Save(ctx, cs))
	if cs.appends != 1 {
		t.Fatalf("%d appends for one save and two with nothing new", cs.appends)
	}
	c.MaxIterations++ // state changed: saved
	must(t, c.Save(ctx, cs))
	if cs.appends != 2 {
		t.Fatalf("a change of state was not saved")
	}
	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"a tool call added", func() { c.AddToolCall(nous.ToolCall{ID: "t", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}) }},
		{"a tool call appended directly", func() { c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: "u", Name: "g"}) }},
	} {
		before := cs.appends
		tc.change()
		must(t, c.Save(ctx, cs))
		if cs.appends != before+1 {
			t.Fatalf("%s: not saved", tc.name)
		}
		sameContext(t, c, load(t, s, c.Log().ID()))
	}
	// The context's redaction rule is the one its saves obey (the rule
	// is not stored: a loaded context has the default one).
	c.Redact = func(key string) bool { return key == "user" }
	must(t, c.Save(ctx, cs))
	if got := load(t, s, c.Log().ID()); got.Deps["user"] != nil || got.Deps["api_key"] != "sk-secret" {
		t.Fatalf("the stored deps do not follow the context's redaction rule: %v", got.Deps)
	}
}

func testRefresh(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 2)
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())

	must(t, b.Refresh(ctx, s)) // nothing new: unchanged
	sameContext(t, a, b)

	must(t, a.AddMessage(nous.UserMessage("a goes on")))
	must(t, a.ReplaceMessage(0, nous.SystemMessage("a compacts again")))
	a.Deps["topic"] = "refresh"
	must(t, a.Save(ctx, s))
	must(t, b.Refresh(ctx, s))
	sameContext(t, a, b)

	// Unsaved changes and a store that moved on: a conflict, b unchanged.
	must(t, a.AddMessage(nous.UserMessage("a again")))
	must(t, a.Save(ctx, s))
	must(t, b.AddMessage(nous.UserMessage("b's own")))
	refused(t, "Refresh with unsaved changes", b, nous.ErrConflict, func() error { return b.Refresh(ctx, s) })

	// Tool calls come with a refresh; unsaved state or tool calls, with a
	// store that moved on, are a conflict too.
	b = load(t, s, c.Log().ID())
	a.AddToolCall(nous.ToolCall{ID: "a1", Name: "f"})
	must(t, a.Save(ctx, s))
	must(t, b.Refresh(ctx, s))
	sameContext(t, a, b)
	for name, change := range map[string]func(c *nous.Context){
		"state":     func(c *nous.Context) { c.Iteration++ },
		"deps":      func(c *nous.Context) { c.Deps["b"] = true },
		"tool call": func(c *nous.Context) { c.AddToolCall(nous.ToolCall{ID: "b1", Name: "g"}) },
	} {
		b := load(t, s, c.Log().ID())
		a.MaxIterations++
		must(t, a.Save(ctx, s))
		change(b)
		refused(t, "Refresh with an unsaved change of "+name, b, nous.ErrConflict, func() error { return b.Refresh(ctx, s) })
	}
}

// A save that changes only the state is a revision like any other: it is
// stored, another writer that did not see it conflicts, and Refresh takes
// it. A loaded context whose state does not re-encode byte for byte (1.50
// is written 1.5) is unchanged all the same.
func testStateOnlySaves(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.Deps["price"] = json.Number("1.50")
	must(t, c.Save(ctx, s))
	a := load(t, s, c.Log().ID())
	b := load(t, s, c.Log().ID())
	must(t, b.Refresh(ctx, s)) // nothing changed: no conflict

	a.SystemPrompt = "new instructions"
	must(t, a.Save(ctx, s))
	got := load(t, s, c.Log().ID())
	if got.SystemPrompt != "new instructions" {
		t.Fatalf("a state-only save was not stored: %q", got.SystemPrompt)
	}
	must(t, b.Refresh(ctx, s))
	if b.SystemPrompt != "new instructions" {
		t.Fatalf("Refresh did not take a state-only save: %q", b.SystemPrompt)
	}

	x := load(t, s, c.Log().ID())
	y := load(t, s, c.Log().ID())
	x.AgentName = "x"
	y.AgentName = "y"
	must(t, x.Save(ctx, s))
	if err := y.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a state-only save over another's: %v, want ErrConflict", err)
	}
	for info, err := range s.List(ctx, nous.ListOptions{}) {
		must(t, err)
		if info.ID == c.Log().ID() && info.Revision != 3 {
			t.Fatalf("List says revision %d after three saves", info.Revision)
		}
	}
}

// The backend's own methods honour ctx: once it is done they fail and store
// nothing.
func testBackendHonoursContext(t *testing.T, s nous.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := conversation(t, 1)
	must(t, c.Save(context.Background(), s))
	if _, err := s.Read(ctx, c.Log().ID(), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a done ctx: %v", err)
	}
	info := nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, Revision: 1, UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: info, State: []byte(`{"version":2}`)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a done ctx: %v", err)
	}
	if _, err := nous.Load(context.Background(), s, info.ID); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("an Append with a done ctx stored something: %v", err)
	}
}

// Recorded tool calls are events: a save carries the calls recorded since
// the last one as one event each, whether AddToolCall or a direct append
// recorded them; a list that is no longer the log's record is refused and
// stores nothing; every load has them all.
func testToolCalls(t *testing.T, s nous.Store) {
	ctx := context.Background()
	cs := &counting{Store: s}
	c := conversation(t, 1)
	check := func(what string, wantEvents int) {
		t.Helper()
		must(t, c.Save(ctx, cs))
		if cs.events != wantEvents {
			t.Fatalf("%s: the batch carried %d events, want %d", what, cs.events, wantEvents)
		}
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
	}
	must(t, c.Save(ctx, cs))
	for i := range 5 {
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("t", i), Name: "f", Arguments: json.RawMessage(`{"i": ` + fmt.Sprint(i) + `}`),
			Metadata: map[string]any{"signature": "sig", "n": i}})
		check(fmt.Sprint("call ", i), 1)
	}
	c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: "direct", Name: "g"}, nous.ToolCall{ID: "direct2", Name: "g"})
	check("two appended directly", 2)

	for name, edit := range map[string]func(){
		"shortened":          func() { c.ToolCalls = c.ToolCalls[:2] },
		"dropped":            func() { c.ToolCalls = nil },
		"a call put first":   func() { c.ToolCalls = append([]nous.ToolCall{{ID: "new", Name: "g"}}, c.ToolCalls...) },
		"a call deleted":     func() { c.ToolCalls = slices.Delete(slices.Clone(c.ToolCalls), 0, 1) },
		"metadata in a copy": func() { c.ToolCalls = slices.Clone(c.ToolCalls); c.ToolCalls[1].Metadata = map[string]any{"a": "x"} },
	} {
		kept := c.ToolCalls
		before := cs.appends
		edit()
		if err := c.Save(ctx, cs); !errors.Is(err, nous.ErrToolCallsEdited) {
			t.Fatalf("Save of tool calls %s: %v, want ErrToolCallsEdited", name, err)
		}
		if cs.appends != before {
			t.Fatalf("Save of tool calls %s reached the store", name)
		}
		c.ToolCalls = c.Log().ToolCalls() // the way on the error names
		if !slices.EqualFunc(c.ToolCalls, kept, func(a, b nous.ToolCall) bool { return a.ID == b.ID }) {
			t.Fatalf("the log's record after tool calls %s: %v", name, c.ToolCalls)
		}
		must(t, c.Save(ctx, cs))
		if cs.appends != before {
			t.Fatalf("restored after tool calls %s: the save reached the store, with nothing new", name)
		}
	}

	// A loaded context goes on adding to what is stored.
	d := load(t, s, c.Log().ID())
	d.AddToolCall(nous.ToolCall{ID: "after load", Name: "h"})
	must(t, d.Save(ctx, cs))
	if cs.events != 1 {
		t.Fatalf("a loaded context's next save carried %d events, want 1", cs.events)
	}
	got := load(t, s, c.Log().ID())
	sameContext(t, d, got)
}

// Watch yields the events stored after the seq asked for, then every batch
// saved later, with no gap and no duplicate, and ctx's error once it is
// done.
func testWatch(t *testing.T, s nous.Store) {
	w, ok := s.(nous.Watcher)
	if !ok {
		t.Skip("the store is not a nous.Watcher")
	}
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessages(nous.UserMessage("m0"), nous.UserMessage("m1")))
	must(t, c.Save(context.Background(), s))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const saves = 20
	done := make(chan error, 1)
	go func() {
		for i := 2; i < 2+saves; i++ {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("m", i))); err != nil {
				done <- err
				return
			}
			if err := c.Save(context.Background(), s); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	next := int64(2) // asked for the events after seq 1
	var last error
	for e, err := range w.Watch(ctx, c.Log().ID(), 1) {
		if err != nil {
			last = err
			break
		}
		if e.Seq != next || e.Message.Content != fmt.Sprint("m", next-1) {
			t.Fatalf("watched seq %d %q, want seq %d", e.Seq, e.Message.Content, next)
		}
		if next++; next == 2+saves+1 {
			cancel()
		}
	}
	must(t, <-done)
	if next != 2+saves+1 {
		t.Fatalf("watched up to seq %d of %d", next-1, 1+saves+1)
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("Watch ended with %v, want ctx's error", last)
	}
}

// What was saved through one handle loads, and saves on, through the next.
func testReopen(t *testing.T, s nous.Store, reopen func(t *testing.T, s nous.Store) nous.Store) {
	ctx := context.Background()
	c := conversation(t, 2)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	fork := c.Clone()
	must(t, fork.AddMessage(nous.UserMessage("the fork")))
	must(t, fork.Save(ctx, s))
	for round := range 3 {
		s = reopen(t, s)
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
		gotFork := load(t, s, fork.Log().ID())
		sameContext(t, fork, gotFork)
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprint("after reopen ", round))))
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("r", round), Name: "f"})
		must(t, c.Save(ctx, s))
	}
}

// A first batch that does not start a log (after a seq, or at a revision
// other than 1) is refused and stores nothing.
func testBadFirstBatch(t *testing.T, s nous.Store) {
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	info := nous.LogInfo{ID: id, Head: 4, Revision: 1, Incarnation: uuid.New(), UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: info, After: 3, State: []byte(`{"version":2}`), Events: []json.RawMessage{[]byte(`{}`)}}); err == nil {
		t.Fatal("a first batch after seq 3 was accepted")
	}
	if _, err := s.Read(ctx, id, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a refused first batch left something: %v", err)
	}
	for info, err := range s.List(ctx, nous.ListOptions{}) {
		if err != nil || info.ID == id {
			t.Fatalf("List after a refused first batch: %v %v", info.ID, err)
		}
	}
	nilID := nous.LogInfo{Revision: 1, Incarnation: uuid.New(), UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: nilID, State: []byte(`{"version":2}`)}); err == nil {
		t.Fatal("a batch of the nil log ID was accepted")
	}
}

// Batches that do not add up are refused, and change nothing: a head that
// is not After plus the events.
func testBadBatches(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	st, err := s.Read(ctx, c.Log().ID(), 0)
	must(t, err)
	good := nous.Batch{Info: st.Info, After: st.Info.Head, State: st.State}
	good.Info.Revision++
	good.Info.UpdatedAt = time.Now()
	event := json.RawMessage(fmt.Sprintf(`{"seq":%d,"type":"turn_start","created_at":"2026-11-30T12:00:00Z"}`, st.Info.Head+1))
	for name, change := range map[string]func(b *nous.Batch){
		"head beyond the events": func(b *nous.Batch) { b.Info.Head += 2; b.Events = []json.RawMessage{event} },
		"head short of them":     func(b *nous.Batch) { b.Events = []json.RawMessage{event} },
	} {
		b := good
		change(&b)
		if err := s.Append(ctx, b); err == nil {
			t.Errorf("%s: accepted", name)
		}
		sameContext(t, c, load(t, s, c.Log().ID()))
	}
	must(t, s.Append(ctx, good)) // the store still takes a good batch
	first := nous.Batch{Info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, Revision: 1, CreatedAt: time.Now(), UpdatedAt: time.Now()}, State: st.State}
	if err := s.Append(ctx, first); err == nil {
		t.Error("a first batch without an incarnation: accepted")
	}
	if _, err := s.Read(ctx, first.Info.ID, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("a refused first batch: Read gives %v, want ErrNotFound", err)
	}
}

// A watch of a log that is deleted, or deleted and saved again under its
// ID, ends with an error wrapping ErrNotFound, and never yields an event of
// the log saved again.
func testWatchEnds(t *testing.T, s nous.Store) {
	w, ok := s.(nous.Watcher)
	if !ok {
		t.Skip("the store is not a nous.Watcher")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, again := range []bool{false, true} {
		c := nous.NewContext(nous.WithLogger(quiet))
		must(t, c.AddMessage(nous.UserMessage("old 1")))
		data, err := c.Serialize()
		must(t, err)
		must(t, c.AddMessages(nous.UserMessage("old 2"), nous.UserMessage("old 3")))
		must(t, c.Save(ctx, s))
		var last error
		for e, err := range w.Watch(ctx, c.Log().ID(), 0) {
			if err != nil {
				last = err
				break
			}
			if !strings.HasPrefix(e.Message.Content, "old") {
				t.Fatalf("watched %q, of the log saved again", e.Message.Content)
			}
			if e.Seq == 3 { // between two reads: the log goes, and another comes
				must(t, s.Delete(ctx, c.Log().ID()))
				if again {
					b, err := nous.DeserializeWithLogger(data, quiet)
					must(t, err)
					for i := range 4 {
						must(t, b.AddMessage(nous.UserMessage(fmt.Sprint("new ", i))))
					}
					must(t, b.Save(ctx, s))
				}
			}
		}
		if !errors.Is(last, nous.ErrNotFound) {
			t.Fatalf("saved again %v: the watch ended with %v, want ErrNotFound", again, last)
		}
	}
}

// A log deleted and saved again under the same ID is another log, even at
// the head and revision a context saw of the old one: that context's Save
// and Refresh conflict instead of splicing the two.
func testRecreated(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessage(nous.UserMessage("one")))
	data, err := c.Serialize()
	must(t, err)
	must(t, c.AddMessage(nous.UserMessage("two (A)")))
	must(t, c.Save(ctx, s))
	reader := load(t, s, c.Log().ID())
	must(t, s.Delete(ctx, c.Log().ID()))
	b, err := nous.DeserializeWithLogger(data, quiet) // the same ID, an older history
	must(t, err)
	must(t, b.AddMessage(nous.UserMessage("two (B)")))
	must(t, b.Save(ctx, s)) // the head and revision c saw, another log
	must(t, c.AddMessage(nous.UserMessage("three (A)")))
	refused(t, "Save onto the re-created log", c, nous.ErrConflict, func() error { return c.Save(ctx, s) })
	refused(t, "Refresh from the re-created log", reader, nous.ErrConflict, func() error { return reader.Refresh(ctx, s) })
	must(t, b.AddMessage(nous.UserMessage("three (B)")))
	must(t, b.Save(ctx, s))
	refused(t, "Refresh from the re-created log, moved on", reader, nous.ErrConflict, func() error { return reader.Refresh(ctx, s) })
	sameContext(t, b, load(t, s, b.Log().ID()))
}

// lostAck is a store whose Append stores the batch and then, once armed,
// fails as a connection lost before the reply would.
type lostAck struct {
	nous.Store
	armed bool
}

var errLostAck = errors.New("connection reset before the reply")

func (s *lostAck) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.armed {
		s.armed = false
		return errLostAck
	}
	return nil
}

// A save whose reply was lost after the store kept it is found at the next
// save, which stores nothing twice: retried as it was, or with more added
// since. A state-only save is taken as its own only when the store holds
// exactly what it would store, so another writer's is still a conflict.
func testLostAcknowledgement(t *testing.T, backend nous.Store) {
	ctx := context.Background()
	s := &lostAck{Store: backend}
	lose := func(c *nous.Context) {
		t.Helper()
		s.armed = true
		if err := c.Save(ctx, s); !errors.Is(err, errLostAck) {
			t.Fatalf("Save with its reply lost: %v", err)
		}
	}
	c := conversation(t, 1)
	lose(c) // the first save, which creates the log
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	must(t, c.AddMessage(nous.UserMessage("retried as it was")))
	lose(c)
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	must(t, c.AddMessage(nous.UserMessage("lost")))
	c.AddToolCall(nous.ToolCall{ID: "lost", Name: "f"})
	lose(c)
	must(t, c.AddMessage(nous.UserMessage("added after")))
	c.AddToolCall(nous.ToolCall{ID: "after", Name: "f"})
	c.Iteration++
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))
	if info := infoOf(t, s, c.Log().ID()); info.Head != int64(c.Log().Len()) {
		t.Fatalf("stored head %d, want %d", info.Head, c.Log().Len())
	}

	c.Iteration++
	lose(c) // state only
	must(t, c.Save(ctx, s))
	sameContext(t, c, load(t, s, c.Log().ID()))

	other := load(t, s, c.Log().ID())
	other.AgentName = "other"
	must(t, other.Save(ctx, s)) // another writer's state-only save
	c.AgentName = "mine"
	refused(t, "a state-only save after another writer's", c, nous.ErrConflict, func() error { return c.Save(ctx, s) })
	sameContext(t, other, load(t, s, c.Log().ID()))
}

// infoOf returns the listed info of log id.
func infoOf(t *testing.T, s nous.Store, id uuid.UUID) nous.LogInfo {
	t.Helper()
	for info, err := range s.List(context.Background(), nous.ListOptions{}) {
		must(t, err)
		if info.ID == id {
			return info
		}
	}
	t.Fatalf("log %s is not listed", id)
	return nous.LogInfo{}
}

// A context knows its log as one store holds it: saving it into a second
// store that does not hold the log is an error, never a silent success,
// even with nothing new to save; a copy made with Deserialize saves there.
func testSecondStore(t *testing.T, a, b nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, a))
	refused(t, "an idle save into a second store", c, nous.ErrNotFound, func() error { return c.Save(ctx, b) })
	must(t, c.AddMessage(nous.UserMessage("more")))
	refused(t, "a save into a second store", c, nous.ErrNotFound, func() error { return c.Save(ctx, b) })
	data, err := c.Serialize()
	must(t, err)
	copied, err := nous.DeserializeWithLogger(data, quiet)
	must(t, err)
	must(t, copied.Save(ctx, b))
	sameContext(t, c, load(t, b, c.Log().ID()))
	must(t, c.Save(ctx, a)) // c still saves to its own store
	sameContext(t, c, load(t, a, c.Log().ID()))
}

// What Read returns is the caller's: changing it changes nothing stored.
// Events after a seq beyond the head are none.
func testReadCopies(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	st, err := s.Read(ctx, c.Log().ID(), 0)
	must(t, err)
	for _, b := range append([]json.RawMessage{st.State}, st.Events...) {
		for i := range b {
			b[i] = 'x'
		}
	}
	sameContext(t, c, load(t, s, c.Log().ID()))
	st, err = s.Read(ctx, c.Log().ID(), st.Info.Head+5)
	must(t, err)
	if len(st.Events) != 0 {
		t.Fatalf("%d events after a seq beyond the head", len(st.Events))
	}
}

// A refresh reads only the events stored since, and the tool calls they
// record join ToolCalls, which saves on.
func testRefreshToolCalls(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	for i := range 3 {
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("t", i), Name: "f"})
	}
	must(t, c.Save(ctx, s))
	b := load(t, s, c.Log().ID())
	reads := &reading{Store: s}
	c.AddToolCall(nous.ToolCall{ID: "t3", Name: "f", Metadata: map[string]any{"k": []any{"v"}}})
	must(t, c.Save(ctx, s))
	must(t, b.Refresh(ctx, reads))
	sameContext(t, c, b)
	if reads.events != 1 {
		t.Fatalf("a refresh read %d events, want the 1 added", reads.events)
	}
	b.ToolCalls[3].Metadata["k"].([]any)[0] = "changed in b"
	if b.Log().ToolCalls()[3].Metadata["k"].([]any)[0] != "v" {
		t.Fatal("a refreshed context's tool calls share their metadata with its log's")
	}
	b.ToolCalls[3].Metadata["k"].([]any)[0] = "v"
	b.AddToolCall(nous.ToolCall{ID: "t4", Name: "f"})
	must(t, b.Save(ctx, s))
	sameContext(t, b, load(t, s, c.Log().ID()))
}

// reading counts the events the last Read of a store returned.
type reading struct {
	nous.Store
	events int
}

func (r *reading) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := r.Store.Read(ctx, id, after)
	r.events = len(st.Events)
	return st, err
}
