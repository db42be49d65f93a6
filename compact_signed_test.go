package nous_test

import (
	"testing"

	"github.com/nous-go/nous"
)

// signedThinkingMsg is an assistant message of signed thinking alone, as
// adapters that store each block as a message of its own keep it.
func signedThinkingMsg(n int, sig string) nous.Message {
	m := nous.AssistantMessage("")
	m.Parts = []nous.ContentPart{nous.ThinkingPart(words(n), sig)}
	return m
}

// C4: signed thinking in an assistant message of its own stays with the
// call that follows it, under every option key that signs thinking. The
// keys are written out: they are stored in logs, and a log written before
// must still be read as signed.
func TestViewWithinKeepsSignedThinkingWithItsCall(t *testing.T) {
	for key, think := range map[string]nous.ContentPart{
		"signature":         nous.ThinkingPart(words(20), "sig"),
		"redacted_data":     {Type: nous.PartThinking, Options: map[string]any{"redacted_data": "EuYBCkQYAiJAgCs1Tq0Zq9r"}},
		"thought_signature": {Type: nous.PartThinking, Content: words(20), Options: map[string]any{"thought_signature": "c2lnbmF0dXJlIGJ5dGVz"}},
		"encrypted_content": {Type: nous.PartThinking, Content: words(20), Options: map[string]any{"id": "rs_1", "encrypted_content": "gAAAAABencrypted"}},
	} {
		t.Run(key, func(t *testing.T) {
			m := nous.AssistantMessage("")
			m.Parts = []nous.ContentPart{think}
			x := nous.ToolCall{ID: "c1", Name: "f"}
			c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage(words(100)), m, nous.AssistantMessage("", x),
				nous.ToolMessage("c1", "f", "r"), nous.AssistantMessage("done"), nous.UserMessage("u2"))
			cut := false
			for b := count(c); b > 0; b-- {
				v, err := c.ViewWithin(b)
				if err != nil {
					break
				}
				cut = cut || len(v) < c.Len()
				for i, m := range v {
					if len(m.ToolCalls) > 0 && len(v[i-1].Parts) == 0 {
						t.Fatalf("budget %d: the call is kept without the signed thinking before it: %v", b, roles(v))
					}
				}
			}
			if !cut {
				t.Fatal("no budget cut the view")
			}
		})
	}
}

// C4: signed reasoning stays with the call it belongs to, also when
// interleaved thinking is stored as two assistant messages of signed
// thinking before the call (or signed thinking, then a text message, then
// the call): no cut between the first and the call.
func TestViewWithinKeepsRunOfSignedThinkingWithItsCall(t *testing.T) {
	x := nous.ToolCall{ID: "c1", Name: "f"}
	for name, between := range map[string]nous.Message{
		"a second thinking message": signedThinkingMsg(5, "sig2"),
		"a text message":            nous.AssistantMessage("let me look that up"),
	} {
		t.Run(name, func(t *testing.T) {
			c := contextOf(t, nous.SystemMessage("s"), nous.UserMessage("u1"), signedThinkingMsg(100, "sig1"), between,
				nous.AssistantMessage("", x), nous.ToolMessage("c1", "f", "r"), nous.AssistantMessage("done"), nous.UserMessage("u2"))
			for b := count(c); b > 0; b-- {
				v, err := c.ViewWithin(b)
				if err != nil {
					break
				}
				for i, m := range v {
					if len(m.ToolCalls) > 0 && (len(v[i-2].Parts) == 0 || v[i-2].Parts[0].Options[nous.OptionSignature] != "sig1") {
						t.Fatalf("budget %d: the call is kept without the first signed thinking before it: %v", b, roles(v))
					}
				}
			}
		})
	}
}
