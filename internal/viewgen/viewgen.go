// Package viewgen makes random conversations for the property tests of the
// provider adapters: parallel tool calls, results in any order, missing or
// stray, blank text, images and files, thinking of every provider, system
// messages anywhere, arguments empty or not objects now and then, call IDs
// numbered per turn (call_0 every turn) or with characters some APIs refuse.
package viewgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/nous-go/nous"
)

var providers = []string{"anthropic", "openai", "gemini", ""}

var texts = []string{"hello", "  ", "", "what is the weather?", "ok\n", "\t", "résumé é"}

// View returns a random conversation of about n messages. Most are views
// a provider takes; some break the pairing or carry content some provider
// refuses.
func View(r *rand.Rand, n int) []nous.Message {
	var out []nous.Message
	calls := 0
	if r.IntN(5) > 0 { // most conversations start with the user
		out = append(out, user(r))
	}
	for len(out) < n {
		switch k := r.IntN(10); {
		case k < 3:
			out = append(out, user(r))
		case k < 4:
			out = append(out, nous.SystemMessage(texts[r.IntN(len(texts))]+"system"))
		default:
			a, ids := assistant(r, &calls)
			out = append(out, a)
			out = append(out, results(r, a, ids)...)
		}
	}
	return out
}

func user(r *rand.Rand) nous.Message {
	m := nous.UserMessage(texts[r.IntN(len(texts))])
	for range r.IntN(3) {
		switch r.IntN(5) {
		case 0:
			m.Parts = append(m.Parts, nous.TextPart(texts[r.IntN(len(texts))]))
		case 1:
			m.Parts = append(m.Parts, nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}})
		case 2:
			m.Parts = append(m.Parts, nous.ContentPart{Type: nous.PartImageURL, Content: "https://example.com/a.png", Options: map[string]any{"media_type": "image/png"}})
		case 3:
			m.Parts = append(m.Parts, nous.ContentPart{Type: nous.PartFile, Content: "JVBERi0=", Options: map[string]any{"media_type": "application/pdf"}})
		case 4:
			m.Parts = append(m.Parts, nous.ContentPart{Type: nous.PartFileURL, Content: "https://example.com/a.pdf", Options: map[string]any{"media_type": "application/pdf"}})
		}
	}
	return m
}

func assistant(r *rand.Rand, calls *int) (nous.Message, []string) {
	m := nous.AssistantMessage(texts[r.IntN(len(texts))])
	if r.IntN(3) == 0 {
		p := nous.ThinkingPart("thinking "+texts[r.IntN(len(texts))], fmt.Sprint("sig", r.IntN(100)))
		if prov := providers[r.IntN(len(providers))]; prov != "" {
			p.Options["provider"] = prov
			p.Options["id"] = fmt.Sprint("rs_", r.IntN(100))
		}
		m.Parts = append(m.Parts, p)
	}
	var ids []string
	numbering := r.IntN(4) // 0: a server that numbers calls per turn; 1: IDs with characters some APIs refuse
	for k := range r.IntN(4) {
		*calls++
		id := fmt.Sprint("call_", *calls)
		switch numbering {
		case 0:
			id = fmt.Sprint("call_", k)
		case 1:
			id = fmt.Sprintf("functions.lookup:%d", *calls)
		}
		args := json.RawMessage(`{"city":"Paris","n":1}`)
		switch r.IntN(12) {
		case 0:
			args = nil
		case 1:
			args = json.RawMessage(`[1]`)
		}
		tc := nous.ToolCall{ID: id, Name: fmt.Sprint("tool", r.IntN(3)), Arguments: args}
		if r.IntN(3) == 0 {
			tc.Metadata = map[string]any{"thought_signature": "c2ln"}
		}
		m.ToolCalls = append(m.ToolCalls, tc)
		ids = append(ids, id)
	}
	return m, ids
}

// results answers the calls ids of a, mostly each once in some order;
// now and then one is missing, a stray one comes, or another message comes
// between.
func results(r *rand.Rand, a nous.Message, ids []string) []nous.Message {
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var out []nous.Message
	for k, id := range ids {
		if r.IntN(25) == 0 {
			continue // missing
		}
		if k > 0 && r.IntN(30) == 0 {
			out = append(out, nous.UserMessage("between"))
		}
		name := a.ToolCalls[0].Name
		for _, tc := range a.ToolCalls {
			if tc.ID == id {
				name = tc.Name
			}
		}
		if r.IntN(5) == 0 {
			name = "" // a result that does not say its tool's name
		}
		t := nous.ToolMessage(id, name, texts[r.IntN(len(texts))])
		if r.IntN(6) == 0 {
			t = nous.ToolErrorMessage(id, name, "failed")
		}
		out = append(out, t)
	}
	if r.IntN(30) == 0 {
		out = append(out, nous.ToolMessage("stray", "f", "x"))
	}
	return out
}

// Refused is a view a provider refuses, where, and why.
type Refused struct {
	Name   string
	View   []nous.Message
	Index  int    // the view index the error names
	CallID string // the call it names
	Want   error  // the sentinel it wraps
}

// Broken returns the views every provider refuses: the failure classes of
// tool-call pairing.
func Broken() []Refused {
	call := func(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }
	return []Refused{
		{"orphaned call after a cut", []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1")), nous.UserMessage("next")}, 2, "c1", nous.ErrUnpaired},
		{"orphaned result at the start", []nous.Message{nous.ToolMessage("c0", "f", "old"), nous.UserMessage("q")}, 0, "c0", nous.ErrUnpaired},
		{"3 calls with 2 results", []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1"), call("c2"), call("c3")),
			nous.ToolMessage("c1", "f", "1"), nous.ToolMessage("c3", "f", "3")}, 3, "c2", nous.ErrUnpaired},
		{"a system message between a call and its results", []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1")),
			nous.SystemMessage("note"), nous.ToolMessage("c1", "f", "1")}, 2, "c1", nous.ErrUnpaired},
		{"a tool result after user text", []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1")),
			nous.ToolMessage("c1", "f", "1"), nous.UserMessage("more"), nous.ToolMessage("c1", "f", "again")}, 4, "c1", nous.ErrUnpaired},
	}
}

// Context returns a context of a random conversation, with a system prompt
// or without; messages the context refuses are left out of it.
func Context(r *rand.Rand) *nous.Context {
	prompt := []string{"", "Be brief."}[r.IntN(2)]
	c := nous.NewContext(nous.WithSystemPrompt(prompt))
	for _, m := range View(r, 1+r.IntN(14)) {
		c.AddMessage(m)
	}
	return c
}
