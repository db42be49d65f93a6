// Command todo runs the three tools of the ContextUpdate documentation,
// add_todo, increment_counter and add_note, through a small scripted agent
// loop. Each step's calls run in parallel through Context.RunToolCalls: each
// tool reads its own RunContext snapshot and returns its result and a
// ContextUpdate, and the updates are applied and the results added in call
// order; the loop then prints the deps.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/nous-go/nous"
)

// tool is a tool of this example: it reads its snapshot and arguments and
// returns its result and the change it wants made to the context.
type tool func(rc nous.RunContext, args map[string]any) (any, nous.ContextUpdate, error)

var tools = map[string]tool{
	"add_todo":          addTodo,
	"increment_counter": incrementCounter,
	"add_note":          addNote,
}

// addTodo puts a new todo at the front of the list, as the seed does.
func addTodo(rc nous.RunContext, args map[string]any) (any, nous.ContextUpdate, error) {
	text, ok := nous.Dep[string](args, "text")
	if !ok {
		return nil, nous.ContextUpdate{}, fmt.Errorf("add_todo: missing text")
	}
	todos, _ := nous.Dep[[]any](rc.Deps, "todos")
	todo := map[string]any{"id": fmt.Sprintf("todo-%d", len(todos)+1), "text": text, "done": false}
	todos = append([]any{todo}, todos...)
	return map[string]any{"success": true, "todo": todo},
		nous.NewContextUpdate().Set("todos", todos), nil
}

// incrementCounter adds one to the counter.
func incrementCounter(rc nous.RunContext, _ map[string]any) (any, nous.ContextUpdate, error) {
	count, _ := nous.Dep[int](rc.Deps, "counter")
	count++
	return map[string]any{"count": count},
		nous.NewContextUpdate().Set("counter", count), nil
}

// addNote appends a note.
func addNote(_ nous.RunContext, args map[string]any) (any, nous.ContextUpdate, error) {
	note, ok := nous.Dep[string](args, "note")
	if !ok {
		return nil, nous.ContextUpdate{}, fmt.Errorf("add_note: missing note")
	}
	return map[string]any{"added": note},
		nous.NewContextUpdate().Append("notes", note), nil
}

// script is what the fake model answers, one reply per step: tool calls,
// then a final text.
var script = [][]nous.ToolCall{
	{call("call_1", "add_todo", `{"text":"buy milk"}`), call("call_2", "increment_counter", `{}`)},
	{call("call_3", "add_note", `{"note":"milk: the oat one"}`)},
	{call("call_4", "add_todo", `{"text":"call mum"}`), call("call_5", "increment_counter", `{}`), call("call_6", "add_note", `{"note":"mum: after 6pm"}`)},
}

func call(id, name, args string) nous.ToolCall {
	return nous.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func main() {
	c := nous.NewContext(nous.WithSystemPrompt("You keep the user's todo list."))
	check(c.AddMessage(nous.SystemMessage(c.SystemPrompt)))
	check(c.AddMessage(nous.UserMessage("Remember to buy milk (the oat one) and to call mum after 6pm.")))

	for step, calls := range script {
		check(c.AddMessage(nous.AssistantMessage("", calls...)))
		// The step's calls run in parallel, each on its own snapshot; their
		// updates are applied and their results added in call order.
		check(c.RunToolCalls(context.Background(), calls, runTool))
		for _, m := range c.Messages()[c.Len()-len(calls):] {
			fmt.Printf("step %d %s -> %s\n", step+1, m.Name, m.Content)
		}
		printDeps(c)
	}
	check(c.AddMessage(nous.AssistantMessage("Added two todos and two notes.")))

	count, _ := nous.Dep[int](c.Deps, "counter")
	notes, _ := nous.Dep[[]string](c.Deps, "notes")
	fmt.Printf("\ncounter=%d notes=%q\n", count, notes)
	fmt.Printf("%d messages, %d events, needs response: %v\n", c.Len(), c.Log().Len(), c.NeedsResponse)
}

// runTool runs one call with the tool it names: its arguments parsed, its
// result as JSON, and its update for RunToolCalls to apply.
func runTool(_ context.Context, rc nous.RunContext) nous.ToolResult {
	var args map[string]any
	if err := rc.Call.ParseArguments(&args); err != nil {
		return nous.ToolResult{Err: err}
	}
	result, update, err := tools[rc.Call.Name](rc, args)
	if err != nil {
		return nous.ToolResult{Err: err}
	}
	out, err := json.Marshal(result)
	if err != nil {
		return nous.ToolResult{Err: err}
	}
	return nous.ToolResult{Content: string(out), Update: update}
}

func printDeps(c *nous.Context) {
	b, err := json.Marshal(c.Deps) // keys sorted: deterministic
	check(err)
	fmt.Printf("       deps %s\n", b)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
