package anthropic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
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

// Two assistant messages in a row are one turn, which starts with its
// thinking also when only the second message has any (after the first's
// text): the API refuses the last turn of a tool loop that does not ("a
// final assistant message must start with a thinking block").
func TestMergedTurnStartsWithThinking(t *testing.T) {
	c := nous.NewContext()
	second := msg(nous.AssistantMessage("", nous.ToolCall{ID: "toolu_1", Name: "f"}))
	second.Parts = []nous.ContentPart{signed(t, "Call f.", "sig")}
	must(t, c.AddMessages(msg(nous.UserMessage("q")), msg(nous.AssistantMessage("Let me look.")), second, msg(nous.ToolMessage("toolu_1", "f", "1"))))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1}
	if err := nousanthropic.Fill(&params, c); err != nil {
		return // refusing is fine
	}
	body := send(t, c)
	s := sentOf(t, body)
	if first := s.Messages[1].Content[0]["type"]; first != "thinking" {
		t.Errorf("the last tool-loop assistant turn starts with %v, not thinking: %s", first, body)
	}
}

// A turn the API paused, then the turn that went on with it (two assistant
// messages in a row, as a runtime stores the two responses), with
// interleaved thinking: the two go back as one turn in the order the API
// made them, the continuation's thinking after the paused search's result.
func TestPausedTurnContinuedKeepsOrder(t *testing.T) {
	paused, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"thinking","thinking":"Search first.","signature":"sigA"},
	{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	went, _, _ := nousanthropic.Message(decode(t, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"thinking","thinking":"Nothing found; answer.","signature":"sigB"},
	{"type":"text","text":"I found nothing."}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), paused, went, msg(nous.UserMessage("more"))))
	got := strings.Join(types(sentOf(t, send(t, c)).Messages[1].Content), ",")
	if want := "thinking,server_tool_use,web_search_tool_result,thinking,text"; got != want {
		t.Errorf("the paused and continued turn went back as %s, came as %s", got, want)
	}
}
