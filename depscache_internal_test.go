package nous

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/nous-go/nous/internal/reftest"
)

// The state a save writes from its cache of the deps' JSON is, byte for
// byte, the state written without it, through random changes of the deps:
// values set, replaced, deleted, lists appended to (through a
// ContextUpdate and directly), elements and nested maps changed in place,
// secrets at the top and deeper, values JSON cannot hold, numbers of every
// kind (-0 is not 0), typed values, HTML characters, invalid UTF-8, a
// cycle, a key that is not valid UTF-8, another redaction rule (a closure
// of the same function as the last one too), a secret's value elsewhere,
// masked.
func TestSavedStateIsTheState(t *testing.T) {
	rng := rand.New(rand.NewSource(int64(reftest.Seed(t))))
	c := NewContext(WithLogger(slog.New(slog.DiscardHandler)))
	keys := []string{"cities", "notes", "profile", "api_key", "n", "typed", "x"}
	values := func() any {
		switch rng.Intn(12) {
		case 0:
			if rng.Intn(3) == 0 {
				return "echo: s3cret-password " + strings.Repeat("p", rng.Intn(80))
			}
			return strings.Repeat("<b>&é ", rng.Intn(40))
		case 1:
			return rng.Float64() * 1e6
		case 2:
			return math.Copysign(0, -1)
		case 3:
			return json.Number(fmt.Sprint(rng.Intn(1000)))
		case 4:
			return rng.Intn(100)
		case 5:
			return math.NaN()
		case 6:
			return []string{"typed", "list"}
		case 7:
			return map[string]any{"password": "s3cret-password", "name": strings.Repeat("n", rng.Intn(100)), "deep": []any{map[string]any{"token": 1, "ok": true}}}
		case 8:
			return "bad \xff utf-8"
		case 9:
			return nil
		case 10:
			return struct{ A, B int }{1, 2}
		}
		return []any{"a", 1.5, map[string]any{"k": "v"}}
	}
	for step := range 3000 {
		k := keys[rng.Intn(len(keys))]
		what := ""
		switch op := rng.Intn(11); op {
		case 0, 1:
			what = "set"
			c.Deps[k] = values()
		case 2, 3:
			what = "append through an update"
			if l, ok := c.Deps[k].([]any); ok || c.Deps[k] == nil {
				_ = l
				if err := NewContextUpdate().Append(k, values()).Apply(c); err != nil {
					t.Fatal(err)
				}
			}
		case 4:
			what = "append directly"
			if l, ok := c.Deps[k].([]any); ok {
				c.Deps[k] = append(l, values())
			}
		case 5:
			what = "element changed in place"
			if l, ok := c.Deps[k].([]any); ok && len(l) > 0 {
				l[rng.Intn(len(l))] = values()
			}
		case 6:
			what = "nested map changed in place"
			if l, ok := c.Deps[k].([]any); ok {
				for _, e := range l {
					if m, ok := e.(map[string]any); ok {
						m["k"] = values()
						break
					}
				}
			}
			if m, ok := c.Deps[k].(map[string]any); ok {
				m["name"] = values()
			}
		case 7:
			what = "deleted"
			delete(c.Deps, k)
		case 8:
			what = "a cycle"
			l := []any{"self"}
			l = append(l, nil)
			l[1] = l
			c.Deps[k] = l
		case 9:
			what = "a key that is not UTF-8"
			if rng.Intn(4) == 0 {
				c.Deps["bad\xfe"] = 1
			} else {
				delete(c.Deps, "bad\xfe")
			}
		case 10:
			what = "another rule"
			switch rng.Intn(5) {
			case 0:
				c.Redact = nil
			case 1:
				c.Redact = func(key string) bool { return key == "notes" }
			case 2:
				c.Redact = func(key string) bool { return IsSecretKey(key) || key == "x" }
			case 3, 4:
				c.Redact = ruleNaming([]string{"name", "k", "ok"}[rng.Intn(3)])
			}
		}
		got := string(c.savedState(c.sanitizer()))
		want := string(c.stateJSON(c.sanitizer()))
		if got != want {
			t.Fatalf("step %d (%s of %s): the state written from the cache is\n%s\nwant\n%s", step, what, k, got, want)
		}
	}
}

// ruleNaming returns a rule naming key: every call gives a closure of one
// function, with one code pointer.
//
//go:noinline
func ruleNaming(key string) func(string) bool {
	return func(k string) bool { return k == key || IsSecretKey(k) }
}

// Every change of a cached value is seen, however small: -0 for 0 in a
// list, an element or a nested value changed in place; and an int for a
// float, which is written the same.
func TestSavedStateSeesEveryChange(t *testing.T) {
	zeros := func() []any {
		return []any{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}
	}
	long := strings.Repeat("x", 80)
	for _, tc := range []struct {
		name   string
		before any
		change func(v any) any
	}{
		{"-0 for 0", zeros(), func(v any) any { v.([]any)[3] = math.Copysign(0, -1); return v }},
		{"0 for -0", []any{math.Copysign(0, -1), long}, func(v any) any { v.([]any)[0] = 0.0; return v }},
		{"an element in place", []any{long, "a"}, func(v any) any { v.([]any)[1] = "b"; return v }},
		{"a nested value in place", map[string]any{"m": map[string]any{"k": long}}, func(v any) any { v.(map[string]any)["m"].(map[string]any)["k"] = "short"; return v }},
		{"an int for a float", []any{1.0, long}, func(v any) any { v.([]any)[0] = 1; return v }},
		{"a float32 for a float", []any{0.5, long}, func(v any) any { v.([]any)[0] = float32(0.5); return v }},
		{"nil for an empty list", []any{[]any{}, long}, func(v any) any { v.([]any)[0] = []any(nil); return v }},
		{"appended, then an element in place", []any{long, "a"}, func(v any) any { l := append(v.([]any), "c"); l[1] = "b"; return l }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewContext()
			c.Deps["v"] = tc.before
			first := c.savedState(newSanitizer(nil))
			if c.persist.depsCache.entries["v"] == nil {
				t.Fatal("the value is not cached")
			}
			c.Deps["v"] = tc.change(c.Deps["v"])
			got, want := c.savedState(newSanitizer(nil)), c.stateJSON(newSanitizer(nil))
			if string(got) != string(want) || string(got) == string(first) && !strings.Contains(tc.name, "for a float") {
				t.Fatalf("after the change: %s\nwant %s", got, want)
			}
		})
	}
}
