package gemini_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// longText returns the chunks of a long text reply of n chunks, decoded
// as the SDK decodes them, and the response not streamed of it.
func longText(b *testing.B, n int) ([]*genai.GenerateContentResponse, *genai.GenerateContentResponse) {
	var frames []string
	var whole strings.Builder
	for i := range n {
		text := fmt.Sprintf("and step %d of the plan, which goes on ", i)
		whole.WriteString(text)
		finish := ""
		if i == n-1 {
			finish = `"finishReason": "STOP",`
		}
		frames = append(frames, fmt.Sprintf(`data: {"candidates": [{"content": {"parts": [{"text": %q}],"role": "model"},%s"index": 0}],"usageMetadata": {"promptTokenCount": 900,"candidatesTokenCount": %d,"totalTokenCount": %d},"modelVersion": "gemini-2.5-flash","responseId": "long1"}`,
			text, finish, 9*(i+1), 900+9*(i+1)))
	}
	resp := &genai.GenerateContentResponse{ModelVersion: "gemini-2.5-flash", ResponseID: "long1",
		Candidates:    []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: whole.String()}}}, FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 900, CandidatesTokenCount: int32(9 * n), TotalTokenCount: int32(900 + 9*n)}}
	return chunksOf(b, frames), resp
}

// BenchmarkContentStream is the cost of ContentStream per chunk on a long
// text reply (300 chunks) and on a reply of parallel calls, beside a floor
// that only ranges over the chunks reading their parts (genai has no
// accumulator of its own); then with the message made at the end, beside
// the floor and Message of the response not streamed.
func BenchmarkContentStream(b *testing.B) {
	text, textWhole := longText(b, 300)
	frames, body := fixture(b, "parallel_calls")
	var callsWhole genai.GenerateContentResponse
	must(b, json.Unmarshal([]byte(body), &callsWhole))
	for _, tc := range []struct {
		name   string
		chunks []*genai.GenerateContentResponse
		whole  *genai.GenerateContentResponse
	}{{"long_text", text, textWhole}, {"parallel_calls", chunksOf(b, frames), &callsWhole}} {
		perEvent := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tc.chunks)), "ns/event")
		}
		b.Run(tc.name+"/accumulate", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousgemini.ContentStream
				for _, c := range tc.chunks {
					if err := s.Add(c); err != nil {
						b.Fatal(err)
					}
				}
			}
			perEvent(b)
		})
		b.Run(tc.name+"/floor", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += floor(tc.chunks)
			}
			perEvent(b)
		})
		b.Run(tc.name+"/accumulate+message", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s nousgemini.ContentStream
				for _, c := range tc.chunks {
					if err := s.Add(c); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := s.Message(); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
		b.Run(tc.name+"/floor+message", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += floor(tc.chunks)
				if _, _, err := nousgemini.Message(tc.whole); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
	}
}

// floor reads the parts of chunks as any reader of a stream must: the
// text of each part of candidate 0 and its calls.
func floor(chunks []*genai.GenerateContentResponse) int {
	n := 0
	for _, c := range chunks {
		if len(c.Candidates) == 0 || c.Candidates[0].Content == nil {
			continue
		}
		for _, p := range c.Candidates[0].Content.Parts {
			n += len(p.Text)
			if p.FunctionCall != nil {
				n += len(p.FunctionCall.Name)
			}
		}
	}
	return n
}
