// Command quickstart runs a scripted agent loop against a fake model, to show
// the pieces of nous working together: messages that become events, a tool
// that returns a ContextUpdate, compaction that replaces without deleting, the
// system-prompt overlay, the log behind the transcript, and a session kept in
// the embedded file store, which a second run resumes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "nous-quickstart"), "the directory of the file store that keeps the session")
	flag.Parse()
	store, err := filestore.Open(*dir)
	check(err)
	defer store.Close()
	if resume(store, *dir) {
		return
	}

	c := nous.NewContext(
		nous.WithSystemPrompt("You are a concise weather assistant."),
		nous.WithAgentName("weather"),
		nous.WithMaxIterations(10),
	)
	check(c.AddMessage(nous.SystemMessage(c.SystemPrompt)))

	for turn, question := range []string{"What's the weather in Paris?", "And in Rome?"} {
		check(c.LogEvent(nous.EventTurnStart, map[string]any{"turn": turn + 1}))
		check(c.AddMessage(nous.UserMessage(question)))
		runLoop(c)
		check(c.LogEvent(nous.EventTurnEnd, map[string]any{"turn": turn + 1}))
	}

	// Compaction: the first exchange (user, tool call, tool result, answer)
	// becomes one summary, at the position it had. Nothing leaves the log.
	check(c.ReplaceMessageRange(1, 4, nous.AssistantMessage("(summary) Paris was checked: 18°C and sunny.")))

	// The overlay is applied when the view is read, never logged.
	c.SetSystemPromptOverlay("Answer in one sentence.")

	fmt.Println("== transcript the model sees ==")
	for i, m := range c.All() {
		fmt.Printf("%d %-9s %s\n", i, m.Role, describe(m))
	}
	fmt.Println("\n== the log behind it ==")
	for e := range c.Log().All() {
		fmt.Printf("%2d %-17s %s\n", e.Seq, e.Type, describeEvent(e))
	}
	cities, _ := nous.Dep[[]string](c.Deps, "cities_checked")
	fmt.Printf("\ndeps: cities_checked=%v, usage: %d requests, %d tokens\n", cities, c.Usage.Requests, c.Usage.TotalTokens)

	// A third turn is interrupted: the model asked for a tool, and the
	// process died before the tool ran. What was saved is the log.
	check(c.AddMessage(nous.UserMessage("And in Oslo?")))
	reply, _ := fakeModel(c)
	check(c.AddMessage(reply))
	saved, err := c.Serialize()
	check(err)

	// Resume: the restored context folds its log back into the same view
	// (the overlay is runtime state and is set again), and the dangling
	// call gets a synthetic result before the model sees it again.
	restored, err := nous.Deserialize(saved)
	check(err)
	restored.SetSystemPromptOverlay("Answer in one sentence.")
	fmt.Printf("\n== resumed from %d bytes: %d events, %d messages ==\n", len(saved), restored.Log().Len(), restored.Len())
	fmt.Printf("patched %d dangling tool call(s)\n", restored.PatchDanglingToolCalls())
	last, _ := restored.LastMessage()
	fmt.Printf("last: %s %s (%s)\n", last.Role, last.ToolCallID, last.Content)
	runLoop(restored)
	last, _ = restored.LastMessage()
	fmt.Printf("final: %s\n", last.Content)

	// Keep the session: the first save writes the whole log, later ones
	// only what is new.
	check(restored.Save(context.Background(), store))
	fmt.Printf("\nsaved session %s in %s: run again to resume it\n", restored.Log().ID(), *dir)
}

// resume loads the session a previous run saved in store, if there is one,
// runs one more turn on it and saves what is new. It reports whether it did.
func resume(store *filestore.Store, dir string) bool {
	ctx := context.Background()
	var last *nous.LogInfo
	for info, err := range store.List(ctx, nous.ListOptions{}) {
		check(err)
		last = &info
	}
	if last == nil {
		return false
	}
	c, err := nous.Load(ctx, store, last.ID)
	check(err)
	fmt.Printf("resumed session %s from %s: %d events, %d messages, saved %s\n",
		last.ID, dir, c.Log().Len(), c.Len(), last.UpdatedAt.Format("2006-01-02 15:04:05"))
	before := c.Log().Len()
	check(c.AddMessage(nous.UserMessage("And in Rome, once more?")))
	runLoop(c)
	answer, _ := c.LastMessage()
	fmt.Printf("final: %s\n", answer.Content)
	check(c.Save(ctx, store))
	fmt.Printf("saved %d new events (the log now has %d)\n", c.Log().Len()-before, c.Log().Len())
	return true
}

// runLoop calls the model until it stops asking for tools, running the tools
// it asks for and applying the updates they return.
func runLoop(c *nous.Context) {
	for c.NeedsResponse && !c.MaxIterationsReached() {
		c.IncrementIteration()
		check(c.LogEvent(nous.EventStepStart, map[string]any{"iteration": c.Iteration}))
		reply, usage := fakeModel(c)
		c.AddUsage(usage)
		check(c.AddMessage(reply))
		for _, call := range reply.ToolCalls {
			c.AddToolCall(call)
			result, update := getWeather(c.ToRunContext(), call)
			check(update.Apply(c))
			check(c.AddMessage(nous.ToolMessage(call.ID, call.Name, result)))
		}
		check(c.LogEvent(nous.EventStepEnd, map[string]any{"iteration": c.Iteration}))
	}
}

// fakeModel answers from the last message: a question makes it call the
// weather tool, a tool result makes it answer.
func fakeModel(c *nous.Context) (nous.Message, nous.Usage) {
	usage := nous.Usage{Requests: 1, InputTokens: 12 * c.Len(), OutputTokens: 9}
	usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	last, _ := c.LastMessage()
	if last.Role == nous.RoleTool {
		if synthesized, _ := last.Metadata[nous.MetadataSynthesized].(bool); !synthesized {
			return nous.AssistantMessage("It is " + last.Content + "."), usage
		}
		// The call was interrupted: ask again, with a new call ID.
		last = nous.UserMessage(lastQuestion(c))
	}
	city := "Paris"
	for _, name := range []string{"Rome", "Oslo"} {
		if strings.Contains(last.Content, name) {
			city = name
		}
	}
	args, _ := json.Marshal(map[string]string{"city": city})
	call := nous.ToolCall{ID: fmt.Sprintf("call_%d", c.Log().Len()), Name: "get_weather", Arguments: args}
	return nous.AssistantMessage("", call), usage
}

// lastQuestion returns the text of the last user message.
func lastQuestion(c *nous.Context) string {
	q := ""
	for _, m := range c.All() {
		if m.Role == nous.RoleUser {
			q = m.Text()
		}
	}
	return q
}

// getWeather is a tool: it reads its run context and returns its result and
// an update, never touching the context itself.
func getWeather(rc nous.RunContext, call nous.ToolCall) (string, nous.ContextUpdate) {
	var args struct{ City string }
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return "error: " + err.Error(), nous.ContextUpdate{}
	}
	forecast := map[string]string{"Paris": "18°C and sunny", "Rome": "24°C and clear", "Oslo": "-2°C and snowing"}[args.City]
	update := nous.NewContextUpdate().
		Append("cities_checked", args.City).
		Set("last_city", args.City).
		LogEvent(nous.EventToolCall, map[string]any{"id": call.ID, "name": call.Name, "retry": rc.Retry})
	return forecast, update
}

func describe(m nous.Message) string {
	s := strings.ReplaceAll(m.Text(), "\n\n", " + ")
	for _, tc := range m.ToolCalls {
		s += fmt.Sprintf("[calls %s %s]", tc.Name, tc.Arguments)
	}
	return s
}

func describeEvent(e nous.Event) string {
	switch {
	case e.Type == nous.EventReplace:
		return fmt.Sprintf("shadows %d..%d with %q", e.First, e.Last, e.Message.Text())
	case e.Message != nil:
		return describe(*e.Message)
	default:
		b, _ := json.Marshal(e.Data)
		return string(b)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
