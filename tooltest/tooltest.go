// Package tooltest tests one tool of a nous agent in a few lines: [Run]
// runs the tool on one call the way a runtime does, through
// [nous.Context.RunToolCalls] (its own RunContext, its update applied, its
// result recorded), and gives back what that left:
//
//	func TestWeather(t *testing.T) {
//		r := tooltest.Run(t, weather, "get_weather", map[string]any{"city": "Paris"}, nil)
//		if r.Message.Content != "21°C in Paris" || r.Deps["last_city"] != "Paris" {
//			t.Fatalf("%s, deps %v", r.Message.Content, r.Deps)
//		}
//	}
package tooltest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nous-go/nous"
)

// Result is what a tool's run left.
type Result struct {
	// Message is the tool message that answers the call, as the view holds
	// it: an error result ([nous.ToolErrorMessage]) when the tool set Err,
	// panicked, or returned an update that failed to apply.
	Message nous.Message
	// IsError says whether Message is an error result.
	IsError bool
	// Deps are the context's deps once the tool's update was applied.
	Deps map[string]any
	// Err is RunToolCalls' error: an update that failed to apply, which
	// Message tells the model too.
	Err error
	// Context is the context the tool ran in, for anything more: its log
	// holds the events the update logged, its usage what the tool added.
	Context *nous.Context
}

// Run runs tool on one call of the tool name, with args as its arguments
// (a string or json.RawMessage is taken as the arguments' JSON, nil as
// {}, anything else is marshaled with encoding/json), in a context whose
// deps are a copy of deps and that opts configure further, and returns
// what the run left; what [Call] cannot do fails t.
func Run(t testing.TB, tool nous.ToolFunc, name string, args any, deps map[string]any, opts ...nous.Option) *Result {
	t.Helper()
	r, err := Call(tool, name, args, deps, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Call is Run without a testing.TB: an error for a call it cannot make
// (arguments that do not marshal, a nil tool, a name no call may have).
func Call(tool nous.ToolFunc, name string, args any, deps map[string]any, opts ...nous.Option) (*Result, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	case nil:
		raw = json.RawMessage(`{}`)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("tooltest: the arguments of %s: %w", name, err)
		}
		raw = b
	}
	if tool == nil {
		return nil, fmt.Errorf("tooltest: no tool to run for %s", name)
	}
	c := nous.NewContext(append([]nous.Option{nous.WithDeps(deps)}, opts...)...)
	call := nous.ToolCall{ID: "call_1", Name: name, Arguments: raw}
	if err := c.AddMessage(nous.AssistantMessage("", call)); err != nil {
		return nil, fmt.Errorf("tooltest: the call of %s: %w", name, err)
	}
	err := c.RunToolCalls(context.Background(), []nous.ToolCall{call}, tool)
	m, ok := c.LastMessage()
	if !ok || m.Role != nous.RoleTool || m.ToolCallID != call.ID {
		return nil, fmt.Errorf("tooltest: %s left no result of its call (%v)", name, err)
	}
	isErr, _ := m.Metadata[nous.MetadataIsError].(bool)
	return &Result{Message: m, IsError: isErr, Deps: c.Deps, Err: err, Context: c}, nil
}
