package nous

import (
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/nous-go/nous/internal/reftest"
)

// TestRoundTripDifferential applies random updates to a context before and
// after a save and a load, and compares what the two contexts save: an
// update must not give a different result because the context was saved in
// between (typed maps and slices become generic ones on the way).
func TestRoundTripDifferential(t *testing.T) {
	seed := Seed(t)
	cases := 3000
	if testing.Short() {
		cases = 500
	}
	quiet := slog.New(slog.DiscardHandler)
	saved := func(c *Context) string {
		data, err := c.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Deps json.RawMessage }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return string(doc.Deps)
	}
	failures := 0
	for i := range cases {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		initial, ops, _ := reducerGen(r).Program(1 + r.IntN(30))
		u := BuildForTest(ops)

		before := NewContext(WithLogger(quiet), WithDeps(initial))
		data, err := before.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		after, err := DeserializeWithLogger(data, quiet)
		if err != nil {
			t.Fatal(err)
		}
		errBefore, errAfter := u.Apply(before), u.Apply(after)
		if (errBefore == nil) != (errAfter == nil) {
			// An append onto a typed slice of the wrong type fails before
			// the save and not after, where the slice is a []any: the one
			// difference a typed value keeps, by design.
			continue
		}
		if got, want := saved(after), saved(before); got != want {
			failures++
			t.Errorf("case %d\ninitial %#v\nops %v\napplied before the save: %s\napplied after it:        %s", i, initial, ops, want, got)
			if failures > 3 {
				t.FailNow()
			}
		}
	}
}

// The reference agrees that a typed map merges as the map it is saved as.
func TestMergeIntoTypedMaps(t *testing.T) {
	initial := map[string]any{
		"settings": map[string]string{"lang": "en"},
		"nested":   map[string]any{"limits": map[string]int{"tokens": 10}},
		"profile":  struct{ Name string }{"ada"},
		"units":    map[string]any{"length": map[string]any{"imperial": "ft"}},
	}
	u := NewContextUpdate().
		Merge("settings", map[string]any{"theme": "dark"}).
		Merge("units", map[string]any{"length": map[string]string{"metric": "m"}}).
		Merge("nested", map[string]any{"limits": map[string]any{"turns": 3}}).
		Merge("profile", map[string]any{"City": "Paris"})
	got, err := u.ToDeps(initial)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"settings": map[string]any{"lang": "en", "theme": "dark"},
		"nested":   map[string]any{"limits": map[string]any{"tokens": 10, "turns": 3}},
		"profile":  map[string]any{"Name": "ada", "City": "Paris"},
		"units":    map[string]any{"length": map[string]any{"imperial": "ft", "metric": "m"}},
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("got %s, want %s", gotJSON, wantJSON)
	}
	if s, ok := initial["settings"].(map[string]string); !ok || len(s) != 1 {
		t.Errorf("initial changed: %#v", initial["settings"])
	}
	ref, _ := reftest.Reduce(initial, []reftest.Op{
		{Kind: reftest.Merge, Key: "settings", Value: map[string]any{"theme": "dark"}},
		{Kind: reftest.Merge, Key: "nested", Value: map[string]any{"limits": map[string]any{"turns": 3}}},
		{Kind: reftest.Merge, Key: "profile", Value: map[string]any{"City": "Paris"}},
		{Kind: reftest.Merge, Key: "units", Value: map[string]any{"length": map[string]string{"metric": "m"}}},
	})
	refJSON, _ := json.Marshal(ref)
	if string(refJSON) != string(wantJSON) {
		t.Errorf("reference: %s, want %s", refJSON, wantJSON)
	}
}
