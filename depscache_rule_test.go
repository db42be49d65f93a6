package nous_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// named returns a rule naming the keys of names: two calls give two
// closures of one function, with one code pointer (not inlined: an
// inlined call would make a function of the closure at each call site).
//
//go:noinline
func named(names ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(names, k) }
}

// keyList is a rule by a list of names, as a method value.
type keyList struct{ names []string }

func (l *keyList) secret(k string) bool { return slices.Contains(l.names, k) }

// A save that switches to a rule naming a key inside a dep stores it no
// more, as Serialize writes it no more, however the rule looks like the
// last one: a closure of the same function, a method value of another
// receiver, the same closure whose captured list changed, the default
// rule before or after. The key is nested in a dep whose JSON the save
// keeps from one save to the next, or in an element appended to a list
// the save keeps.
func TestSaveAsksTheRuleOfCachedKeys(t *testing.T) {
	ctx := context.Background()
	captured := []string{"other"}
	sameClosure := func(k string) bool { return slices.Contains(captured, k) }
	rule := func(f func(string) bool) func() func(string) bool { return func() func(string) bool { return f } }
	for _, tc := range []struct {
		name          string
		key           string
		before, after func() func(string) bool
		appended      bool
	}{
		{"a closure of the same function", "note", rule(named("other")), rule(named("note")), false},
		{"a method value of another receiver", "note",
			rule((&keyList{[]string{"other"}}).secret), rule((&keyList{[]string{"note"}}).secret), false},
		{"the same closure, its list changed", "note",
			func() func(string) bool { captured = []string{"other"}; return sameClosure },
			func() func(string) bool { captured = []string{"note"}; return sameClosure }, false},
		{"from the default rule", "note", rule(nil), rule(named("note")), false},
		{"to the default rule", "sync_token", rule(keepSyncToken), rule(nil), false},
		{"in an element appended", "note", rule(named("other")), rule(named("note")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storetest.NewMemory()
			const value = "v-1234" // under 8 bytes: not masked, so that the rule alone decides
			pad := strings.Repeat("x", 100)
			dep := any(map[string]any{tc.key: value, "pad": pad})
			if tc.appended {
				dep = []any{pad}
			}
			c := nous.NewContext(nous.WithRedaction(tc.before()), nous.WithDeps(map[string]any{"dep": dep}))
			require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
			require.NoError(t, c.Save(ctx, store))
			if tc.appended {
				require.NoError(t, nous.NewContextUpdate().Append("dep", map[string]any{tc.key: value}).Apply(c))
				require.NoError(t, c.Save(ctx, store))
			}
			st, err := store.Read(ctx, c.Log().ID(), 0)
			require.NoError(t, err)
			require.Contains(t, string(st.State), `"`+tc.key+`"`, "the first rule keeps it")

			c.Redact = tc.after()
			require.NoError(t, c.AddMessage(nous.UserMessage("again")))
			require.NoError(t, c.Save(ctx, store))
			st, err = store.Read(ctx, c.Log().ID(), 0)
			require.NoError(t, err)
			doc, err := c.Serialize()
			require.NoError(t, err)
			assert.NotContains(t, string(doc), `"`+tc.key+`"`, "Serialize")
			assert.NotContains(t, string(st.State), `"`+tc.key+`"`, "the state Save stored")
		})
	}
}
