package nous_test

import (
	"fmt"
	"log"

	"github.com/nous-go/nous"
)

// Example is the README's example; it runs, so the README cannot rot.
func Example() {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	c.AddMessage(nous.SystemMessage(c.SystemPrompt))
	c.AddMessage(nous.UserMessage("Remember that I like tea."))

	// A tool gets a snapshot and returns an update instead of mutating.
	rc := c.ToRunContext()
	update := nous.NewContextUpdate().
		Append("notes", "likes tea").
		LogEvent(nous.EventToolCall, map[string]any{"name": "remember", "retry": rc.Retry})
	if err := update.Apply(c); err != nil {
		log.Fatal(err)
	}
	c.AddMessage(nous.AssistantMessage("Noted."))

	for i, m := range c.All() { // the view: a fold of the log, no copy
		fmt.Println(i, m.Role, m.Text())
	}
	fmt.Println(c.Log().Len(), "events") // 4: three messages and one tool_call
	fmt.Println(c.Deps["notes"])
	// Output:
	// 0 system You are terse.
	// 1 user Remember that I like tea.
	// 2 assistant Noted.
	// 4 events
	// [likes tea]
}
