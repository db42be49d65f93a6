package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

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
	m, _, _ := nousanthropic.Message(resp)
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("When was Shannon born?")), m, msg(nous.UserMessage("Thanks."))))
	s := sentOf(t, send(t, adapttest.RoundTrip(t, c)))
	blocks := s.Messages[1].Content
	if cites, _ := blocks[0]["citations"].([]any); len(cites) != 1 {
		t.Errorf("the streamed block's citation was lost: kept %v, sent %v", m.Parts[0].Options, blocks)
	}
}
