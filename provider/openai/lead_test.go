package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
)

// A view with nothing to send (empty, or blank text only) goes as one user
// message, "Continue.": both APIs refuse a request without a message.
func TestNothingToSendSendsContinue(t *testing.T) {
	blank := nous.NewContext()
	must(t, blank.AddMessage(nous.UserMessage("  ")))
	for name, c := range map[string]*nous.Context{"empty": nous.NewContext(), "blank text only": blank} {
		var chat struct{ Messages json.RawMessage }
		var resp struct{ Input json.RawMessage }
		must(t, json.Unmarshal(sendChat(t, c), &chat))
		must(t, json.Unmarshal(sendResponses(t, c), &resp))
		want := []byte(`[{"content":"Continue.","role":"user"}]`)
		if !adapttest.SameJSON(t, chat.Messages, want) || !adapttest.SameJSON(t, resp.Input, want) {
			t.Errorf("%s: sent %s and %s", name, chat.Messages, resp.Input)
		}
	}
}
