package nous_test

import (
	"testing"

	"github.com/nous-go/nous"
)

// Emit calls the event's callback, then Notify, each with the event and
// its payload; a delta goes under the name of its kind.
func TestEmit(t *testing.T) {
	var got []string
	record := func(who string) nous.Callback {
		return func(event string, payload any) { got = append(got, who+" "+event+" "+fmtPayload(payload)) }
	}
	c := nous.NewContext(nous.WithCallbacks(map[string]nous.Callback{
		nous.CallbackLLMNewDelta:         record("cb"),
		nous.CallbackLLMNewThinkingDelta: record("cb"),
		nous.CallbackToolCallDelta:       record("cb"),
		nous.CallbackLLMNewMessage:       record("cb"),
	}))
	c.Notify = record("notify")
	c.EmitDelta(nous.Delta{Kind: nous.DeltaText, Text: "a"})
	c.EmitDelta(nous.Delta{Kind: nous.DeltaThinking, Text: "b"})
	c.EmitDelta(nous.Delta{Kind: nous.DeltaToolCall, Index: 1, ToolCallID: "c1", ToolName: "f", Text: "{"})
	c.EmitDelta(nous.Delta{Kind: "other", Text: "dropped"})
	c.Emit(nous.CallbackLLMNewMessage, nous.AssistantMessage("ab"))
	c.Emit("unheard", 1)
	want := []string{
		"cb on_llm_new_delta a", "notify on_llm_new_delta a",
		"cb on_llm_new_thinking_delta b", "notify on_llm_new_thinking_delta b",
		"cb on_tool_call_delta c1 f 1 {", "notify on_tool_call_delta c1 f 1 {",
		"cb on_llm_new_message ab", "notify on_llm_new_message ab",
		"notify unheard ?",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %q, want %q", i, got[i], want[i])
		}
	}
	var none nous.Context
	none.EmitDelta(nous.Delta{Kind: nous.DeltaText, Text: "no callbacks"}) // the zero context has none
}

func fmtPayload(p any) string {
	switch p := p.(type) {
	case string:
		return p
	case nous.Delta:
		return p.ToolCallID + " " + p.ToolName + " " + string(rune('0'+p.Index)) + " " + p.Text
	case nous.Message:
		return p.Text()
	}
	return "?"
}

// An interrupted reply is marked so, and survives a save and a load so.
func TestInterrupted(t *testing.T) {
	m := nous.AssistantMessage("half a")
	if m.Interrupted() {
		t.Fatal("a new message is interrupted")
	}
	m.Metadata = map[string]any{nous.MetadataInterrupted: true}
	c := nous.NewContext(nous.WithMessages(nous.UserMessage("hi"), m))
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	back, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Messages()[1]; !got.Interrupted() || got.Text() != "half a" {
		t.Errorf("after a round trip: %+v", got)
	}
	if (nous.Message{Role: nous.RoleAssistant, Metadata: map[string]any{nous.MetadataInterrupted: "yes"}}).Interrupted() {
		t.Error("a mark that is not true counts")
	}
}
