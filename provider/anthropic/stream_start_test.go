package anthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A message_start may carry content blocks (the API sends none, but the
// event's message has room for them): they are the message's first
// blocks, as if each had started, and give no delta. So a recorded stream
// whose first blocks (the last perhaps halfway through its text) are
// folded into its message_start is, from there on, the same stream: after
// each later event its partial is the same, its
// deltas are the same (each with the Index it has in the whole stream, the
// carried blocks counted), and it ends as the same message, with the same
// usage.
func TestStreamMessageStartCarriesBlocks(t *testing.T) {
	for _, name := range cutCases {
		frames, body := recorded(t, name)
		want, wantUsage := imported(t, body)
		all := events(t, frames)
		whole, deltasBefore := replay(t, all)
		if len(whole) == 0 {
			t.Fatalf("%s: a stream without deltas", name)
		}
		for p, e := range all {
			switch {
			case e.Type == "content_block_start", e.Type == "message_delta":
			case e.Type == "content_block_delta" && (e.Delta.Type == "text_delta" || e.Delta.Type == "thinking_delta"):
			default:
				continue // the blocks carried are those started before p, whole or halfway through their text
			}
			t.Run(fmt.Sprintf("%s/from event %d", name, p), func(t *testing.T) {
				stream := append([]anthropic.MessageStreamEventUnion{carrying(t, all[:p])}, all[p:]...)
				var got []nous.Delta
				s := nousanthropic.MessageStream{OnDelta: func(d nous.Delta) { got = append(got, d) }}
				var ref nousanthropic.MessageStream
				for _, e := range all[:p] {
					adapttest.Must(t, ref.Add(e))
				}
				for i, e := range stream {
					adapttest.Must(t, s.Add(e))
					if i > 0 {
						adapttest.Must(t, ref.Add(e))
					}
					gm, gu := s.Partial()
					rm, ru := ref.Partial()
					if encoded(t, gm) != encoded(t, rm) || gu != ru {
						t.Fatalf("the carried message_start and %d events on: partial %s %+v, the whole stream's %s %+v", i, encoded(t, gm), gu, encoded(t, rm), ru)
					}
				}
				m, u, err := s.Message()
				if err != nil || encoded(t, m) != encoded(t, want) || u != wantUsage {
					t.Fatalf("%v:\n%s %+v\nwant\n%s %+v", err, encoded(t, m), u, encoded(t, want), wantUsage)
				}
				if rest := whole[deltasBefore[p]:]; !slices.Equal(got, rest) {
					t.Errorf("deltas\n%+v\nthe whole stream's from there on\n%+v", got, rest)
				}
			})
		}
	}
}

// replay reads events with a MessageStream and returns the deltas it gave
// and, for each event, the number given before it.
func replay(t *testing.T, events []anthropic.MessageStreamEventUnion) ([]nous.Delta, []int) {
	t.Helper()
	var deltas []nous.Delta
	before := make([]int, len(events))
	s := nousanthropic.MessageStream{OnDelta: func(d nous.Delta) { deltas = append(deltas, d) }}
	for i, e := range events {
		before[i] = len(deltas)
		adapttest.Must(t, s.Add(e))
	}
	return deltas, before
}

// spacedInput returns block with its input, if it has one, written with
// white space, as a model may write it: a block the message starts with has
// it compacted as the response not streamed has it.
func spacedInput(t *testing.T, block []byte) []byte {
	t.Helper()
	var fields map[string]json.RawMessage
	adapttest.Must(t, json.Unmarshal(block, &fields))
	input, ok := fields["input"]
	if !ok {
		return block
	}
	var spaced bytes.Buffer
	adapttest.Must(t, json.Indent(&spaced, input, "", "  "))
	field := append([]byte(`"input":`), input...)
	if bytes.Count(block, field) != 1 {
		t.Fatalf("the input of %s", block)
	}
	return bytes.Replace(block, field, append([]byte(`"input":`), spaced.Bytes()...), 1)
}

// carrying returns the message_start of events (a stream's first events,
// which end between blocks, or within a block's text) with the blocks they
// hold,
// as the SDK accumulates them (tool input spaced out), in its message's
// content.
func carrying(t *testing.T, events []anthropic.MessageStreamEventUnion) anthropic.MessageStreamEventUnion {
	t.Helper()
	var acc anthropic.Message
	open := -1
	for _, e := range events {
		adapttest.Must(t, acc.Accumulate(e))
		switch e.Type {
		case "content_block_start":
			open = int(e.Index)
		case "content_block_stop":
			open = -1
		}
	}
	if open >= 0 { // its JSON as it stands, which the SDK writes at a stop
		var stop anthropic.MessageStreamEventUnion
		adapttest.Must(t, stop.UnmarshalJSON(fmt.Appendf(nil, `{"type":"content_block_stop","index":%d}`, open)))
		adapttest.Must(t, acc.Accumulate(stop))
	}
	blocks := make([][]byte, len(acc.Content))
	for i := range acc.Content {
		blocks[i] = spacedInput(t, []byte(acc.Content[i].RawJSON()))
	}
	k := slices.IndexFunc(events, func(e anthropic.MessageStreamEventUnion) bool { return e.Type == "message_start" })
	if k < 0 {
		t.Fatal("no message_start")
	}
	// Spliced in, not marshalled: encoding/json would compact the input.
	start, empty := []byte(events[k].RawJSON()), []byte(`"content":[]`)
	if bytes.Count(start, empty) != 1 {
		t.Fatalf("a message_start with content: %s", start)
	}
	content := append(append([]byte(`"content":[`), bytes.Join(blocks, []byte(","))...), ']')
	b := bytes.Replace(start, empty, content, 1)
	var e anthropic.MessageStreamEventUnion
	adapttest.Must(t, e.UnmarshalJSON(b))
	if e.Type != "message_start" || len(e.Message.Content) != len(blocks) {
		t.Fatalf("a message_start carrying %d blocks: %s", len(blocks), b)
	}
	return e
}
