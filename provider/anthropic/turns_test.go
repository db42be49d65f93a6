package anthropic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// Two assistant messages in a row (a runtime stored two responses of one
// turn), each with signed thinking: they go as one turn whose thinking comes
// first, the first message's before the second's, then the rest in order.
func TestMergedTurnsKeepThinkingInOrder(t *testing.T) {
	first := msg(nous.AssistantMessage("Let me look."))
	first.Parts = []nous.ContentPart{signed(t, "Look first.", "sigA")}
	second := msg(nous.AssistantMessage("", nous.ToolCall{ID: "toolu_1", Name: "f"}))
	second.Parts = []nous.ContentPart{signed(t, "Now call f.", "sigB")}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), first, second, msg(nous.ToolMessage("toolu_1", "f", "1"))))
	var got []string
	for _, b := range sentOf(t, send(t, c)).Messages[1].Content {
		got = append(got, fmt.Sprint(b["type"], ":", b["signature"]))
	}
	if want := "thinking:sigA thinking:sigB text:<nil> tool_use:<nil>"; strings.Join(got, " ") != want {
		t.Errorf("the merged turn went as %s, want %s", strings.Join(got, " "), want)
	}
}
