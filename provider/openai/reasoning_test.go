package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// Reasoning, then a message, then an image generation call: the items go
// back in the response's order, the reasoning directly before the message.
func TestReasoningBeforeItsFirstFollower(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here it is.","annotations":[]}]},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), m, msg(nous.UserMessage("Orange."))))
	got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
	if want := "<nil>:<nil> reasoning:rs_1 message:msg_1 image_generation_call:ig_1 <nil>:<nil>"; got != want {
		t.Errorf("items %s, want %s (the response's order)", got, want)
	}
}

// Parallel calls after one reasoning item, [rs_1, fc_1, fc_2], the first
// removed: fc_2 goes with its ID, so rs_1 goes with it (the API refuses an
// item with its ID without the reasoning item it came after).
func TestRemovedCallKeepsReasoning(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{\"n\":2}","status":"completed"}`))
	m.ToolCalls = m.ToolCalls[1:] // the user removed call_1
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_2", "f", "2"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte(`"id":"fc_2"`)) && !bytes.Contains(sent, []byte(`"rs_1"`)) {
		t.Errorf("fc_2 went with its item ID but without the reasoning item rs_1 it came after: %s", sent)
	}
}

// Parallel calls after one reasoning item: when the first call is removed,
// the reasoning goes directly before the second, and the items keep the
// response's order.
func TestReasoningBeforeNextCallLeft(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{}","status":"completed"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Both.","annotations":[]}]}`))
	m.ToolCalls = m.ToolCalls[1:]
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_2", "f", "2"))))
	var ids []string
	for _, it := range inputItems(t, sendResponses(t, c)) {
		ids = append(ids, fmt.Sprint(it["id"]))
	}
	if got, want := strings.Join(ids, " "), "<nil> rs_1 fc_2 rs_2 msg_1 <nil>"; got != want {
		t.Errorf("items %s, want %s", got, want)
	}
}

// Two reasoning items in a row before a call: the first, whose next item is
// a reasoning item, goes back too, encrypted content and all, while its
// follower is there.
func TestConsecutiveReasoningKept(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
	sent := sendResponses(t, c)
	if !bytes.Contains(sent, []byte("rs_1")) || !bytes.Contains(sent, []byte("gAAAA1")) {
		t.Errorf("reasoning item rs_1 was lost on the round trip: %s", sent)
	}
}

// A reasoning item's summary of two parts goes back as two parts, not one
// joined with "\n\n".
func TestReasoningSummaryPartsKept(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"A"},{"type":"summary_text","text":"B"}],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	var got struct {
		Input []map[string]any `json:"input"`
	}
	must(t, json.Unmarshal(sendResponses(t, c), &got))
	if s := got.Input[1]["summary"].([]any); len(s) != 2 {
		t.Errorf("summary went back as %v, came as 2 parts", s)
	}
}

// Reasoning before an item a message does not keep (a hosted tool's call)
// cannot go back, and the message item after the hosted call goes without
// its ID: the API refuses an item with its ID without its reasoning.
func TestReasoningBeforeHostedCallDropped(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Found it.","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	sent := sendResponses(t, c)
	if bytes.Contains(sent, []byte("rs_1")) || bytes.Contains(sent, []byte("msg_1")) || !bytes.Contains(sent, []byte("Found it.")) {
		t.Errorf("sent %s", sent)
	}
}

// Reasoning, a hosted tool's call (web search), then a function call: the
// reasoning cannot go back without the hosted call, so the function call
// goes without its item ID (the API refuses an item with its ID without its
// reasoning item).
func TestCallAfterHostedCallWithoutID(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "1"))))
	got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
	if strings.Contains(got, "function_call:fc_1") && !strings.Contains(got, "reasoning:rs_1") {
		t.Errorf("items %s: fc_1 goes with its item ID without the reasoning item rs_1 it came after", got)
	}
}

// Reasoning, a hosted tool's call (web search), then the image of an image
// generation call: the reasoning cannot go back, and the image item, which
// cannot go without its ID, is not sent (it stays in the message).
func TestImageAfterHostedReasoningNotSent(t *testing.T) {
	for name, output := range map[string]string{
		"image": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"cat photos"}},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`,
		"message and image": `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"cat photos"}},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here is a cat.","annotations":[]}]},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := read(t, responseOf(t, output))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("Find a cat and draw it.")), m, msg(nous.UserMessage("Make it orange."))))
			got := strings.Join(itemIDs(t, sendResponses(t, c)), " ")
			if strings.Contains(got, ":ig_1") && !strings.Contains(got, "reasoning:rs_1") {
				t.Errorf("items %s: ig_1 goes with its item ID without the reasoning item rs_1 it came after", got)
			}
		})
	}
}

// dropThinking removes the thinking parts of m whose ID is among ids (all
// of them, without ids), as a runtime that trims reasoning does.
func dropThinking(m *nous.Message, ids ...string) {
	m.Parts = slices.DeleteFunc(slices.Clone(m.Parts), func(p nous.ContentPart) bool {
		return p.Type == nous.PartThinking && (len(ids) == 0 || slices.Contains(ids, p.Options[nousopenai.OptionItemID].(string)))
	})
}

// legacy removes the record of the reasoning each item came after, as a
// message recorded before there was one has it.
func legacy(m *nous.Message) {
	delete(m.Metadata, nousopenai.MetadataReasoning)
	for _, p := range m.Parts {
		delete(p.Options, nousopenai.MetadataReasoning)
	}
	for _, tc := range m.ToolCalls {
		delete(tc.Metadata, nousopenai.MetadataReasoning)
	}
}

// Items whose reasoning item is not sent (the caller dropped the thinking
// parts, or some of them) go without their item IDs, and an image item not
// at all: the API refuses an item with its ID without the reasoning item
// it came after. Those whose reasoning item goes keep theirs. A message
// recorded before the record of each item's reasoning existed is told by
// its reasoning parts' followers; one without any reasoning part keeps its
// IDs (a response without reasoning, most likely).
func TestItemsWithoutTheirReasoning(t *testing.T) {
	const (
		parallel = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{}","status":"completed"}`
		twoSteps = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Looking.","annotations":[]}]},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
		twoCalls = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"function_call","id":"fc_2","call_id":"call_2","name":"f","arguments":"{}","status":"completed"}`
		answer = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Paris.","annotations":[]}]}`
		image = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"png"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"A cat.","annotations":[]}]}`
		before = `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Calling.","annotations":[]}]},
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
		plain = `
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Calling.","annotations":[]}]},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
	)
	for _, tt := range []struct {
		name, output string
		edit         func(m *nous.Message)
		want         string // the items of the assistant turn, type:id (an easy message has neither)
	}{
		{"parallel calls, thinking dropped", parallel, func(m *nous.Message) { dropThinking(m) },
			"function_call:<nil> function_call:<nil>"},
		{"parallel calls, kept", parallel, func(*nous.Message) {},
			"reasoning:rs_1 function_call:fc_1 function_call:fc_2"},
		{"the second step's reasoning dropped", twoSteps, func(m *nous.Message) { dropThinking(m, "rs_2") },
			"reasoning:rs_1 message:msg_1 function_call:<nil>"},
		{"the first step's reasoning dropped", twoSteps, func(m *nous.Message) { dropThinking(m, "rs_1") },
			"<nil>:<nil> reasoning:rs_2 function_call:fc_1"},
		{"an answer, thinking dropped", answer, func(m *nous.Message) { dropThinking(m) },
			"<nil>:<nil>"},
		{"an image, thinking dropped", image, func(m *nous.Message) { dropThinking(m) },
			"<nil>:<nil>"},
		{"recorded before the record, kept", twoCalls, legacy,
			"reasoning:rs_1 function_call:fc_1 reasoning:rs_2 function_call:fc_2"},
		{"recorded before the record, a reasoning part dropped", twoCalls, func(m *nous.Message) { legacy(m); dropThinking(m, "rs_1") },
			"function_call:<nil> reasoning:rs_2 function_call:fc_2"},
		{"recorded before the record, every reasoning part dropped", twoCalls, func(m *nous.Message) { legacy(m); dropThinking(m) },
			"function_call:fc_1 function_call:fc_2"},
		{"a message before the reasoning", before, func(*nous.Message) {},
			"message:msg_1 reasoning:rs_1 function_call:fc_1"},
		{"no reasoning", plain, func(*nous.Message) {},
			"message:msg_1 function_call:fc_1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := read(t, responseOf(t, tt.output))
			tt.edit(&m)
			c := nous.NewContext()
			must(t, c.AddMessage(msg(nous.UserMessage("q"))))
			must(t, c.AddMessage(m))
			for _, tc := range m.ToolCalls {
				must(t, c.AddMessage(msg(nous.ToolMessage(tc.ID, "f", "ok"))))
			}
			c = adapttest.RoundTrip(t, c)
			if got := turn(t, sendResponses(t, c)); got != tt.want {
				t.Errorf("items %s, want %s", got, tt.want)
			}
		})
	}
}

// A reasoning item that came without its encrypted content goes back by
// its ID, which the API looks up among the items it stored: with
// params.Store false it stored none, and refuses the request ("Items are
// not persisted when store is set to false"), so the item is dropped and
// the items after it go without their IDs. One with its encrypted content
// goes back whatever Store says, and so does one without when Store is
// unset (the API stores by default) or true.
func TestReasoningByReferenceWithoutStore(t *testing.T) {
	const (
		byReference = `
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look it up."}]},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
		encrypted = `
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
	)
	for _, tt := range []struct {
		name, output string
		store        param.Opt[bool]
		want         string
	}{
		{"by reference, store unset", byReference, param.Opt[bool]{}, "reasoning:rs_1 function_call:fc_1"},
		{"by reference, store true", byReference, openai.Bool(true), "reasoning:rs_1 function_call:fc_1"},
		{"by reference, store false", byReference, openai.Bool(false), "function_call:<nil>"},
		{"encrypted, store false", encrypted, openai.Bool(false), "reasoning:rs_1 function_call:fc_1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := read(t, responseOf(t, tt.output))
			c := nous.NewContext()
			must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "f", "ok"))))
			body := sendResponsesWith(t, c, responses.ResponseNewParams{Store: tt.store})
			if got := turn(t, body); got != tt.want {
				t.Errorf("items %s, want %s", got, tt.want)
			}
		})
	}
}

// turn returns "type:id" of the items of a Responses body past the first
// (the user message), the outputs of calls left out.
func turn(t *testing.T, body []byte) string {
	t.Helper()
	var got []string
	for _, id := range itemIDs(t, body)[1:] {
		if !strings.HasPrefix(id, "function_call_output:") {
			got = append(got, id)
		}
	}
	return strings.Join(got, " ")
}

// An image of an image generation call that came without an item ID (a
// server that speaks the API) stays in the message and is not sent: the
// item cannot go without its ID, and the rest of the turn goes.
func TestImageWithoutItemIDNotSent(t *testing.T) {
	m, _ := read(t, responseOf(t, `
	{"type":"image_generation_call","status":"completed","result":"UklGRg==","output_format":"png"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"A cat.","annotations":[]}]}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), m, msg(nous.UserMessage("More."))))
	if got := turn(t, sendResponses(t, c)); got != "message:msg_1 <nil>:<nil>" {
		t.Errorf("items %s", got)
	}
}
