package tooltest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/tooltest"
)

// weather is a tool as an agent has them: it reads its arguments and the
// deps from its RunContext and returns its answer and an update.
func weather(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args struct {
		City string `json:"city"`
	}
	if err := rc.Call.ParseArguments(&args); err != nil || args.City == "" {
		return nous.ToolResult{Err: fmt.Errorf("no city given: %v", err)}
	}
	units, _ := nous.Dep[string](rc.Deps, "units")
	return nous.ToolResult{
		Content: fmt.Sprintf("21°%s in %s", units, args.City),
		Update:  nous.NewContextUpdate().Set("last_city", args.City).Append("cities", args.City),
	}
}

// A tool's answer and the update it made, from one call (in a test, Run
// fails the test instead of returning an error).
func ExampleCall() {
	r, err := tooltest.Call(weather, "get_weather", map[string]any{"city": "Paris"}, map[string]any{"units": "C"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Message.Content, r.IsError)
	fmt.Println(r.Deps["last_city"], r.Deps["cities"])
	// Output:
	// 21°C in Paris false
	// Paris [Paris]
}

// An error result, a panic and an update that cannot apply come back as
// the model would see them; arguments go as given.
func TestRun(t *testing.T) {
	r := tooltest.Run(t, weather, "get_weather", `{"city": ""}`, nil)
	if !r.IsError || r.Message.Content == "" || r.Deps["last_city"] != nil {
		t.Fatalf("a tool's error: %+v", r.Message)
	}
	panics := func(context.Context, nous.RunContext) nous.ToolResult { panic("boom") }
	if r := tooltest.Run(t, panics, "p", nil, nil); !r.IsError {
		t.Fatalf("a panic: %+v", r.Message)
	}
	r = tooltest.Run(t, weather, "get_weather", map[string]any{"city": "Lyon"}, map[string]any{"cities": "not a list"})
	if !r.IsError || r.Err == nil || !errors.Is(r.Err, nous.ErrTypeMismatch) || r.Deps["last_city"] != nil {
		t.Fatalf("an update that cannot apply: %+v, %v", r.Message, r.Err)
	}
	if calls := r.Context.ToolCalls; len(calls) != 1 || string(calls[0].Arguments) != `{"city":"Lyon"}` {
		t.Fatalf("the call recorded: %v", calls)
	}
	if _, err := tooltest.Call(nil, "t", nil, nil); err == nil {
		t.Fatal("a nil tool ran")
	}
	if _, err := tooltest.Call(weather, "t", func() {}, nil); err == nil {
		t.Fatal("arguments that do not marshal were sent")
	}
}
