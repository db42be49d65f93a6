package nous_test

import (
	"context"
	"strings"
	"sync/atomic"
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

// RunToolCalls raises the tool events on the caller's goroutine: every
// call before any runs, then each result as it is added, in call order.
func TestRunToolCallsEmits(t *testing.T) {
	var got []string
	var running atomic.Bool
	c := nous.NewContext(nous.WithNotify(func(event string, payload any) {
		switch p := payload.(type) {
		case nous.ToolCall:
			if running.Load() {
				t.Errorf("%s %s after a tool ran", event, p.ID)
			}
			got = append(got, event+" "+p.ID+" "+string(p.Arguments))
		case nous.Message:
			got = append(got, event+" "+p.ToolCallID+" "+p.Content)
		}
	}))
	calls := []nous.ToolCall{{ID: "a", Name: "f", Arguments: []byte(`{"x":1}`)}, {ID: "b", Name: "f"}}
	if err := c.AddMessages(nous.UserMessage("go"), nous.AssistantMessage("", calls...)); err != nil {
		t.Fatal(err)
	}
	err := c.RunToolCalls(context.Background(), calls, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		running.Store(true)
		return nous.ToolResult{Content: "done " + rc.Call.ID}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`on_tool_call a {"x":1}`, "on_tool_call b ", "on_tool_response a done a", "on_tool_response b done b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
