package openai_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	nousopenai "github.com/nous-go/nous/provider/openai"
)

// streamSeeds adds the events of each recorded stream of an API as a
// seed: one event's JSON a line.
func streamSeeds(f *testing.F, prefix string) {
	for _, sc := range streamCases(f) {
		if strings.HasPrefix(sc.name, prefix) {
			f.Add([]byte(strings.Join(frameData(sc.frames), "\n")))
		}
	}
}

// checkFuzzedPartial checks the partial of an accumulator fed arbitrary
// events: the rules of a partial, its usage no more than the final one
// when the stream ended, and a context that takes it and sends.
func checkFuzzedPartial(t *testing.T, acc streamAcc, prefixOfFinal bool) {
	final, finalUsage, err := acc.Message()
	m, u := acc.Partial()
	text := m.Text()
	if err == nil && prefixOfFinal {
		text = final.Text()
		if u.Requests > finalUsage.Requests || u.InputTokens > finalUsage.InputTokens || u.OutputTokens > finalUsage.OutputTokens {
			t.Errorf("partial usage %+v, more than the final %+v", u, finalUsage)
		}
	}
	checkPartialMessage(t, m, text)
	if m.Role == "" {
		return
	}
	c := userContext(t)
	if err := c.AddMessage(m); err != nil {
		t.Fatalf("the context refuses the partial: %v", err)
	}
	checkSends(t, c)
}

// FuzzChatStream: any chunks the SDK decodes, in any order, never panic
// ChatStream, and its partial keeps the rules: no tool call, text that the
// final message begins with, a context that sends.
func FuzzChatStream(f *testing.F) {
	streamSeeds(f, "chat_")
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}` + "\n" +
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":9223372036854775807}]},"finish_reason":"tool_calls"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return // the API sends UTF-8
		}
		var s nousopenai.ChatStream
		for line := range strings.Lines(string(data)) {
			var chunk openai.ChatCompletionChunk
			if json.Unmarshal([]byte(line), &chunk) == nil {
				_ = s.Add(chunk)
			}
		}
		checkFuzzedPartial(t, &s, true)
	})
}

// FuzzResponsesStream: any events the SDK decodes, in any order, never
// panic ResponsesStream, and its partial keeps the rules: no tool call,
// plain thinking, no item IDs, a context that sends.
func FuzzResponsesStream(f *testing.F) {
	streamSeeds(f, "responses_")
	f.Add([]byte(`{"type":"response.output_text.delta","output_index":3,"content_index":-2,"delta":"x"}` + "\n" +
		`{"type":"response.reasoning_summary_text.delta","output_index":3,"summary_index":5,"delta":"y"}` + "\n" +
		`{"type":"response.output_item.done","output_index":3,"item":{"type":"reasoning","summary":[{"text":"s"}],"encrypted_content":"e"}}` + "\n" +
		`{"type":"response.failed","response":{"usage":{"input_tokens":3}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		var s nousopenai.ResponsesStream
		for line := range strings.Lines(string(data)) {
			var e responses.ResponseStreamEventUnion
			if json.Unmarshal([]byte(line), &e) == nil {
				_ = s.Add(e)
			}
		}
		checkFuzzedPartial(t, &s, false)
	})
}
