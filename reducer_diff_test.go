package nous

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The differential test checks ToDeps, Apply, ApplyToRunContext and Combine
// against cuRefReduce, a reducer written to be obviously correct rather
// than fast: it deep-copies everything at every step.
//
// It runs a fixed seed and one random seed, which it prints; -nous.seed=N
// replays one seed. Another test file of the package may define the same
// flag: whichever is initialized first registers it, the other reuses it.
var _ = cuSeedFlag()

const cuSeedFlagName = "nous.seed"

func cuSeedFlag() bool {
	if flag.Lookup(cuSeedFlagName) == nil {
		flag.Uint64(cuSeedFlagName, 0, "replay the random tests with this seed (0: a fixed seed and a random one)")
	}
	return true
}

// cuSeeds returns the seeds to run: the one given by -nous.seed, or a fixed
// seed and a random one.
func cuSeeds(t testing.TB) []uint64 {
	if f := flag.Lookup(cuSeedFlagName); f != nil {
		s := f.Value.String()
		if n, err := strconv.ParseUint(s, 10, 64); err == nil && n != 0 {
			return []uint64{n}
		} else if n, err := strconv.ParseInt(s, 10, 64); err == nil && n != 0 {
			return []uint64{uint64(n)}
		}
	}
	random := rand.Uint64()
	t.Logf("random seed %d (replay: go test -run %s -%s=%d .)", random, t.Name(), cuSeedFlagName, random)
	return []uint64{1, random}
}

// cuRefReduce is the reference reducer. It returns the deps after ops, or
// the index of the operation that fails (and nil).
func cuRefReduce(initial map[string]any, ops []Operation) (map[string]any, int) {
	deps, _ := cuDeepCopy(initial).(map[string]any)
	if deps == nil {
		deps = map[string]any{}
	}
	for i, op := range ops {
		deps, _ = cuDeepCopy(deps).(map[string]any) // every step on a fresh copy
		switch op.Kind {
		case OpSet:
			deps[op.Key] = cuDeepCopy(op.Value)
		case OpDelete:
			delete(deps, op.Key)
		case OpMerge:
			src, _ := op.Value.(map[string]any)
			deps[op.Key] = cuRefMerge(deps[op.Key], src)
		case OpAppend:
			item := cuDeepCopy(op.Value)
			cur, present := deps[op.Key]
			if !present || cur == nil {
				deps[op.Key] = []any{item}
				continue
			}
			if l, ok := cur.([]any); ok {
				nl := make([]any, len(l)+1)
				copy(nl, l)
				nl[len(l)] = item
				deps[op.Key] = nl
				continue
			}
			rv := reflect.ValueOf(cur)
			if rv.Kind() != reflect.Slice {
				return nil, i
			}
			elem := rv.Type().Elem()
			var iv reflect.Value
			if item == nil {
				switch elem.Kind() {
				case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
					iv = reflect.Zero(elem)
				default:
					return nil, i
				}
			} else {
				iv = reflect.ValueOf(item)
				if !iv.Type().AssignableTo(elem) {
					return nil, i
				}
			}
			ns := reflect.MakeSlice(rv.Type(), rv.Len()+1, rv.Len()+1)
			reflect.Copy(ns, rv)
			ns.Index(rv.Len()).Set(iv)
			deps[op.Key] = ns.Interface()
		case OpLogEvent:
		default:
			panic("unknown operation " + string(op.Kind))
		}
	}
	return deps, -1
}

// cuRefMerge returns a new value: src deep merged into dst.
func cuRefMerge(dst any, src map[string]any) any {
	d, ok := dst.(map[string]any)
	if !ok || d == nil {
		out, _ := cuDeepCopy(src).(map[string]any)
		if out == nil {
			out = map[string]any{}
		}
		return out
	}
	out := cuDeepCopy(d).(map[string]any)
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := out[k].(map[string]any); ok {
				out[k] = cuRefMerge(dv, sv)
				continue
			}
		}
		out[k] = cuDeepCopy(v)
	}
	return out
}

// cuBuild builds an update from ops with the builder methods.
func cuBuild(ops []Operation) ContextUpdate {
	u := NewContextUpdate()
	for _, op := range ops {
		switch op.Kind {
		case OpSet:
			u = u.Set(op.Key, op.Value)
		case OpDelete:
			u = u.Delete(op.Key)
		case OpMerge:
			m, _ := op.Value.(map[string]any)
			u = u.Merge(op.Key, m)
		case OpAppend:
			u = u.Append(op.Key, op.Value)
		case OpLogEvent:
			u = u.LogEvent(op.EventType, op.Data)
		}
	}
	return u
}

// cuCheck runs ops over initial through every path of the package and
// compares each with the reference; split is where ops are cut in two for
// Combine. It returns what disagreed, or nil.
func cuCheck(initial map[string]any, ops []Operation, split int) error {
	u := cuBuild(ops)
	if u.Len() != len(ops) {
		return fmt.Errorf("Len = %d, want %d", u.Len(), len(ops))
	}
	opsBefore := cuDeepCopy(u.Operations())
	if !reflect.DeepEqual(opsBefore, cuNormalOps(ops)) {
		return fmt.Errorf("Operations() = %#v, want %#v", opsBefore, ops)
	}
	before := cuSnapshot(initial)
	want, failAt := cuRefReduce(initial, ops)

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
	if !reflect.DeepEqual(before, cuSnapshot(initial)) {
		return fmt.Errorf("ToDeps modified initial:\n before %#v\n after  %#v", before, cuSnapshot(initial))
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
	combined, err := Combine(cuBuild(ops[:split]), cuBuild(ops[split:])).ToDeps(initial)
	if err := check("Combine", combined, err); err != nil {
		return err
	}

	// Apply, onto a context of its own.
	ctxDeps, _ := cuDeepCopy(initial).(map[string]any)
	ctx := &Context{Deps: ctxDeps, Logger: slog.New(slog.DiscardHandler)}
	ctxBefore := cuSnapshot(ctx.Deps)
	err = u.Apply(ctx)
	if failAt >= 0 {
		if err := check("Apply", nil, err); err != nil {
			return err
		}
		if !reflect.DeepEqual(ctxBefore, cuSnapshot(ctx.Deps)) || ctx.Log().Len() != 0 {
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
		events := 0
		for _, op := range ops {
			if op.Kind == OpLogEvent && op.EventType.IsBookkeeping() {
				events++
			}
		}
		if ctx.Log().Len() != events {
			return fmt.Errorf("Apply logged %d events, want %d", ctx.Log().Len(), events)
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
	} else if err := check("ApplyToRunContext", nil, err); err != nil {
		return err
	}

	if !reflect.DeepEqual(before, cuSnapshot(initial)) {
		return fmt.Errorf("a reduction modified initial:\n before %#v\n after  %#v", before, cuSnapshot(initial))
	}
	if !reflect.DeepEqual(opsBefore, u.Operations()) {
		return fmt.Errorf("a reduction modified the update")
	}

	// The result of a reduction shares nothing with the update: scribbling
	// over all of it (and over the copy of initial it shares parts with)
	// leaves the update as it was.
	if failAt < 0 {
		scratch, _ := cuDeepCopy(initial).(map[string]any)
		got, _ := u.ToDeps(scratch)
		cuScribble(reflect.ValueOf(got))
		if !reflect.DeepEqual(opsBefore, u.Operations()) {
			return fmt.Errorf("writing into ToDeps' result modified the update")
		}
	}
	return nil
}

// cuScribble overwrites every element of every map and slice reachable
// from v, in place.
func cuScribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			cuScribble(v.Elem())
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			cuScribble(e)
			if v.Type().Elem().Kind() == reflect.Interface {
				v.SetMapIndex(k, reflect.ValueOf("scribbled"))
			} else {
				v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
			}
		}
		v.SetMapIndex(reflect.ValueOf("scribbled"), reflect.Zero(v.Type().Elem()))
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			cuScribble(e)
			if e.Kind() == reflect.Interface {
				e.Set(reflect.ValueOf("scribbled"))
			} else {
				e.Set(reflect.Zero(e.Type()))
			}
		}
	}
}

// cuNormalOps returns ops as Operations() reports them: a merge of nil is a
// nil map[string]any.
func cuNormalOps(ops []Operation) []Operation {
	out := make([]Operation, len(ops))
	for i, op := range ops {
		if op.Kind == OpMerge {
			m, _ := op.Value.(map[string]any)
			op.Value = m
		}
		out[i] = op
	}
	return out
}

// cuGen generates random deps and operations.
type cuGen struct {
	r *rand.Rand
}

var (
	cuKeys    = []string{"a", "b", "c", "d"}
	cuSubKeys = []string{"x", "y", "z"}
	cuEvents  = []EventType{EventToolCall, EventTurnStart, EventStepEnd, EventUserMessage}
)

func (g cuGen) key() string    { return cuKeys[g.r.IntN(len(cuKeys))] }
func (g cuGen) subKey() string { return cuSubKeys[g.r.IntN(len(cuSubKeys))] }

// value returns a random value: scalars, nil, lists (some with spare
// capacity), typed slices, nested maps, typed maps.
func (g cuGen) value(depth int) any {
	n := 13
	if depth <= 0 {
		n = 5
	}
	switch g.r.IntN(n) {
	case 0:
		return g.r.IntN(10)
	case 1:
		return "s" + strconv.Itoa(g.r.IntN(10))
	case 2:
		return float64(g.r.IntN(10)) + 0.5
	case 3:
		return g.r.IntN(2) == 0
	case 4:
		return nil
	case 5, 6:
		items := make([]any, g.r.IntN(3))
		for i := range items {
			items[i] = g.value(depth - 1)
		}
		return cuSpare(g.r.IntN(3), items...)
	case 7, 8:
		return g.mapValue(depth - 1)
	case 9:
		s := make([]string, g.r.IntN(3), 4)
		for i := range s {
			s[i] = "t" + strconv.Itoa(i)
		}
		return s
	case 10:
		return []int{g.r.IntN(5)}
	case 11:
		switch g.r.IntN(3) {
		case 0:
			return []string(nil)
		case 1:
			return map[string]any(nil)
		}
		return []any(nil)
	default:
		return map[string]int{"n": g.r.IntN(5)}
	}
}

func (g cuGen) mapValue(depth int) map[string]any {
	m := make(map[string]any)
	for range g.r.IntN(4) {
		if depth > 0 && g.r.IntN(3) == 0 {
			m[g.subKey()] = g.mapValue(depth - 1)
		} else {
			m[g.subKey()] = g.value(depth)
		}
	}
	return m
}

func (g cuGen) initial() map[string]any {
	if g.r.IntN(10) == 0 {
		return nil
	}
	m := map[string]any{}
	for range g.r.IntN(5) {
		m[g.key()] = g.value(3)
	}
	// Sometimes one map reachable from two keys.
	if v, ok := m["a"].(map[string]any); ok && v != nil && g.r.IntN(2) == 0 {
		m["d"] = v
	}
	return m
}

// item returns an item to append at key, usually one the list there
// accepts; state is the reference's deps so far.
func (g cuGen) item(state map[string]any, key string) any {
	if g.r.IntN(10) == 0 {
		return g.value(2)
	}
	switch state[key].(type) {
	case []string:
		return "i" + strconv.Itoa(g.r.IntN(10))
	case []int:
		return g.r.IntN(10)
	}
	return g.value(2)
}

// ops returns a sequence of up to n operations over initial.
func (g cuGen) ops(initial map[string]any, n int) []Operation {
	ops := make([]Operation, 0, n)
	state, _ := cuRefReduce(initial, nil)
	for range n {
		var op Operation
		switch k := g.r.IntN(20); {
		case k < 7:
			key := g.key()
			op = Operation{Kind: OpAppend, Key: key, Value: g.item(state, key)}
		case k < 12:
			var m map[string]any
			if g.r.IntN(15) > 0 {
				m = g.mapValue(3)
			}
			op = Operation{Kind: OpMerge, Key: g.key(), Value: m}
		case k < 15:
			op = Operation{Kind: OpSet, Key: g.key(), Value: g.value(3)}
		case k < 18:
			op = Operation{Kind: OpDelete, Key: g.key()}
		default:
			op = Operation{Kind: OpLogEvent, EventType: cuEvents[g.r.IntN(len(cuEvents))], Data: g.mapValue(1)}
		}
		ops = append(ops, op)
		next, failAt := cuRefReduce(state, []Operation{op})
		if failAt >= 0 {
			return ops // stop at the first failure: the rest could not run
		}
		state = next
	}
	return ops
}

func TestReducerDifferential(t *testing.T) {
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // ApplyToRunContext warns of dropped events
	t.Cleanup(func() { slog.SetDefault(old) })

	for _, seed := range cuSeeds(t) {
		failures, mismatches := 0, 0
		for i := range cases {
			g := cuGen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
			initial := g.initial()
			ops := g.ops(initial, 1+g.r.IntN(40))
			split := g.r.IntN(len(ops) + 1)
			if _, failAt := cuRefReduce(initial, ops); failAt >= 0 {
				mismatches++
			}
			if err := cuCheck(initial, ops, split); err != nil {
				failures++
				t.Errorf("seed %d case %d (replay: go test -run TestReducerDifferential -%s=%d .)\ninitial %#v\nops %#v\n%v",
					seed, i, cuSeedFlagName, seed, initial, ops, err)
				if failures > 3 {
					t.FailNow()
				}
			}
		}
		// The generator must exercise both outcomes.
		if mismatches == 0 || mismatches == cases {
			t.Errorf("seed %d: %d of %d sequences fail: the generator covers only one outcome", seed, mismatches, cases)
		}
	}
}

// TestReducerReferenceIsIndependent makes sure the reference disagrees with
// a reducer that is wrong, so that agreement means something.
func TestReducerReferenceIsIndependent(t *testing.T) {
	ops := []Operation{
		{Kind: OpAppend, Key: "l", Value: 1},
		{Kind: OpAppend, Key: "l", Value: 2},
		{Kind: OpDelete, Key: "l"},
		{Kind: OpAppend, Key: "l", Value: 3},
		{Kind: OpMerge, Key: "m", Value: map[string]any{"n": map[string]any{"b": 2}}},
	}
	got, failAt := cuRefReduce(map[string]any{"m": map[string]any{"n": map[string]any{"a": 1}}}, ops)
	if failAt >= 0 {
		t.Fatalf("reference failed at %d", failAt)
	}
	want := map[string]any{"l": []any{3}, "m": map[string]any{"n": map[string]any{"a": 1, "b": 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reference = %#v, want %#v", got, want)
	}
	if _, failAt := cuRefReduce(map[string]any{"l": []string{"a"}}, []Operation{{Kind: OpAppend, Key: "l", Value: 1}}); failAt != 0 {
		t.Fatalf("reference accepted an int appended onto a []string")
	}
	// A shallow merge is caught.
	wrong := map[string]any{"l": []any{3}, "m": map[string]any{"n": map[string]any{"b": 2}}}
	if reflect.DeepEqual(got, wrong) {
		t.Fatal("the reference cannot tell a shallow merge from a deep one")
	}
	// A spare-capacity write is caught by the snapshot.
	l := cuSpare(2, 1)
	before := cuSnapshot(map[string]any{"l": l})
	_ = append(l, 2)
	if reflect.DeepEqual(before, cuSnapshot(map[string]any{"l": l})) {
		t.Fatal("cuSnapshot does not see writes into spare capacity")
	}
}
