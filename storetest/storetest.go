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
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Option configures [Run].
type Option func(*options)

type options struct {
	reopen func(t *testing.T, s nous.Store) nous.Store
	second func(t *testing.T, s nous.Store) nous.Store
}

// WithReopen gives Run a way to reopen a store: reopen closes s and returns
// a new handle on the same data. Run then checks that what was saved
// through one handle loads, and saves on, through the next.
func WithReopen(reopen func(t *testing.T, s nous.Store) nous.Store) Option {
	return func(o *options) { o.reopen = reopen }
}

// WithSecondHandle gives Run a second live handle on a store's data:
// second returns a handle, open beside s, that sees what s stores and
// stores what s sees (another pool on one database, another Open of one
// directory, from this process; a store that also serves other processes
// proves that with tests of its own). Run then checks that writers racing
// through both handles behave as through one: every batch stored once, one
// save of two conflicting ones wins, a name is created once, and Watch
// through one handle follows the saves made through the other. second
// registers the handle's Close with t.Cleanup.
func WithSecondHandle(second func(t *testing.T, s nous.Store) nous.Store) Option {
	return func(o *options) { o.second = second }
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
		{"CanceledBeforeTheStore", testCanceledBeforeTheStore},
		{"Idle", testIdle},
		{"Refresh", testRefresh},
		{"StateOnlySaves", testStateOnlySaves},
		{"BackendHonoursContext", testBackendHonoursContext},
		{"ToolCalls", testToolCalls},
		{"BadFirstBatch", testBadFirstBatch},
		{"BadBatches", testBadBatches},
		{"WatchEnds", testWatchEnds},
		{"ReadCopies", testReadCopies},
		{"AppendCopies", testAppendCopies},
		{"RefreshToolCalls", testRefreshToolCalls},
		{"Recreated", testRecreated},
		{"LostAcknowledgement", testLostAcknowledgement},
		{"Watch", testWatch},
		{"Names", testNames},
		{"NamesRace", func(t *testing.T, s nous.Store) { testNamesRace(t, []nous.Store{s}) }},
		{"ListLabels", testListLabels},
		{"BatchKeys", testBatchKeys},
		{"KeysInLog", testKeysInLog},
		{"LaterAttemptLanded", testLaterAttemptLanded},
		{"LandedThenAnother", func(t *testing.T, s nous.Store) { testLandedThenAnother(t, s, s) }},
		{"LostRepliesRandom", func(t *testing.T, s nous.Store) { testLostRepliesRandom(t, []nous.Store{s}) }},
		{"DepsInLog", testDepsInLog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
	t.Run("SecondStore", func(t *testing.T) { testSecondStore(t, open(t), open(t)) })
	t.Run("NamesReopen", func(t *testing.T) {
		if o.reopen == nil {
			t.Skip("no WithReopen")
		}
		testNamesReopen(t, open(t), o.reopen)
	})
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, a, b nous.Store)
	}{
		{"RacingWriters", func(t *testing.T, a, b nous.Store) { testRacingWritersOn(t, []nous.Store{a, b}) }},
		{"Conflict", testConflictTwoHandles},
		{"NamesRace", func(t *testing.T, a, b nous.Store) { testNamesRace(t, []nous.Store{a, b}) }},
		{"Watch", func(t *testing.T, a, b nous.Store) { testWatchOn(t, a, b) }},
		{"Delete", testDeleteTwoHandles},
		{"LandedThenAnother", testLandedThenAnother},
		{"LostRepliesRandom", func(t *testing.T, a, b nous.Store) { testLostRepliesRandom(t, []nous.Store{a, b}) }},
	} {
		t.Run("TwoHandles/"+tt.name, func(t *testing.T) {
			if o.second == nil {
				t.Skip("no WithSecondHandle")
			}
			s := open(t)
			tt.run(t, s, o.second(t, s))
		})
	}
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

var errLostAck = errors.New("connection reset before the reply")

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
