package nous

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous/internal/reftest"
)

func TestToDepsRules(t *testing.T) {
	nilPtr := (*int)(nil)
	one := 1
	tests := []struct {
		name    string
		initial map[string]any
		update  ContextUpdate
		want    map[string]any
		wantErr []string // substrings of the error; nil: no error
	}{
		{name: "zero update on nil initial", want: map[string]any{}},
		{name: "zero update copies initial", initial: map[string]any{"a": 1}, want: map[string]any{"a": 1}},

		// set
		{name: "set new key", update: NewContextUpdate().Set("k", "v"), want: map[string]any{"k": "v"}},
		{name: "set replaces", initial: map[string]any{"k": []any{1}}, update: NewContextUpdate().Set("k", 2), want: map[string]any{"k": 2}},
		{name: "set nil keeps the key", initial: map[string]any{"k": 1}, update: NewContextUpdate().Set("k", nil), want: map[string]any{"k": nil}},
		{name: "last set wins", update: NewContextUpdate().Set("k", 1).Set("k", 2), want: map[string]any{"k": 2}},

		// delete
		{name: "delete present", initial: map[string]any{"k": 1, "o": 2}, update: NewContextUpdate().Delete("k"), want: map[string]any{"o": 2}},
		{name: "delete absent", initial: map[string]any{"o": 2}, update: NewContextUpdate().Delete("k"), want: map[string]any{"o": 2}},
		{name: "set then delete", update: NewContextUpdate().Set("k", 1).Delete("k"), want: map[string]any{}},
		{name: "delete then set", initial: map[string]any{"k": 0}, update: NewContextUpdate().Delete("k").Set("k", 1), want: map[string]any{"k": 1}},

		// merge
		{name: "merge absent gives the map", update: NewContextUpdate().Merge("m", map[string]any{"a": 1}), want: map[string]any{"m": map[string]any{"a": 1}}},
		{name: "merge nil onto absent gives an empty map", update: NewContextUpdate().Merge("m", nil), want: map[string]any{"m": map[string]any{}}},
		{name: "merge onto nil gives the map", initial: map[string]any{"m": nil}, update: NewContextUpdate().Merge("m", map[string]any{"a": 1}), want: map[string]any{"m": map[string]any{"a": 1}}},
		{
			name:    "merge is deep",
			initial: map[string]any{"m": map[string]any{"a": 1, "n": map[string]any{"x": 1, "y": 2}, "keep": "k"}},
			update:  NewContextUpdate().Merge("m", map[string]any{"a": 2, "n": map[string]any{"y": 3, "z": 4}, "new": true}),
			want:    map[string]any{"m": map[string]any{"a": 2, "n": map[string]any{"x": 1, "y": 3, "z": 4}, "keep": "k", "new": true}},
		},
		{
			name:    "merge three levels",
			initial: map[string]any{"m": map[string]any{"a": map[string]any{"b": map[string]any{"c": 1, "d": 2}}}},
			update:  NewContextUpdate().Merge("m", map[string]any{"a": map[string]any{"b": map[string]any{"d": 3}}}),
			want:    map[string]any{"m": map[string]any{"a": map[string]any{"b": map[string]any{"c": 1, "d": 3}}}},
		},
		{
			name:    "merge: a map on the right replaces a non-map",
			initial: map[string]any{"m": map[string]any{"a": 5}},
			update:  NewContextUpdate().Merge("m", map[string]any{"a": map[string]any{"b": 1}}),
			want:    map[string]any{"m": map[string]any{"a": map[string]any{"b": 1}}},
		},
		{
			name:    "merge: a non-map on the right replaces a map",
			initial: map[string]any{"m": map[string]any{"a": map[string]any{"b": 1}}},
			update:  NewContextUpdate().Merge("m", map[string]any{"a": 5}),
			want:    map[string]any{"m": map[string]any{"a": 5}},
		},
		{
			name:    "merge: lists are replaced, not concatenated",
			initial: map[string]any{"m": map[string]any{"l": []any{1, 2}}},
			update:  NewContextUpdate().Merge("m", map[string]any{"l": []any{3}}),
			want:    map[string]any{"m": map[string]any{"l": []any{3}}},
		},
		{name: "merge onto a non-map value replaces it", initial: map[string]any{"m": "text"}, update: NewContextUpdate().Merge("m", map[string]any{"a": 1}), want: map[string]any{"m": map[string]any{"a": 1}}},
		{name: "merge onto a list replaces it", initial: map[string]any{"m": []any{1}}, update: NewContextUpdate().Merge("m", map[string]any{"a": 1}), want: map[string]any{"m": map[string]any{"a": 1}}},
		{name: "merges accumulate", update: NewContextUpdate().Merge("m", map[string]any{"a": 1}).Merge("m", map[string]any{"b": 2}).Merge("m", map[string]any{"a": 3}), want: map[string]any{"m": map[string]any{"a": 3, "b": 2}}},
		{name: "merge right side nil wins", initial: map[string]any{"m": map[string]any{"a": 1}}, update: NewContextUpdate().Merge("m", map[string]any{"a": nil}), want: map[string]any{"m": map[string]any{"a": nil}}},

		// append
		{name: "append onto absent", update: NewContextUpdate().Append("l", 1), want: map[string]any{"l": []any{1}}},
		{name: "append onto nil", initial: map[string]any{"l": nil}, update: NewContextUpdate().Append("l", 1), want: map[string]any{"l": []any{1}}},
		{name: "append onto []any", initial: map[string]any{"l": []any{"a"}}, update: NewContextUpdate().Append("l", "b"), want: map[string]any{"l": []any{"a", "b"}}},
		{name: "append onto nil []any", initial: map[string]any{"l": []any(nil)}, update: NewContextUpdate().Append("l", "b"), want: map[string]any{"l": []any{"b"}}},
		{name: "append nil item", update: NewContextUpdate().Append("l", nil).Append("l", nil), want: map[string]any{"l": []any{nil, nil}}},
		{name: "append a map item", update: NewContextUpdate().Append("l", map[string]any{"a": 1}), want: map[string]any{"l": []any{map[string]any{"a": 1}}}},
		{name: "append onto []string", initial: map[string]any{"l": []string{"a"}}, update: NewContextUpdate().Append("l", "b").Append("l", "c"), want: map[string]any{"l": []string{"a", "b", "c"}}},
		{name: "append onto []int", initial: map[string]any{"l": []int{1}}, update: NewContextUpdate().Append("l", 2), want: map[string]any{"l": []int{1, 2}}},
		{name: "append onto nil []string", initial: map[string]any{"l": []string(nil)}, update: NewContextUpdate().Append("l", "a"), want: map[string]any{"l": []string{"a"}}},
		{name: "append onto []any-like interface slice", initial: map[string]any{"l": []fmt.Stringer{}}, update: NewContextUpdate().Append("l", SandboxReadOnly), wantErr: []string{`"l"`, "nous.SandboxMode", "[]fmt.Stringer"}},
		{name: "append nil onto []*int", initial: map[string]any{"l": []*int{&one}}, update: NewContextUpdate().Append("l", nil), want: map[string]any{"l": []*int{&one, nilPtr}}},
		{name: "append onto []any after a set", update: NewContextUpdate().Set("l", []any{9}).Append("l", 1), want: map[string]any{"l": []any{9, 1}}},
		{name: "append onto a typed slice after a set", update: NewContextUpdate().Set("l", []string{"x"}).Append("l", "y"), want: map[string]any{"l": []string{"x", "y"}}},

		// append errors: key and both types named
		{name: "append int onto []string", initial: map[string]any{"l": []string{"a"}}, update: NewContextUpdate().Append("l", 3), wantErr: []string{`"l"`, "int", "[]string"}},
		{name: "append string onto []int", initial: map[string]any{"l": []int{1}}, update: NewContextUpdate().Append("l", "x"), wantErr: []string{`"l"`, "string", "[]int"}},
		{name: "append nil onto []int", initial: map[string]any{"l": []int{1}}, update: NewContextUpdate().Append("l", nil), wantErr: []string{`"l"`, "nil", "[]int"}},
		{name: "append onto a string", initial: map[string]any{"s": "text"}, update: NewContextUpdate().Append("s", "x"), wantErr: []string{`"s"`, "string"}},
		{name: "append onto an int", initial: map[string]any{"n": 1}, update: NewContextUpdate().Append("n", 2), wantErr: []string{`"n"`, "int"}},
		{name: "append onto a map", initial: map[string]any{"m": map[string]any{}}, update: NewContextUpdate().Append("m", 1), wantErr: []string{`"m"`, "map[string]interface {}"}},
		{name: "append onto an array", initial: map[string]any{"a": [2]int{}}, update: NewContextUpdate().Append("a", 1), wantErr: []string{`"a"`, "[2]int"}},
		{name: "append after a set to a string", update: NewContextUpdate().Append("l", 1).Set("l", "x").Append("l", 2), wantErr: []string{`"l"`, "string"}},
		{name: "append after a merge", update: NewContextUpdate().Append("l", 1).Merge("l", map[string]any{"a": 1}).Append("l", 2), wantErr: []string{`"l"`, "map"}},
		{name: "error in the middle reports its index", update: NewContextUpdate().Set("a", 1).Set("b", "x").Append("b", 1).Set("c", 3), wantErr: []string{"operation 2", `"b"`}},

		// resets and order
		{name: "delete between appends resets", update: NewContextUpdate().Append("l", 1).Append("l", 2).Delete("l").Append("l", 3), want: map[string]any{"l": []any{3}}},
		{name: "set between appends resets", update: NewContextUpdate().Append("l", 1).Append("l", 2).Set("l", []any{"s"}).Append("l", 3), want: map[string]any{"l": []any{"s", 3}}},
		{name: "set nil between appends resets", update: NewContextUpdate().Append("l", 1).Set("l", nil).Append("l", 3), want: map[string]any{"l": []any{3}}},
		{name: "reset of an initial list", initial: map[string]any{"l": []any{0}}, update: NewContextUpdate().Append("l", 1).Delete("l").Append("l", 2), want: map[string]any{"l": []any{2}}},
		{
			name:   "interleaved keys keep their own order",
			update: NewContextUpdate().Append("a", 1).Append("b", "x").Append("a", 2).Append("c", true).Append("b", "y").Append("a", 3),
			want:   map[string]any{"a": []any{1, 2, 3}, "b": []any{"x", "y"}, "c": []any{true}},
		},
		{name: "log events touch no deps", initial: map[string]any{"k": 1}, update: NewContextUpdate().LogEvent(EventToolCall, map[string]any{"k": 2}), want: map[string]any{"k": 1}},
		{name: "surface log event touches no deps either", update: NewContextUpdate().LogEvent(EventUserMessage, nil), want: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reftest.Snapshot(tt.initial)
			got, err := tt.update.ToDeps(tt.initial)
			assert.Equal(t, before, reftest.Snapshot(tt.initial), "ToDeps modified initial")
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrTypeMismatch)
				assert.Nil(t, got)
				for _, s := range tt.wantErr {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestToDepsManyAppends(t *testing.T) {
	const n = 2000
	u := NewContextUpdate()
	want := make([]any, n)
	for i := range n {
		u = u.Append("l", i+1)
		want[i] = i + 1
	}
	require.Equal(t, n, u.Len())
	for _, initial := range []map[string]any{nil, {"l": nil}, {"l": []any{}}, {"l": reftest.Spare(3)}} {
		got, err := u.ToDeps(initial)
		require.NoError(t, err)
		require.Equal(t, want, got["l"])
	}

	// Typed: onto a []int with spare capacity, which must stay untouched.
	typed := make([]int, 0, 8)
	got, err := u.ToDeps(map[string]any{"l": typed})
	require.NoError(t, err)
	l, ok := got["l"].([]int)
	require.True(t, ok, "got %T", got["l"])
	require.Len(t, l, n)
	for i, v := range l {
		require.Equal(t, i+1, v)
	}
	assert.Equal(t, make([]int, 8), typed[:8], "the spare capacity of the initial []int was written")
}

func TestToDepsNeverModifiesInitial(t *testing.T) {
	spareTyped := make([]string, 1, 10)
	spareTyped[0] = "t0"
	full := spareTyped[:10]
	for i := 1; i < 10; i++ {
		full[i] = "spare"
	}
	nestedList := reftest.Spare(5, "n0")
	initial := map[string]any{
		"l":     reftest.Spare(9, "l0"),
		"empty": reftest.Spare(4),
		"t":     spareTyped,
		"m": map[string]any{
			"a":    1,
			"n":    map[string]any{"x": 1, "deep": map[string]any{"y": 2}},
			"list": nestedList,
		},
		"s":    "text",
		"gone": map[string]any{"k": []any{1}},
	}
	// The same map reachable twice must not be written through either path.
	shared := map[string]any{"v": 1}
	initial["alias1"], initial["alias2"] = shared, shared

	u := NewContextUpdate().
		Append("l", "l1").Append("l", "l2").
		Append("empty", 1).
		Append("t", "t1").
		Merge("m", map[string]any{"a": 2, "n": map[string]any{"x": 9, "deep": map[string]any{"z": 3}}, "list": []any{"replaced"}}).
		Merge("alias1", map[string]any{"v": 2}).
		Merge("alias2", map[string]any{"w": 3}).
		Set("s", "changed").
		Delete("gone").
		Merge("new", map[string]any{"k": 1}).
		Append("l", "l3")
	before := reftest.Snapshot(initial)

	got, err := u.ToDeps(initial)
	require.NoError(t, err)
	assert.Equal(t, before, reftest.Snapshot(initial), "ToDeps modified initial or something reachable from it")
	assert.Equal(t, map[string]any{
		"l":      []any{"l0", "l1", "l2", "l3"},
		"empty":  []any{1},
		"t":      []string{"t0", "t1"},
		"m":      map[string]any{"a": 2, "n": map[string]any{"x": 9, "deep": map[string]any{"y": 2, "z": 3}}, "list": []any{"replaced"}},
		"s":      "changed",
		"alias1": map[string]any{"v": 2},
		"alias2": map[string]any{"v": 1, "w": 3},
		"new":    map[string]any{"k": 1},
	}, got)

	// The result is the caller's: writing into it (including appending
	// into the spare capacity of a list the reducer made) leaves initial
	// and a second reduction alone.
	got["m"].(map[string]any)["n"].(map[string]any)["x"] = "scribbled"
	got["m"].(map[string]any)["n"].(map[string]any)["deep"].(map[string]any)["y"] = "scribbled"
	got["l"].([]any)[0] = "scribbled"
	_ = append(got["l"].([]any), "scribbled")
	_ = append(got["t"].([]string), "scribbled")
	got["alias2"].(map[string]any)["v"] = "scribbled"
	assert.Equal(t, before, reftest.Snapshot(initial), "writing into the result changed initial")

	again, err := u.ToDeps(initial)
	require.NoError(t, err)
	assert.Equal(t, []any{"l0", "l1", "l2", "l3"}, again["l"])
	assert.Equal(t, 9, again["m"].(map[string]any)["n"].(map[string]any)["x"])
}

func TestContextUpdateZeroAndLen(t *testing.T) {
	var zero ContextUpdate
	assert.True(t, zero.Empty())
	assert.Equal(t, 0, zero.Len())
	assert.Empty(t, zero.Operations())
	assert.Empty(t, zero.LogEvents())
	got, err := zero.ToDeps(nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, got)
	assert.True(t, NewContextUpdate().Empty())
	assert.Equal(t, zero, NewContextUpdate())

	u := zero.Set("a", 1).Delete("b").LogEvent(EventTurnStart, nil)
	assert.False(t, u.Empty())
	assert.Equal(t, 3, u.Len())
	assert.True(t, zero.Empty(), "building from the zero update changed it")
	onlyEvents := zero.LogEvent(EventTurnStart, nil)
	assert.False(t, onlyEvents.Empty(), "an update with only a log event is not empty")
}

func TestContextUpdateOperations(t *testing.T) {
	u := NewContextUpdate().
		Set("s", 1).
		Merge("m", map[string]any{"a": 1}).
		Append("l", "x").
		Delete("d").
		LogEvent(EventToolCall, map[string]any{"name": "search"}).
		LogEvent(EventStepEnd, nil)
	want := []Operation{
		{Kind: OpSet, Key: "s", Value: 1},
		{Kind: OpMerge, Key: "m", Value: map[string]any{"a": 1}},
		{Kind: OpAppend, Key: "l", Value: "x"},
		{Kind: OpDelete, Key: "d"},
		{Kind: OpLogEvent, EventType: EventToolCall, Data: map[string]any{"name": "search"}},
		{Kind: OpLogEvent, EventType: EventStepEnd},
	}
	assert.Equal(t, want, u.Operations())
	assert.Equal(t, []LoggedEvent{
		{Type: EventToolCall, Data: map[string]any{"name": "search"}},
		{Type: EventStepEnd},
	}, u.LogEvents())

	// Both return copies: changing them changes nothing in u.
	ops := u.Operations()
	ops[0].Key = "changed"
	ops[1].Value.(map[string]any)["a"] = "changed"
	ops[4].Data["name"] = "changed"
	_ = append(ops[:2], Operation{Kind: OpDelete, Key: "s"})
	evs := u.LogEvents()
	evs[0].Data["name"] = "changed"
	evs[0].Type = EventTurnEnd
	assert.Equal(t, want, u.Operations())
	assert.Equal(t, EventToolCall, u.LogEvents()[0].Type)
	assert.Equal(t, "search", u.LogEvents()[0].Data["name"])
}

func TestContextUpdateBuildersAreIndependent(t *testing.T) {
	base := NewContextUpdate().Append("l", 0).Set("k", "base")
	a := base.Set("k", "a").Append("l", "a")
	b := base.Set("k", "b")
	c := base.Delete("k")
	b2 := b.Append("l", "b")

	assert.Equal(t, 2, base.Len())
	check := func(u ContextUpdate, want map[string]any) {
		t.Helper()
		got, err := u.ToDeps(nil)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	check(base, map[string]any{"l": []any{0}, "k": "base"})
	check(a, map[string]any{"l": []any{0, "a"}, "k": "a"})
	check(b, map[string]any{"l": []any{0}, "k": "b"})
	check(b2, map[string]any{"l": []any{0, "b"}, "k": "b"})
	check(c, map[string]any{"l": []any{0}})

	// Many branches from one base, built in any order.
	branches := make([]ContextUpdate, 10)
	for i := range branches {
		branches[i] = base.Append("l", i)
	}
	for i, br := range branches {
		check(br, map[string]any{"l": []any{0, i}, "k": "base"})
	}
}

func TestApply(t *testing.T) {
	rec := &LogRecorder{}
	c := NewContext(WithDeps(map[string]any{"l": []any{"a"}, "m": map[string]any{"x": 1}}), WithLogger(slog.New(rec)))
	require.NoError(t, c.AddMessage(UserMessage("hi")))
	msgs := c.Messages()

	u := NewContextUpdate().
		LogEvent(EventToolCall, map[string]any{"name": "first"}).
		Set("k", "v").
		LogEvent(EventUserMessage, map[string]any{"smuggled": true}).
		Append("l", "b").
		LogEvent(EventStepEnd, map[string]any{"n": 2}).
		Merge("m", map[string]any{"y": 2}).
		LogEvent("no_such_type", nil)
	require.NoError(t, u.Apply(c))

	assert.Equal(t, map[string]any{"k": "v", "l": []any{"a", "b"}, "m": map[string]any{"x": 1, "y": 2}}, c.Deps)
	assert.Equal(t, msgs, c.Messages(), "Apply changed the messages")
	events := c.Log().Events()
	require.Len(t, events, 4, "one message, the deps' change and the two bookkeeping events")
	assert.Equal(t, EventDepsUpdate, events[1].Type, "the deps operations are recorded first, in order")
	assert.Equal(t, map[string]any{DataOps: []any{ // a key merged into is recorded by its value, last
		map[string]any{"op": "set", "key": "k", "value": "v"},
		map[string]any{"op": "append", "key": "l", "value": "b"},
		map[string]any{"op": "set", "key": "m", "value": map[string]any{"x": 1, "y": 2}},
	}}, events[1].Data)
	deps, err := c.Log().Deps(int64(c.Log().Len()))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"k": "v", "l": []any{"b"}, "m": map[string]any{"x": 1, "y": 2}}, deps,
		"the deps given to NewContext are recorded by the first save, not before")
	events = events[1:]
	assert.Equal(t, EventToolCall, events[1].Type)
	assert.Equal(t, map[string]any{"name": "first"}, events[1].Data)
	assert.Equal(t, EventStepEnd, events[2].Type)
	assert.Equal(t, map[string]any{"n": 2}, events[2].Data)

	warnings := rec.Matching("ContextUpdate.Apply")
	require.Len(t, warnings, 2, "one warning per refused event: %q", warnings)
	assert.Contains(t, warnings[0], "WARN")
	assert.Contains(t, warnings[0], string(EventUserMessage))
	assert.Contains(t, warnings[1], "no_such_type")

	// The events logged do not alias the update.
	events[1].Data["name"] = "changed"
	assert.Equal(t, "first", u.LogEvents()[0].Data["name"])
}

func TestApplyFailureLeavesContextUnchanged(t *testing.T) {
	rec := &LogRecorder{}
	c := NewContext(
		WithDeps(map[string]any{"l": reftest.Spare(4, 1), "m": map[string]any{"n": map[string]any{"a": 1}}, "s": "text"}),
		WithLogger(slog.New(rec)),
	)
	require.NoError(t, c.AddMessage(UserMessage("hi")))
	require.NoError(t, c.LogEvent(EventTurnStart, nil))
	deps := reftest.Snapshot(c.Deps)
	depsMap := c.Deps
	msgs := c.Messages()
	events := c.Log().Events()

	u := NewContextUpdate().
		Append("l", 2).
		Merge("m", map[string]any{"n": map[string]any{"b": 2}}).
		Set("new", 1).
		LogEvent(EventToolCall, map[string]any{"name": "x"}).
		Append("s", "boom")
	err := u.Apply(c)
	require.ErrorIs(t, err, ErrTypeMismatch)
	assert.Contains(t, err.Error(), `"s"`)

	assert.Equal(t, deps, reftest.Snapshot(c.Deps))
	assert.Equal(t, reflect.ValueOf(depsMap).Pointer(), reflect.ValueOf(c.Deps).Pointer(), "Apply replaced the deps map on failure")
	assert.Equal(t, msgs, c.Messages())
	assert.Equal(t, events, c.Log().Events())
	assert.Empty(t, rec.Matching(""))
}

func TestApplyEmptyUpdate(t *testing.T) {
	c := NewContext()
	c.Deps = nil
	require.NoError(t, ContextUpdate{}.Apply(c))
	assert.Nil(t, c.Deps)
	assert.Equal(t, 0, c.Log().Len())

	// A zero Context works too.
	var z Context
	require.NoError(t, NewContextUpdate().Set("a", 1).LogEvent(EventTurnEnd, nil).Apply(&z))
	assert.Equal(t, map[string]any{"a": 1}, z.Deps)
	assert.Equal(t, 2, z.Log().Len(), "the deps' change and the event")
}

func TestApplyToRunContext(t *testing.T) {
	rec := &LogRecorder{}
	policy := SandboxPolicy{Mode: SandboxWorkspaceWrite, WritableRoots: []string{"/w"}}
	rc := NewRunContext(map[string]any{"l": reftest.Spare(3, "a"), "m": map[string]any{"x": 1}},
		WithRetry(2), WithRunUsage(Usage{Requests: 3}), WithSandbox(policy), WithRunLogger(slog.New(rec)))
	before := reftest.Snapshot(rc.Deps)
	beforeRC := rc
	sandbox := *rc.Sandbox

	u := NewContextUpdate().
		LogEvent(EventToolCall, map[string]any{"name": "a"}).
		Append("l", "b").
		LogEvent(EventStepEnd, nil).
		Merge("m", map[string]any{"y": 2}).
		LogEvent(EventUserMessage, nil)
	got, err := u.ApplyToRunContext(rc)
	require.NoError(t, err)

	assert.Equal(t, map[string]any{"l": []any{"a", "b"}, "m": map[string]any{"x": 1, "y": 2}}, got.Deps)
	assert.Equal(t, 2, got.Retry)
	assert.Equal(t, Usage{Requests: 3}, got.Usage)
	require.NotNil(t, got.Sandbox)
	assert.Equal(t, policy, *got.Sandbox)
	assert.NotSame(t, rc.Sandbox, got.Sandbox, "the returned run context shares the sandbox policy")

	// The input is unchanged.
	assert.Equal(t, before, reftest.Snapshot(rc.Deps))
	assert.Equal(t, beforeRC.Retry, rc.Retry)
	assert.Same(t, beforeRC.Sandbox, rc.Sandbox)
	assert.Equal(t, sandbox, *rc.Sandbox)

	warnings := rec.Matching("ApplyToRunContext")
	require.Len(t, warnings, 1, "exactly one warning for all the dropped events: %q", warnings)
	for _, typ := range []EventType{EventToolCall, EventStepEnd, EventUserMessage} {
		assert.Contains(t, warnings[0], string(typ))
	}
	assert.Contains(t, warnings[0], "WARN")

	// No events: no warning.
	_, err = NewContextUpdate().Set("a", 1).ApplyToRunContext(rc)
	require.NoError(t, err)
	assert.Len(t, rec.Matching("ApplyToRunContext"), 1)

	// Failure: the error, and the input back unchanged; no warning either.
	failed, err := NewContextUpdate().LogEvent(EventTurnEnd, nil).Append("m", 1).ApplyToRunContext(rc)
	require.ErrorIs(t, err, ErrTypeMismatch)
	assert.Equal(t, before, reftest.Snapshot(failed.Deps))
	assert.Equal(t, before, reftest.Snapshot(rc.Deps))
	assert.Len(t, rec.Matching("ApplyToRunContext"), 1)

	// A zero RunContext works.
	z, err := NewContextUpdate().Set("a", 1).ApplyToRunContext(RunContext{})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": 1}, z.Deps)
	assert.Nil(t, z.Sandbox)
}

func TestCombine(t *testing.T) {
	a := NewContextUpdate().Append("l", "a1").Set("k", "a")
	b := NewContextUpdate().Append("l", "b1").LogEvent(EventToolCall, map[string]any{"id": "b"})
	c := NewContextUpdate().Delete("k").Append("l", "c1").Append("l", "c2")

	all := Combine(a, b, c)
	assert.Equal(t, a.Len()+b.Len()+c.Len(), all.Len())
	assert.Equal(t, append(append(a.Operations(), b.Operations()...), c.Operations()...), all.Operations())
	got, err := all.ToDeps(nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"l": []any{"a1", "b1", "c1", "c2"}}, got)

	rev, err := Combine(c, b, a).ToDeps(nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"l": []any{"c1", "c2", "b1", "a1"}, "k": "a"}, rev)

	// Empties.
	assert.True(t, Combine().Empty())
	assert.True(t, Combine(ContextUpdate{}, NewContextUpdate()).Empty())
	assert.Equal(t, b.Operations(), Combine(ContextUpdate{}, b, ContextUpdate{}).Operations())

	// Building on a combination leaves its parts alone, and the parts
	// built on afterwards leave the combination alone.
	aOps, bOps := a.Operations(), b.Operations()
	allOps := all.Operations()
	_ = all.Set("k", "later")
	_ = Combine(a, c).Append("l", "later")
	_ = a.Set("k", "later")
	assert.Equal(t, aOps, a.Operations())
	assert.Equal(t, bOps, b.Operations())
	assert.Equal(t, allOps, all.Operations())

	// Combining an update with itself repeats it.
	twice, err := Combine(a, a).ToDeps(nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"l": []any{"a1", "a1"}, "k": "a"}, twice)
}

// depOf reads key from deps with Dep[T].
func depOf[T any](deps map[string]any, key string) func() (any, bool) {
	return func() (any, bool) { return Dep[T](deps, key) }
}

func TestDep(t *testing.T) {
	deps := map[string]any{
		"int": 7, "float2": 2.0, "float2.5": 2.5, "num": json.Number("42"), "numf": json.Number("3.0"),
		"numfrac": json.Number("3.5"), "numhuge": json.Number("1e400"), "numneg": json.Number("-7"), "int64": int64(9),
		"big": 300, "neg": -1, "maxint64": int64(math.MaxInt64), "hugef": 1e20, "huge": 1e30, "nan": math.NaN(),
		"u64": uint64(300), "u64big": uint64(math.MaxUint64), "fneg": -3.0, "i8": int8(-4), "f32": float32(1.5), "tenth": 0.1,
		"strs": []any{"a", "b"}, "mixed": []any{"a", 1}, "nums": []any{1.0, json.Number("2"), 3}, "typed": []string{"x"},
		"str": "hello", "nil": nil, "mode": "read_only", "map": map[string]any{"a": 1},
	}
	type count int
	for i, tc := range []struct {
		got  func() (any, bool)
		want any
		ok   bool
	}{
		{depOf[int](deps, "int"), 7, true}, {depOf[int](deps, "float2"), 2, true}, {depOf[int](deps, "num"), 42, true},
		{depOf[int](deps, "numf"), 3, true}, {depOf[int](deps, "int64"), 9, true}, {depOf[int](deps, "numneg"), -7, true},
		{depOf[int](deps, "u64"), 300, true}, {depOf[int](deps, "float2.5"), 0, false}, {depOf[int](deps, "numfrac"), 0, false},
		{depOf[int](deps, "numhuge"), 0, false}, {depOf[int](deps, "hugef"), 0, false}, {depOf[int](deps, "nan"), 0, false},
		{depOf[int](deps, "str"), 0, false}, {depOf[int](deps, "nil"), 0, false}, {depOf[int](deps, "missing"), 0, false},
		{depOf[int](deps, "strs"), 0, false}, {depOf[int](deps, "f32"), 0, false}, {depOf[int](nil, "int"), 0, false},
		{depOf[int8](deps, "big"), int8(0), false}, {depOf[int8](deps, "int"), int8(7), true}, {depOf[int64](deps, "int"), int64(7), true},
		{depOf[int64](deps, "u64big"), int64(0), false}, {depOf[count](deps, "float2"), count(2), true},
		{depOf[uint16](deps, "big"), uint16(300), true}, {depOf[uint16](deps, "u64"), uint16(300), true}, {depOf[uint8](deps, "u64"), uint8(0), false},
		{depOf[uint](deps, "neg"), uint(0), false}, {depOf[uint64](deps, "maxint64"), uint64(math.MaxInt64), true},
		{depOf[uint](deps, "float2"), uint(2), true}, {depOf[uint](deps, "fneg"), uint(0), false}, {depOf[uint](deps, "float2.5"), uint(0), false},
		{depOf[uint64](deps, "huge"), uint64(0), false}, {depOf[uint32](deps, "i8"), uint32(0), false}, {depOf[uint](deps, "numneg"), uint(0), false},
		{depOf[float64](deps, "int"), 7.0, true}, {depOf[float64](deps, "numfrac"), 3.5, true}, {depOf[float64](deps, "maxint64"), 0.0, false},
		{depOf[float64](deps, "u64"), 300.0, true}, {depOf[float64](deps, "u64big"), 0.0, false}, {depOf[float64](deps, "f32"), 1.5, true},
		{depOf[float32](deps, "float2.5"), float32(2.5), true}, {depOf[float32](deps, "tenth"), float32(0), false}, {depOf[float32](deps, "i8"), float32(-4), true},
		{depOf[[]string](deps, "strs"), []string{"a", "b"}, true}, {depOf[[]string](deps, "mixed"), []string(nil), false},
		{depOf[[]int](deps, "nums"), []int{1, 2, 3}, true}, {depOf[[]string](deps, "typed"), []string{"x"}, true},
		{depOf[[]string](deps, "str"), []string(nil), false}, {depOf[[]any](deps, "strs"), []any{"a", "b"}, true},
		{depOf[string](deps, "str"), "hello", true}, {depOf[string](deps, "int"), "", false}, {depOf[bool](deps, "str"), false, false},
		{depOf[map[string]any](deps, "map"), map[string]any{"a": 1}, true}, {depOf[SandboxMode](deps, "mode"), SandboxMode(""), false},
		{depOf[any](deps, "str"), "hello", true},
	} {
		got, ok := tc.got()
		assert.Equal(t, tc.ok, ok, "case %d", i)
		assert.Equal(t, tc.want, got, "case %d", i)
	}
	s, _ := Dep[[]string](deps, "strs")
	s[0] = "changed"
	assert.Equal(t, "a", deps["strs"].([]any)[0], "the converted slice aliases deps")
}

func TestRunContext(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		rc := NewRunContext(nil)
		assert.NotNil(t, rc.Deps)
		assert.Empty(t, rc.Deps)
		assert.Equal(t, 0, rc.Retry)
		assert.Equal(t, Usage{}, rc.Usage)
		assert.Nil(t, rc.Sandbox)
	})
	t.Run("options", func(t *testing.T) {
		roots := []string{"/a"}
		p := NewSandboxPolicy(SandboxWorkspaceWrite)
		assert.Equal(t, SandboxWorkspaceWrite, p.Mode)
		p.WritableRoots = roots
		rc := NewRunContext(nil, WithRetry(3), WithRunUsage(Usage{InputTokens: 5}), WithSandbox(p))
		assert.Equal(t, 3, rc.Retry)
		assert.Equal(t, Usage{InputTokens: 5}, rc.Usage)
		require.NotNil(t, rc.Sandbox)
		assert.Equal(t, p, *rc.Sandbox)
		roots[0] = "/changed"
		p.Mode = SandboxFullAccess
		assert.Equal(t, SandboxPolicy{Mode: SandboxWorkspaceWrite, WritableRoots: []string{"/a"}}, *rc.Sandbox, "the policy aliases the option's argument")
	})
	t.Run("deps are a deep copy", func(t *testing.T) {
		deps := map[string]any{"m": map[string]any{"a": 1}, "l": []any{map[string]any{"b": 2}}, "t": []string{"x"}, "tm": map[string]int{"n": 1}}
		rc := NewRunContext(deps)
		deps["m"].(map[string]any)["a"] = "changed"
		deps["l"].([]any)[0].(map[string]any)["b"] = "changed"
		deps["t"].([]string)[0] = "changed"
		deps["tm"].(map[string]int)["n"] = 2
		deps["new"] = 1
		assert.Equal(t, map[string]any{"m": map[string]any{"a": 1}, "l": []any{map[string]any{"b": 2}}, "t": []string{"x"}, "tm": map[string]int{"n": 1}}, rc.Deps)
	})
}

func TestSandboxMode(t *testing.T) {
	for _, m := range []SandboxMode{SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess} {
		assert.True(t, m.Valid(), m)
		var got SandboxMode
		require.NoError(t, got.UnmarshalText([]byte(m)))
		assert.Equal(t, m, got)

		b, err := json.Marshal(NewSandboxPolicy(m))
		require.NoError(t, err)
		var p SandboxPolicy
		require.NoError(t, json.Unmarshal(b, &p))
		assert.Equal(t, NewSandboxPolicy(m), p)
	}
	for _, bad := range []string{"", "READ_ONLY", "none", "read-only"} {
		m := SandboxReadOnly
		err := m.UnmarshalText([]byte(bad))
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", bad))
		assert.Equal(t, SandboxReadOnly, m, "a refused mode changed the value")
		assert.False(t, SandboxMode(bad).Valid())
	}
	var p SandboxPolicy
	err := json.Unmarshal([]byte(`{"mode":"yolo"}`), &p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yolo")

	b, err := json.Marshal(SandboxPolicy{Mode: SandboxFullAccess, WritableRoots: []string{"/r"}, Network: true})
	require.NoError(t, err)
	assert.True(t, bytes.Contains(b, []byte(`"mode":"full_access"`)), "%s", b)
}

func TestContextUpdateCopiesNestedTypedContainers(t *testing.T) {
	mk := func() any {
		return map[string]any{
			"ss":   [][]string{{"a"}, nil},
			"mi":   map[string][]int{"n": {1}, "nil": nil},
			"lm":   []map[string]any{{"k": []any{1}}, nil},
			"ma":   map[string]any{"in": map[int][]any{1: {"x", map[string]int{"y": 1}}}},
			"ifs":  []error{ErrOutOfRange, nil},
			"nilm": map[string][]string(nil),
			"arr":  [2]int{1, 2},
		}
	}
	v := mk()
	u := NewContextUpdate().Set("k", v)
	m := v.(map[string]any)
	m["ss"].([][]string)[0][0] = "changed"
	m["mi"].(map[string][]int)["n"][0] = 99
	m["lm"].([]map[string]any)[0]["k"].([]any)[0] = "changed"
	m["ma"].(map[string]any)["in"].(map[int][]any)[1][1].(map[string]int)["y"] = 99
	m["ifs"].([]error)[0] = ErrTypeMismatch
	assert.Equal(t, mk(), u.Operations()[0].Value)
}

// The list the context shows in Deps has no spare capacity, so a caller who
// appends to it gets a list of their own, and the context's next Apply
// writes nowhere the caller can see.
func TestApplyAppendDoesNotShareSpareCapacity(t *testing.T) {
	c := NewContext()
	for i := range 10 {
		require.NoError(t, NewContextUpdate().Append("l", i).Apply(c))
	}
	shown := c.Deps["l"].([]any)
	require.Equal(t, len(shown), cap(shown))
	mine := append(shown, "mine")
	require.NoError(t, NewContextUpdate().Append("l", "ctx").Apply(c))
	require.Equal(t, "mine", mine[10])
	require.Equal(t, "ctx", c.Deps["l"].([]any)[10])
	require.Len(t, shown, 10)

	// A list the caller put back (shorter, same array) is copied, not
	// written through.
	c.Deps["l"] = shown[:5]
	require.NoError(t, NewContextUpdate().Append("l", "after").Apply(c))
	require.Equal(t, []any{0, 1, 2, 3, 4, "after"}, c.Deps["l"])
	require.Equal(t, 5, shown[5])

	// A list of the same length the caller put in its place is appended
	// to, not the context's earlier list.
	c.Deps["l"] = []any{"x", "y", "z", "w", "v", "u"}
	require.NoError(t, NewContextUpdate().Append("l", "next").Apply(c))
	require.Equal(t, []any{"x", "y", "z", "w", "v", "u", "next"}, c.Deps["l"])

	// A clone appends to its own copy.
	d := c.Clone()
	require.NoError(t, NewContextUpdate().Append("l", "clone").Apply(d))
	require.NoError(t, NewContextUpdate().Append("l", "orig").Apply(c))
	require.Equal(t, "clone", d.Deps["l"].([]any)[7])
	require.Equal(t, "orig", c.Deps["l"].([]any)[7])
}

// One WithSandbox option used for many run contexts gives each its own
// policy: a tool changing its copy changes no other, and building the next
// snapshot writes nothing a tool goroutine reads.
func TestWithSandboxReusedGivesIndependentPolicies(t *testing.T) {
	c := NewContext()
	opt := WithSandbox(SandboxPolicy{Mode: SandboxReadOnly, WritableRoots: []string{"/a"}})
	rc1 := c.ToRunContext(opt)
	done := make(chan int)
	go func() { done <- len(rc1.Sandbox.WritableRoots) + len(rc1.Sandbox.Mode) }()
	rc2 := c.ToRunContext(opt)
	<-done
	require.NotSame(t, rc1.Sandbox, rc2.Sandbox)
	rc1.Sandbox.Mode = SandboxFullAccess
	rc1.Sandbox.WritableRoots[0] = "/b"
	require.Equal(t, SandboxReadOnly, rc2.Sandbox.Mode)
	require.Equal(t, []string{"/a"}, rc2.Sandbox.WritableRoots)
	require.Equal(t, []string{"/a"}, c.ToRunContext(opt).Sandbox.WritableRoots)
}
