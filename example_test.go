package nous_test

import (
	"errors"
	"fmt"

	"github.com/nous-go/nous"
)

func ExampleNewContext() {
	c := nous.NewContext(
		nous.WithSystemPrompt("Be helpful"),
		nous.WithDeps(map[string]any{"user_id": 123}),
		nous.WithMaxIterations(15),
	)
	fmt.Println(c.SystemPrompt, c.Deps["user_id"], c.MaxIterations)
	fmt.Println("needs response:", c.NeedsResponse, "messages:", c.Len())
	// Output:
	// Be helpful 123 15
	// needs response: true messages: 0
}

func ExampleContext_AddMessage() {
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("Hello"))
	c.AddMessage(nous.AssistantMessage("Hi there!"))
	last, _ := c.LastMessage()
	fmt.Println(c.Len(), last.Content, c.NeedsResponse)

	// An invalid message is refused and nothing is appended.
	err := c.AddMessage(nous.Message{Role: nous.RoleTool, Content: "no call id"})
	fmt.Println(errors.Is(err, nous.ErrInvalidMessage), c.Len())

	// Every message is an event of the log.
	for _, e := range c.Log().Events() {
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// 2 Hi there! false
	// true 2
	// 1 user_message
	// 2 assistant_message
}

func ExampleContext_All() {
	c := nous.NewContext()
	c.AddMessages(
		nous.SystemMessage("Be brief."),
		nous.UserMessage("What is 2+2?"),
		nous.AssistantMessage("4"),
	)
	for i, m := range c.All() {
		fmt.Printf("%d %-9s %s\n", i, m.Role, m.Text())
	}
	// Output:
	// 0 system    Be brief.
	// 1 user      What is 2+2?
	// 2 assistant 4
}

func ExampleContext_LogEvent() {
	c := nous.NewContext()
	c.LogEvent(nous.EventTurnStart, map[string]any{"turn": 1})
	c.AddMessage(nous.UserMessage("Hi"))
	c.LogEvent(nous.EventTurnEnd, map[string]any{"turn": 1})

	// Surface events only come from adding messages.
	err := c.LogEvent(nous.EventUserMessage, nil)
	fmt.Println(errors.Is(err, nous.ErrSurfaceEvent))

	fmt.Println("messages:", c.Len())
	for _, e := range c.Log().Events() {
		fmt.Println(e.Seq, e.Type, e.Data["turn"])
	}
	// Output:
	// true
	// messages: 1
	// 1 turn_start 1
	// 2 user_message <nil>
	// 3 turn_end 1
}

// Compaction replaces a stretch of the conversation by a summary. The
// summary takes the position of the range; the originals stay in the log.
func ExampleContext_ReplaceMessageRange() {
	c := nous.NewContext()
	c.AddMessages(
		nous.SystemMessage("You are a travel agent."),
		nous.UserMessage("I want to go to Lisbon."),
		nous.AssistantMessage("When?"),
		nous.UserMessage("In May."),
		nous.AssistantMessage("Booked."),
		nous.UserMessage("Thanks! And a hotel?"),
	)
	summary := nous.SystemMessage("Summary: trip to Lisbon booked for May.")
	if err := c.ReplaceMessageRange(1, 4, summary); err != nil {
		fmt.Println(err)
	}
	for i, m := range c.All() {
		fmt.Println(i, m.Text())
	}
	last := c.Log().Events()[c.Log().Len()-1]
	fmt.Printf("log: %d events, the last a %s of events %d..%d\n", c.Log().Len(), last.Type, last.First, last.Last)

	err := c.ReplaceMessage(7, summary)
	fmt.Println(errors.Is(err, nous.ErrOutOfRange))
	// Output:
	// 0 You are a travel agent.
	// 1 Summary: trip to Lisbon booked for May.
	// 2 Thanks! And a hotel?
	// log: 7 events, the last a replace of events 2..5
	// true
}

func ExampleContext_SetSystemPromptOverlay() {
	c := nous.NewContext()
	c.AddMessages(nous.SystemMessage("You are helpful."), nous.UserMessage("Hi"))

	c.SetSystemPromptOverlay("You can search the web.")
	c.SetSystemPromptOverlay("You can read files.") // replaces, never compounds
	for _, m := range c.All() {
		fmt.Printf("%s: %q\n", m.Role, m.Text())
	}
	fmt.Println("events:", c.Log().Len())

	c.SetSystemPromptOverlay("")
	first, _ := nous.Fold(c.Log().Events())
	fmt.Printf("cleared: %q, the log: %q\n", c.Messages()[0].Text(), first[0].Text())
	// Output:
	// system: "You are helpful.\n\nYou can read files."
	// user: "Hi"
	// events: 2
	// cleared: "You are helpful.", the log: "You are helpful."
}

func ExampleContext_PatchDanglingToolCalls() {
	c := nous.NewContext()
	c.AddMessages(
		nous.UserMessage("Weather in Paris and Rome?"),
		nous.AssistantMessage("",
			nous.ToolCall{ID: "call_1", Name: "weather"},
			nous.ToolCall{ID: "call_2", Name: "weather"}),
		nous.ToolMessage("call_1", "weather", "Sunny"),
	)
	// The run was interrupted before call_2 ran.
	fmt.Println("patched:", c.PatchDanglingToolCalls())
	last, _ := c.LastMessage()
	fmt.Println(last.Role, last.ToolCallID, last.Name, last.Metadata[nous.MetadataSynthesized])
	fmt.Println(last.Content)
	fmt.Println("patched again:", c.PatchDanglingToolCalls())
	// Output:
	// patched: 1
	// tool call_2 weather true
	// Tool call was interrupted and not executed. Please retry if needed.
	// patched again: 0
}

func ExampleContext_Clone() {
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("Plan a trip."))

	fork := c.Clone()
	fork.AddMessage(nous.AssistantMessage("To the mountains?"))
	c.AddMessage(nous.AssistantMessage("To the sea?"))

	parent, seq, ok := fork.Log().Parent()
	fmt.Println(parent == c.Log().ID(), seq, ok)
	fmt.Println(fork.Log().ID() != c.Log().ID())
	for _, x := range []*nous.Context{c, fork} {
		last, _ := x.LastMessage()
		fmt.Println(x.Len(), last.Content)
	}
	// Output:
	// true 1 true
	// true
	// 2 To the sea?
	// 2 To the mountains?
}

func ExampleFold() {
	c := nous.NewContext()
	c.AddMessages(nous.UserMessage("a"), nous.UserMessage("b"), nous.UserMessage("c"))
	c.ReplaceMessageRange(0, 1, nous.UserMessage("a+b"))
	c.LogEvent(nous.EventTurnEnd, nil)

	// A store reads the events back and folds them into the view.
	events := c.Log().Events()
	msgs, err := nous.Fold(events)
	if err != nil {
		fmt.Println(err)
	}
	for _, m := range msgs {
		fmt.Println(m.Content)
	}

	// A log that does not fold is an error, never a crash.
	_, err = nous.Fold(events[1:])
	fmt.Println(errors.Is(err, nous.ErrInvalidLog))
	// Output:
	// a+b
	// c
	// true
}

func ExampleMessage_Validate() {
	msgs := []nous.Message{
		nous.UserMessage("hi"),
		nous.AssistantMessage("", nous.ToolCall{ID: "call_1", Name: "search"}),
		{Role: nous.RoleUser},
		{Role: nous.RoleTool, Content: "result"},
		{Role: "robot", Content: "beep"},
	}
	for _, m := range msgs {
		fmt.Println(m.Validate())
	}
	// Output:
	// <nil>
	// <nil>
	// nous: user message with empty content: invalid message
	// nous: tool message without a tool call id: invalid message
	// nous: role "robot" is not system, user, assistant or tool: invalid message
}
