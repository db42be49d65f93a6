package nous_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nous-go/nous"
)

// A tool returns an update; the owner of the context applies it. Deps
// operations apply first, in order, then the bookkeeping events, which go
// to the log and never to the messages.
func ExampleNewContextUpdate() {
	c := nous.NewContext(nous.WithDeps(map[string]any{"notes": []any{"likes tea"}}))

	u := nous.NewContextUpdate().
		Set("user", "ada").
		Append("notes", "works nights").
		Merge("settings", map[string]any{"theme": "dark"}).
		LogEvent(nous.EventToolCall, map[string]any{"name": "remember"})
	if err := u.Apply(c); err != nil {
		fmt.Println(err)
		return
	}

	fmt.Println(c.Deps)
	fmt.Println(len(c.Messages()), "messages")
	for e := range c.Log().All() {
		fmt.Println(e.Seq, e.Type, e.Data)
	}
	// Output:
	// map[notes:[likes tea works nights] settings:map[theme:dark] user:ada]
	// 0 messages
	// 1 deps_update map[ops:[map[key:user op:set value:ada] map[key:notes op:append value:works nights] map[key:settings op:set value:map[theme:dark]]]]
	// 2 tool_call map[name:remember]
}

// Apply is all or nothing: when an operation does not fit, the context is
// left as it was.
func ExampleContextUpdate_Apply() {
	c := nous.NewContext(nous.WithDeps(map[string]any{"name": "ada"}))
	err := nous.NewContextUpdate().
		Set("visits", 1).
		Append("name", "lovelace").
		Apply(c)
	fmt.Println(errors.Is(err, nous.ErrTypeMismatch))
	fmt.Println(err)
	fmt.Println(c.Deps)
	// Output:
	// true
	// nous: update operation 1 (append "name"): append string onto string: type mismatch
	// map[name:ada]
}

// ToDeps is the one reducer: it folds the operations over a copy of the
// deps and never changes the map it is given.
func ExampleContextUpdate_ToDeps() {
	initial := map[string]any{
		"log":      []any{"a"},
		"settings": map[string]any{"ui": map[string]any{"theme": "light", "font": 12}},
	}
	u := nous.NewContextUpdate().
		Append("log", "b").
		Append("log", "c").
		Merge("settings", map[string]any{"ui": map[string]any{"theme": "dark"}}).
		Append("tmp", 1).Append("tmp", 2).Delete("tmp").Append("tmp", 3)

	deps, err := u.ToDeps(initial)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(deps)
	fmt.Println(initial)
	// Output:
	// map[log:[a b c] settings:map[ui:map[font:12 theme:dark]] tmp:[3]]
	// map[log:[a] settings:map[ui:map[font:12 theme:light]]]
}

// A tool that is handed only a RunContext can still apply an update to it;
// the input is unchanged. (A RunContext has no log: log events would be
// dropped with a warning.)
func ExampleContextUpdate_ApplyToRunContext() {
	rc := nous.NewRunContext(map[string]any{"tags": []string{"go"}},
		nous.WithRetry(1), nous.WithSandbox(nous.NewSandboxPolicy(nous.SandboxReadOnly)))

	out, err := nous.NewContextUpdate().Append("tags", "agents").ApplyToRunContext(rc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Deps["tags"], out.Retry, out.Sandbox.Mode)
	fmt.Println(rc.Deps["tags"])
	// Output:
	// [go agents] 1 read_only
	// [go]
}

// Tools that ran in parallel finish in any order; their updates are
// combined in the order of the tool calls, so the result does not depend on
// scheduling.
func ExampleCombine() {
	calls := []string{"call_1", "call_2", "call_3"}
	updates := make([]nous.ContextUpdate, len(calls))
	for _, i := range []int{2, 0, 1} { // completion order
		updates[i] = nous.NewContextUpdate().Append("done", calls[i]).Set("last", calls[i])
	}
	deps, err := nous.Combine(updates...).ToDeps(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(deps)
	// Output:
	// map[done:[call_1 call_2 call_3] last:call_3]
}

// Dep reads a dep as a Go type, converting numbers and lists that came back
// from JSON when nothing is lost.
func ExampleDep() {
	var deps map[string]any
	if err := json.Unmarshal([]byte(`{"count": 3, "ratio": 2.5, "tags": ["a", "b"]}`), &deps); err != nil {
		fmt.Println(err)
		return
	}
	count, ok := nous.Dep[int](deps, "count") // a float64 3 in deps
	fmt.Println(count, ok)
	_, ok = nous.Dep[int](deps, "ratio") // 2.5 is not an int
	fmt.Println(ok)
	tags, ok := nous.Dep[[]string](deps, "tags") // a []any in deps
	fmt.Println(tags, ok)
	_, ok = nous.Dep[string](deps, "missing")
	fmt.Println(ok)
	// Output:
	// 3 true
	// false
	// [a b] true
	// false
}
