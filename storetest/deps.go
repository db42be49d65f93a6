package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// depsRun is a random run of one session, written by a context and, at
// times, by a second one through the same store, that checks the deps in
// the log: after each step, for every seq, the deps the log folds to as of
// that seq are the deps the context had when the event was appended, as
// the log records them: an update's changes when it applies, a change
// made to Deps directly once a save records it. A secret is never
// recorded.
type depsRun struct {
	t        *testing.T
	r        *rand.Rand
	s        nous.Store
	c        *nous.Context
	recorded map[string]any // the deps as the log records them now, as JSON reads them back
	want     []string       // want[seq-1]: the JSON of the deps as of seq
	trace    []string
}

// secret is the value of the deps' secret key, which no event may hold.
const secret = "sk-deps-in-the-log"

func testDepsInLog(t *testing.T, s nous.Store) {
	seed := reftest.Seed(t)
	runs, steps := 6, 60
	if testing.Short() {
		runs, steps = 2, 40
	}
	for run := range runs {
		r := rand.New(rand.NewPCG(seed, uint64(run)))
		d := &depsRun{t: t, r: r, s: s, recorded: map[string]any{}}
		d.c = nous.NewContext(nous.WithLogger(quiet), nous.WithDeps(map[string]any{"user": "ada", "api_key": secret}))
		d.track()
		for step := range steps {
			d.step(step)
			d.check()
		}
		d.save()
		d.check()
		loaded, err := nous.Load(context.Background(), s, d.c.Log().ID())
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		d.c = loaded
		d.check()
	}
}

// step does one thing at random to the session.
func (d *depsRun) step(step int) {
	ctx := context.Background()
	switch k := d.r.IntN(20); {
	case k < 6:
		u := d.update()
		d.note("update %v", u.Operations())
		if err := u.Apply(d.c); err != nil {
			d.t.Fatalf("%s: %v", d.where(), err)
		}
		if !u.Empty() {
			d.recorded = d.recordedAfter(u)
		}
	case k < 9:
		key, v := d.value()
		d.note("Deps[%s] = %v", key, v)
		if v == nil {
			delete(d.c.Deps, key)
		} else {
			d.c.Deps[key] = v
		}
	case k < 13:
		d.note("message")
		if err := d.c.AddMessage(nous.UserMessage(fmt.Sprint("step ", step))); err != nil {
			d.t.Fatal(err)
		}
	case k < 14 && d.c.Len() > 2:
		d.note("replace")
		if err := d.c.ReplaceMessageRange(0, 1, nous.UserMessage("summary")); err != nil {
			d.t.Fatalf("%s: %v", d.where(), err)
		}
	case k < 16:
		d.save()
	case k < 17:
		d.save()
		d.note("reload")
		loaded, err := nous.Load(ctx, d.s, d.c.Log().ID())
		if err != nil {
			d.t.Fatalf("%s: %v", d.where(), err)
		}
		loaded.Logger = quiet
		loaded.MergeDeps(map[string]any{"api_key": secret}) // as Resume's WithDeps does
		d.c = loaded
	case k < 19:
		d.save()
		d.other()
	default:
		d.note("clone")
		d.c = d.c.Clone()
	}
	d.track()
}

// recordedAfter returns the deps the log records once u applied: its
// operations on what the log recorded, but for the keys it merges into,
// recorded by the values the deps hold now (a merge's value read back from
// JSON may merge otherwise); when its operations do not fold onto what the
// log recorded, the values now of every key it changed.
func (d *depsRun) recordedAfter(u nous.ContextUpdate) map[string]any {
	ops := u.Operations()
	now := written(d.c.Deps)
	byValue := map[string]bool{}
	for _, op := range ops {
		if op.Kind == nous.OpMerge {
			byValue[op.Key] = true
		}
	}
	next, err := u.ToDeps(d.recorded)
	if err != nil {
		next = d.recorded
		for _, op := range ops {
			byValue[op.Key] = op.Kind != nous.OpLogEvent
		}
	}
	next = written(next)
	for k, v := range byValue {
		if !v {
			continue
		}
		if w, ok := now[k]; ok {
			next[k] = w
		} else {
			delete(next, k)
		}
	}
	return next
}

// update returns a random update of one to three operations on the keys
// of the run, the secret's among them.
func (d *depsRun) update() nous.ContextUpdate {
	u := nous.NewContextUpdate()
	for range 1 + d.r.IntN(3) {
		key, v := d.value()
		switch d.r.IntN(5) {
		case 0:
			u = u.Delete(key)
		case 1:
			u = u.Merge("cfg", map[string]any{key: v})
		case 2:
			if v == secret { // a secret's value is one by its key only
				v = "not a secret"
			}
			if _, isList := d.c.Deps["list"].([]any); isList || d.c.Deps["list"] == nil {
				u = u.Append("list", v)
			}
		default:
			if v != nil {
				u = u.Set(key, v)
			}
		}
	}
	if d.r.IntN(4) == 0 {
		u = u.LogEvent(nous.EventTurnEnd, nil)
	}
	return u
}

// value returns a key of the run and a value for it, nil for none.
func (d *depsRun) value() (string, any) {
	keys := []string{"user", "n", "cfg", "tags", "api_key"}
	key := keys[d.r.IntN(len(keys))]
	if key == "api_key" {
		return key, secret
	}
	switch d.r.IntN(6) {
	case 0:
		return key, nil
	case 1:
		return key, d.r.IntN(100)
	case 2:
		return key, float64(d.r.IntN(10)) / 2 // whole or not: 1.0 reads back as 1
	case 3:
		return key, []any{"a", d.r.IntN(3)}
	case 4:
		return key, map[string]any{"x": d.r.IntN(3), "y": []any{true}}
	}
	return key, fmt.Sprint("v", d.r.IntN(9))
}

// save saves the session; the deps, direct changes included, are then
// what the log records.
func (d *depsRun) save() {
	d.note("save")
	if err := d.c.Save(context.Background(), d.s); err != nil {
		d.t.Fatalf("%s: %v", d.where(), err)
	}
	d.recorded = written(d.c.Deps)
	d.track()
}

// other has a second writer add a message, change the deps directly and
// save (its save records the change), and the run's context refresh.
func (d *depsRun) other() {
	ctx := context.Background()
	d.note("another writer")
	o, err := nous.Load(ctx, d.s, d.c.Log().ID())
	if err != nil {
		d.t.Fatalf("%s: %v", d.where(), err)
	}
	o.Logger = quiet
	if err := o.AddMessage(nous.UserMessage("from the other writer")); err != nil {
		d.t.Fatal(err)
	}
	o.Deps["n"] = d.r.IntN(1000)
	o.Deps["tags"] = []any{"other"}
	if err := o.Save(ctx, d.s); err != nil {
		d.t.Fatalf("%s: the other writer: %v", d.where(), err)
	}
	if err := d.c.Refresh(ctx, d.s); err != nil {
		d.t.Fatalf("%s: refresh: %v", d.where(), err)
	}
	d.track() // the message, appended before the other writer's save, and the batch's events
	if e, ok := d.c.Log().Event(int64(d.c.Log().Len()) - 1); !ok || e.Type != nous.EventDepsUpdate {
		d.t.Fatalf("%s: the other writer's save recorded no change of the deps: %v", d.where(), e.Type)
	}
	d.recorded = written(o.Deps)
	d.want = d.want[:len(d.want)-2] // the deps_update and the batch event: the new deps
	d.track()
}

// track records, for the events appended since it last ran, the deps the
// log records now.
func (d *depsRun) track() {
	b, err := json.Marshal(d.recorded)
	if err != nil {
		d.t.Fatal(err)
	}
	for len(d.want) < d.c.Log().Len() {
		d.want = append(d.want, string(b))
	}
	d.want = d.want[:d.c.Log().Len()] // a reload or a refresh may bring the log's own
}

// check compares the deps of the log as of every seq with the run's.
func (d *depsRun) check() {
	l := d.c.Log()
	for seq := range int64(l.Len()) + 1 {
		deps, err := l.Deps(seq)
		if err != nil {
			d.t.Fatalf("%s: Deps(%d): %v", d.where(), seq, err)
		}
		got, _ := json.Marshal(deps)
		want := "{}"
		if seq > 0 {
			want = d.want[seq-1]
		}
		if string(got) != want {
			d.t.Fatalf("%s: the deps as of seq %d are %s, want %s", d.where(), seq, got, want)
		}
		if strings.Contains(string(got), secret) {
			d.t.Fatalf("%s: the log records the secret as of seq %d", d.where(), seq)
		}
	}
}

func (d *depsRun) note(format string, args ...any) {
	d.trace = append(d.trace, fmt.Sprintf(format, args...))
}

func (d *depsRun) where() string {
	n := len(d.trace)
	return fmt.Sprintf("after %q", d.trace[max(0, n-8):])
}

// written returns deps as the log records them: without the keys that
// name secrets, at any depth, as JSON reads them back.
func written(deps map[string]any) map[string]any {
	b, err := json.Marshal(deps)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	if out == nil {
		out = map[string]any{}
	}
	redact(out)
	return out
}

// redact deletes the keys that name secrets from v, at any depth.
func redact(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if nous.IsSecretKey(k) {
				delete(x, k)
				continue
			}
			redact(e)
		}
	case []any:
		for _, e := range x {
			redact(e)
		}
	}
}
