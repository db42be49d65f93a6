package nous_test

import (
	"encoding/json"
	"fmt"

	"github.com/nous-go/nous"
)

// A transcript of a range a summarizer gets: every message as text,
// results whose calls are not in it too, thinking left out.
func ExampleTranscript() {
	thinking := nous.ThinkingPart("the user wants the weather", "c2ln")
	msgs := []nous.Message{
		nous.ToolMessage("call_0", "read_file", "notes.txt: buy milk"),
		nous.UserMessage("What is the weather in Paris?"),
		{Role: nous.RoleAssistant, Parts: []nous.ContentPart{thinking},
			ToolCalls: []nous.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		nous.ToolErrorMessage("call_1", "get_weather", "the service is down"),
		nous.UserMessageParts(nous.TextPart("Here is a photo."), nous.ImageURLPart("https://example.com/a.png")),
	}
	fmt.Println(nous.Transcript(msgs))
	fmt.Printf("%q\n", nous.SummaryMessage(" The user asked for the weather; the service was down.\n").Content)
	// Output:
	// [tool result of read_file, call call_0]
	// notes.txt: buy milk
	//
	// [user]
	// What is the weather in Paris?
	//
	// [assistant]
	// (calls get_weather with {"city":"Paris"}, call call_1)
	//
	// [tool error of get_weather, call call_1]
	// the service is down
	//
	// [user]
	// Here is a photo.
	// (image_url)
	// "Summary of the earlier conversation:\n\nThe user asked for the weather; the service was down."
}
