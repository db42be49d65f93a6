package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A turn the API paused ends with a server_tool_use block that has no
// result yet, which the API takes only in the last message: when the
// conversation goes on without that turn's rest (a user writes next), the
// block is not sent.
func TestPausedServerToolUseNotLast(t *testing.T) {
	m, _ := nousanthropic.Message(decode(t, `{"id":"msg_p","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"text","text":"Let me search."},
	{"type":"server_tool_use","id":"srvtoolu_p","name":"web_search","input":{"query":"q"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Look it up.")), m, msg(nous.UserMessage("Never mind, just answer."))))
	s := sentOf(t, send(t, c))
	results := map[string]bool{}
	for _, m := range s.Messages {
		for _, b := range m.Content {
			if strings.HasSuffix(b["type"].(string), "_tool_result") {
				results[b["tool_use_id"].(string)] = true
			}
		}
	}
	for k, m := range s.Messages[:len(s.Messages)-1] {
		for _, b := range m.Content {
			if b["type"] == "server_tool_use" && !results[b["id"].(string)] {
				t.Errorf("messages.%d: server_tool_use %s sent without its result, not in the last message (the API refuses it): %v",
					k, b["id"], types(m.Content))
			}
		}
	}
}

// accumulate builds a message from stream events as a streaming client does.
func accumulate(t *testing.T, events ...string) *anthropic.Message {
	t.Helper()
	var m anthropic.Message
	for _, e := range events {
		var ev anthropic.MessageStreamEventUnion
		must(t, json.Unmarshal([]byte(e), &ev))
		must(t, m.Accumulate(ev))
	}
	return &m
}

// A streamed answer with a citation (its block starts with "citations": []
// and each citation comes as a citations_delta) keeps the citation.
func TestStreamedCitationsKept(t *testing.T) {
	resp := accumulate(t,
		`{"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Shannon was born in 1916."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://en.wikipedia.org/wiki/Claude_Shannon","title":"Claude Shannon","encrypted_index":"Eo8BCioIAhgB","cited_text":"Claude Elwood Shannon (April 30, 1916"}}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}`,
		`{"type":"message_stop"}`)
	if len(resp.Content) != 1 || len(resp.Content[0].Citations) != 1 {
		t.Fatalf("accumulated %s", resp.RawJSON())
	}
	m, _ := nousanthropic.Message(resp)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("When was Shannon born?")), m, msg(nous.UserMessage("Thanks."))))
	s := sentOf(t, send(t, adapttest.RoundTrip(t, c)))
	blocks := s.Messages[1].Content
	if cites, _ := blocks[0]["citations"].([]any); len(cites) != 1 {
		t.Errorf("the streamed block's citation was lost: kept %v, sent %v", m.Parts[0].Options, blocks)
	}
}

// A blank text block keeps its place in the order Message recorded: the
// answer, which cites the search, goes back after the search.
func TestBlankTextKeepsOrder(t *testing.T) {
	const response = `{"id":"msg_b","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"text","text":"\n\n"},
	{"type":"server_tool_use","id":"srvtoolu_b","name":"web_search","input":{"query":"q"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_b","content":[{"type":"web_search_result","url":"https://example.com","title":"E","encrypted_content":"EqA","page_age":null}]},
	{"type":"text","text":"The answer.","citations":[{"type":"web_search_result_location","url":"https://example.com","title":"E","encrypted_index":"Eo8","cited_text":"c"}]}],
	"usage":{"input_tokens":1,"output_tokens":1}}`
	m, _ := nousanthropic.Message(decode(t, response))
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.UserMessage("more"))))
	got := strings.Join(types(sentOf(t, send(t, c)).Messages[1].Content), ",")
	if want := "server_tool_use,web_search_tool_result,text"; got != want {
		t.Errorf("the turn went back as %s; it came as text(blank),%s", got, want)
	}
}

// A turn the API paused, then the turn that went on with it (two assistant
// messages in a row, as a runtime stores the two responses), with
// interleaved thinking: the two go back as one turn in the order the API
// made them, the continuation's thinking after the paused search's result.
func TestPausedTurnContinuedKeepsOrder(t *testing.T) {
	paused, _ := nousanthropic.Message(decode(t, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"thinking","thinking":"Search first.","signature":"sigA"},
	{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}],
	"usage":{"input_tokens":1,"output_tokens":1}}`))
	went, _ := nousanthropic.Message(decode(t, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
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
