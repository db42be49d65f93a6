package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	nousopenai "github.com/nous-go/nous/provider/openai"
)

// longWords is the number of text deltas of the long replies.
const longWords = 400

// longChat returns the chunks of a Chat reply of longWords text deltas,
// as the API sends them, decoded.
func longChat(b *testing.B) []openai.ChatCompletionChunk {
	head := `{"id":"chatcmpl-long","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f33640a400","choices":[`
	lines := []string{head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"a1"}`}
	for i := range longWords {
		lines = append(lines, head+fmt.Sprintf(`{"index":0,"delta":{"content":"word%d "},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"b2"}`, i))
	}
	lines = append(lines, head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"c3"}`,
		head+`],"usage":{"prompt_tokens":40,"completion_tokens":400,"total_tokens":440,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"d4"}`)
	return decodeAll[openai.ChatCompletionChunk](b, lines)
}

// longResponses returns the events of a Responses API reply of longWords
// text deltas, as the API sends them, decoded.
func longResponses(b *testing.B) []responses.ResponseStreamEventUnion {
	var text strings.Builder
	lines := []string{`{"type":"response.created","sequence_number":0,"response":{"id":"resp_long","object":"response","created_at":1767225600,"status":"in_progress","model":"gpt-4.1-2025-04-14","output":[],"usage":null}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_long","type":"message","status":"in_progress","content":[],"role":"assistant"}}`,
		`{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_long","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`}
	for i := range longWords {
		w := fmt.Sprintf("word%d ", i)
		text.WriteString(w)
		lines = append(lines, fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_long","output_index":0,"content_index":0,"delta":%q,"logprobs":[],"obfuscation":"x1"}`, i+3, w))
	}
	t, _ := json.Marshal(text.String())
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + string(t) + `}`
	item := `{"id":"msg_long","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	lines = append(lines,
		`{"type":"response.output_text.done","sequence_number":1000,"item_id":"msg_long","output_index":0,"content_index":0,"text":`+string(t)+`,"logprobs":[]}`,
		`{"type":"response.content_part.done","sequence_number":1001,"item_id":"msg_long","output_index":0,"content_index":0,"part":`+part+`}`,
		`{"type":"response.output_item.done","sequence_number":1002,"output_index":0,"item":`+item+`}`,
		`{"type":"response.completed","sequence_number":1003,"response":{"id":"resp_long","object":"response","created_at":1767225600,"status":"completed","model":"gpt-4.1-2025-04-14","output":[`+item+`],"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":0},"output_tokens":400,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":440}}}`)
	return decodeAll[responses.ResponseStreamEventUnion](b, lines)
}

func decodeAll[E any](b *testing.B, lines []string) []E {
	out := make([]E, len(lines))
	for i, l := range lines {
		must(b, json.Unmarshal([]byte(l), &out[i]))
	}
	return out
}

// fixtureEvents returns the events of a recorded stream, decoded.
func fixtureEvents[E any](b *testing.B, name string) []E {
	return decodeAll[E](b, frameData(caseNamed(b, name).frames))
}

func perEvent(b *testing.B, events int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

// ChatStream against the SDK's ChatCompletionAccumulator on the same
// chunks: accumulating only, and with the final message made (ChatMessage
// of the SDK's accumulated completion).
func BenchmarkChatStream(b *testing.B) {
	for name, chunks := range map[string][]openai.ChatCompletionChunk{
		"text":  longChat(b),
		"calls": fixtureEvents[openai.ChatCompletionChunk](b, "chat_parallel_calls"),
	} {
		b.Run(name+"/nous", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousopenai.ChatStream
				for _, c := range chunks {
					_ = s.Add(c)
				}
			}
			perEvent(b, len(chunks))
		})
		b.Run(name+"/sdk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var acc openai.ChatCompletionAccumulator
				for _, c := range chunks {
					acc.AddChunk(c)
				}
			}
			perEvent(b, len(chunks))
		})
		b.Run(name+"/nous+message", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousopenai.ChatStream
				for _, c := range chunks {
					_ = s.Add(c)
				}
				if _, _, err := s.Message(); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b, len(chunks))
		})
		b.Run(name+"/sdk+message", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var acc openai.ChatCompletionAccumulator
				for _, c := range chunks {
					acc.AddChunk(c)
				}
				if _, _, err := nousopenai.ChatMessage(&acc.ChatCompletion); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b, len(chunks))
		})
	}
}

// ResponsesStream against a floor, the SDK having no accumulator for
// Responses: ranging over the events reading their type and delta; with
// the final message, against the floor plus ResponseMessage of the final
// event's response.
func BenchmarkResponsesStream(b *testing.B) {
	for name, events := range map[string][]responses.ResponseStreamEventUnion{
		"text":  longResponses(b),
		"calls": fixtureEvents[responses.ResponseStreamEventUnion](b, "responses_parallel_calls"),
	} {
		floor := func() *responses.Response {
			var n int
			var final *responses.Response
			for i := range events {
				switch events[i].Type {
				case "response.output_text.delta", "response.function_call_arguments.delta":
					n += len(events[i].Delta)
				case "response.completed":
					final = &events[i].Response
				}
			}
			if n == 0 {
				b.Fatal("no delta")
			}
			return final
		}
		b.Run(name+"/nous", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousopenai.ResponsesStream
				for _, e := range events {
					_ = s.Add(e)
				}
			}
			perEvent(b, len(events))
		})
		b.Run(name+"/floor", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				floor()
			}
			perEvent(b, len(events))
		})
		b.Run(name+"/nous+message", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousopenai.ResponsesStream
				for _, e := range events {
					_ = s.Add(e)
				}
				if _, _, err := s.Message(); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b, len(events))
		})
		b.Run(name+"/floor+message", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := nousopenai.ResponseMessage(floor()); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b, len(events))
		})
	}
}
