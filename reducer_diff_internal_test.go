package nous

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nous-go/nous/internal/jsonx"
	"github.com/nous-go/nous/internal/reftest"
)

// The differential tests check ToDeps, Apply, ApplyToRunContext and Combine
// against reftest.Reduce, a reducer written to be obviously right rather
// than fast, on programs of random operations: TestReducerDifferential
// draws them from the seed (see Seed), FuzzToDeps decodes them from its
// input, both through the one generator reftest.Gen.

// reducerGen returns the generator of the differential tests.
func reducerGen(src reftest.Source) *reftest.Gen {
	return &reftest.Gen{Src: src, Keys: []string{"a", "b", "c", "d"}, SubKeys: []string{"x", "y", "z"},
		Events: []string{"tool_call", "turn_start", "step_end", "user_message"}}
}

// operations returns ops as Operations reports them.
func operations(ops []reftest.Op) []Operation {
	out := make([]Operation, len(ops))
	for i, op := range ops {
		out[i] = Operation{Kind: OpKind(op.Kind), Key: op.Key, Value: op.Value, EventType: EventType(op.Event), Data: op.Data}
		if op.Kind == reftest.Merge {
			m, _ := op.Value.(map[string]any) // a merge of nil is a nil map[string]any
			out[i].Value = m
		}
	}
	return out
}

// checkReduction runs ops over initial through every path of the package
// and compares each with the reference; split is where ops are cut in two
// for Combine. It returns what disagreed, or nil.
func checkReduction(initial map[string]any, ops []reftest.Op, split int) error {
	u := BuildForTest(ops)
	if u.Len() != len(ops) {
		return fmt.Errorf("Len = %d, want %d", u.Len(), len(ops))
	}
	opsBefore := reftest.Copy(u.Operations())
	if !reflect.DeepEqual(opsBefore, operations(ops)) {
		return fmt.Errorf("Operations() = %#v, want %#v", opsBefore, ops)
	}
	before := reftest.Snapshot(initial)
	want, failAt := reftest.Reduce(initial, ops)

	check := func(path string, got map[string]any, err error) error {
		if failAt >= 0 {
			if !errors.Is(err, ErrTypeMismatch) {
				return fmt.Errorf("%s: err = %v, want ErrTypeMismatch at operation %d", path, err, failAt)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("operation %d ", failAt)) || !strings.Contains(msg, strconv.Quote(ops[failAt].Key)) {
				return fmt.Errorf("%s: error %q does not name operation %d and key %q", path, msg, failAt, ops[failAt].Key)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: unexpected error %v", path, err)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s:\n got  %#v\n want %#v", path, got, want)
		}
		return nil
	}

	got, err := u.ToDeps(initial)
	if !reflect.DeepEqual(before, reftest.Snapshot(initial)) {
		return fmt.Errorf("ToDeps modified initial:\n before %#v\n after  %#v", before, reftest.Snapshot(initial))
	}
	if err := check("ToDeps", got, err); err != nil {
		return err
	}
	if len(got) > 0 && initial != nil && reflect.ValueOf(got).Pointer() == reflect.ValueOf(initial).Pointer() {
		return fmt.Errorf("ToDeps returned initial itself")
	}

	// A second reduction of the same update is equal and independent.
	again, err := u.ToDeps(initial)
	if err := check("ToDeps again", again, err); err != nil {
		return err
	}

	// The same operations in two updates, combined.
	combined, err := Combine(BuildForTest(ops[:split]), BuildForTest(ops[split:])).ToDeps(initial)
	if err := check("Combine", combined, err); err != nil {
		return err
	}

	// Apply, onto a context of its own.
	ctxDeps, _ := reftest.Copy(initial).(map[string]any)
	ctx := &Context{Deps: ctxDeps, Logger: slog.New(slog.DiscardHandler)}
	ctxBefore := reftest.Snapshot(ctx.Deps)
	err = u.Apply(ctx)
	if failAt >= 0 {
		if err := check("Apply", nil, err); err != nil {
			return err
		}
		if !reflect.DeepEqual(ctxBefore, reftest.Snapshot(ctx.Deps)) || ctx.Log().Len() != 0 {
			return fmt.Errorf("a failed Apply changed the context: deps %#v, %d events", ctx.Deps, ctx.Log().Len())
		}
	} else {
		gotDeps := ctx.Deps
		if gotDeps == nil {
			gotDeps = map[string]any{}
		}
		if err := check("Apply", gotDeps, err); err != nil {
			return err
		}
		events, depsOps := 0, 0
		for _, op := range ops {
			switch {
			case op.Kind == reftest.Log && reftest.Bookkeeping[op.Event]:
				events++
			case op.Kind != reftest.Log:
				depsOps++
			}
		}
		merged := false
		for _, op := range ops {
			merged = merged || op.Kind == reftest.Merge
		}
		if e, _ := ctx.Log().Event(1); depsOps > 0 && e.Type == EventDepsUpdate {
			// One deps_update event records them, first: the operations
			// themselves, or, for an update that merges, the values of
			// the keys it changed.
			events++
			if recorded, _ := e.Data[DataOps].([]any); !merged && len(recorded) != depsOps {
				return fmt.Errorf("Apply recorded its %d deps operations as %s %v", depsOps, e.Type, e.Data)
			}
		} else if depsOps > 0 && !merged {
			return fmt.Errorf("Apply recorded its %d deps operations as %s %v", depsOps, e.Type, e.Data)
		}
		if ctx.Log().Len() != events {
			return fmt.Errorf("Apply logged %d events, want %d", ctx.Log().Len(), events)
		}
		// What the log records, folded onto the deps as written before,
		// is the deps as written after.
		written, _ := asWritten(newSanitizer(nil).deps(initial))
		before, _ := written.(map[string]any)
		folded, err := foldDeps(before, nil, &ctx.log, 0, int64(ctx.Log().Len()))
		after, _ := asWritten(newSanitizer(nil).deps(gotDeps))
		if err != nil || !jsonx.Equal(folded, after) {
			return fmt.Errorf("the deps the log records, %#v (%v), are not the deps written, %#v", folded, err, after)
		}
	}

	// ApplyToRunContext.
	rc := RunContext{Deps: initial, Retry: 1}
	out, err := u.ApplyToRunContext(rc)
	if failAt < 0 {
		if err := check("ApplyToRunContext", out.Deps, err); err != nil {
			return err
		}
		if out.Retry != 1 {
			return fmt.Errorf("ApplyToRunContext lost Retry")
		}
		reftest.Scribble(out.Deps) // the caller's: it shares nothing with rc
	} else if err := check("ApplyToRunContext", nil, err); err != nil {
		return err
	}

	if !reflect.DeepEqual(before, reftest.Snapshot(initial)) {
		return fmt.Errorf("a reduction modified initial:\n before %#v\n after  %#v", before, reftest.Snapshot(initial))
	}
	if !reflect.DeepEqual(opsBefore, u.Operations()) {
		return fmt.Errorf("a reduction modified the update")
	}

	// The result of a reduction shares nothing with the update: scribbling
	// over all of it (and over the copy of initial it shares parts with)
	// leaves the update as it was.
	if failAt < 0 {
		scratch, _ := reftest.Copy(initial).(map[string]any)
		got, _ := u.ToDeps(scratch)
		reftest.Scribble(got)
		if !reflect.DeepEqual(opsBefore, u.Operations()) {
			return fmt.Errorf("writing into ToDeps' result modified the update")
		}
	}
	return nil
}

func TestReducerDifferential(t *testing.T) {
	cases := 6000
	switch {
	case Long():
		cases = 60000
	case testing.Short():
		cases = 1000
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // ApplyToRunContext warns of dropped events
	t.Cleanup(func() { slog.SetDefault(old) })

	seed := Seed(t)
	failures, mismatches := 0, 0
	for i := range cases {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		initial, ops, split := reducerGen(r).Program(1 + r.IntN(40))
		if _, failAt := reftest.Reduce(initial, ops); failAt >= 0 {
			mismatches++
		}
		if err := checkReduction(initial, ops, split); err != nil {
			failures++
			t.Errorf("case %d\ninitial %#v\nops %v\n%v", i, initial, ops, err)
			if failures > 3 {
				t.FailNow()
			}
		}
	}
	// The generator must exercise both outcomes.
	if mismatches == 0 || mismatches == cases {
		t.Errorf("%d of %d sequences fail: the generator covers only one outcome", mismatches, cases)
	}
}

// FuzzToDeps decodes a program from its input and checks every way of
// reducing it against the reference: no panic, the same result or the same
// failure, initial and the update unchanged.
func FuzzToDeps(f *testing.F) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // ApplyToRunContext warns of dropped events
	f.Cleanup(func() { slog.SetDefault(old) })

	// Seeds that Gen.Program reads as the shapes of the table tests (each
	// byte is one choice).
	for _, seed := range [][]byte{
		{0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 15, 0, 0, 0, 0, 3, 0, 2},                  // nil initial: append 1, append 2, delete, append 3
		{1, 1, 1, 1, 7, 0, 0, 1, 3, 0, 1, 0},                                           // append onto a string: mismatch
		{1, 1, 2, 9, 2, 1, 0, 2, 0, 5, 1, 4, 0, 2, 0, 5, 1, 6, 1},                      // appends onto a []string with spare capacity
		{1, 1, 0, 7, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 7, 0, 1, 1, 0, 0, 1, 1, 2, 0, 2, 0}, // merge into a nested map
		{1, 1, 0, 7, 1, 1, 0, 0, 1, 0, 1, 7, 3, 1, 1, 1, 1, 0, 2, 12, 0, 1, 3, 2},      // one map under two keys, merged into through one
		{0, 2, 18, 3, 0, 19, 0, 1, 0, 0, 0, 7, 1, 0, 1},                                // log events, a merge of nil
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := reftest.Bytes(data)
		initial, ops, split := reducerGen(&src).Program(64)
		if err := checkReduction(initial, ops, split); err != nil {
			t.Fatalf("initial %#v\nops %v\nsplit %d\n%v", initial, ops, split, err)
		}
	})
}

// TestReducerReferenceIsIndependent makes sure the reference disagrees with
// a reducer that is wrong, so that agreement means something.
func TestReducerReferenceIsIndependent(t *testing.T) {
	ops := []reftest.Op{
		{Kind: reftest.Append, Key: "l", Value: 1},
		{Kind: reftest.Append, Key: "l", Value: 2},
		{Kind: reftest.Delete, Key: "l"},
		{Kind: reftest.Append, Key: "l", Value: 3},
		{Kind: reftest.Merge, Key: "m", Value: map[string]any{"n": map[string]any{"b": 2}}},
	}
	got, failAt := reftest.Reduce(map[string]any{"m": map[string]any{"n": map[string]any{"a": 1}}}, ops)
	if failAt >= 0 {
		t.Fatalf("reference failed at %d", failAt)
	}
	want := map[string]any{"l": []any{3}, "m": map[string]any{"n": map[string]any{"a": 1, "b": 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reference = %#v, want %#v", got, want)
	}
	if _, failAt := reftest.Reduce(map[string]any{"l": []string{"a"}}, []reftest.Op{{Kind: reftest.Append, Key: "l", Value: 1}}); failAt != 0 {
		t.Fatalf("reference accepted an int appended onto a []string")
	}
	// A shallow merge is caught.
	wrong := map[string]any{"l": []any{3}, "m": map[string]any{"n": map[string]any{"b": 2}}}
	if reflect.DeepEqual(got, wrong) {
		t.Fatal("the reference cannot tell a shallow merge from a deep one")
	}
	// A spare-capacity write is caught by the snapshot.
	l := reftest.Spare(2, 1)
	before := reftest.Snapshot(map[string]any{"l": l})
	_ = append(l, 2)
	if reflect.DeepEqual(before, reftest.Snapshot(map[string]any{"l": l})) {
		t.Fatal("Snapshot does not see writes into spare capacity")
	}
}
