package nous_test

import (
	"fmt"

	"github.com/nous-go/nous"
)

// Save a context and restore it: the restored context has the same view and
// the same log, and goes on appending where the log left off. Secrets in the
// deps are never written.
func ExampleContext_Serialize() {
	c := nous.NewContext(
		nous.WithSystemPrompt("Be helpful"),
		nous.WithDeps(map[string]any{"user_id": 7, "api_key": "sk-secret"}),
	)
	_ = c.AddMessage(nous.UserMessage("Hello"))
	_ = c.AddMessage(nous.AssistantMessage("Hi! How can I help?"))
	_ = c.LogEvent(nous.EventTurnEnd, map[string]any{"turn": 1})

	data, err := c.Serialize()
	if err != nil {
		fmt.Println(err)
		return
	}
	restored, err := nous.Deserialize(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(restored.SystemPrompt)
	fmt.Println(restored.Deps)
	for _, m := range restored.All() {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	fmt.Println("same log:", restored.Log().ID() == c.Log().ID(), restored.Log().Len())

	_ = restored.AddMessage(nous.UserMessage("Thanks"))
	last, _ := restored.Log().Event(int64(restored.Log().Len()))
	fmt.Println("next seq:", last.Seq)
	// Output:
	// Be helpful
	// map[user_id:7]
	// user: Hello
	// assistant: Hi! How can I help?
	// same log: true 3
	// next seq: 4
}

// Deserialize also reads version 1, which has no log: each message becomes
// one event of a new log.
func ExampleDeserialize_version1() {
	blob := `{"version": 1, "messages": [{"role": "user", "content": "What is 2 + 3?"}], "max_iterations": 4}`
	c, err := nous.Deserialize([]byte(blob))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Messages()[0].Content, c.MaxIterations, c.Log().Len())

	_, err = nous.Deserialize([]byte(`{"version": 3}`))
	fmt.Println(err)
	// Output:
	// What is 2 + 3? 4 1
	// nous: deserialize: version 3 (this package reads 1 and 2): unsupported version
}
