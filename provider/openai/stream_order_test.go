package openai_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	nousopenai "github.com/nous-go/nous/provider/openai"
)

// interleave returns the items of queues merged in a random order that
// keeps the order of each queue.
func interleave[T any](r *rand.Rand, queues [][]T) []T {
	queues = append([][]T(nil), queues...)
	var out []T
	for {
		var open []int
		for i, q := range queues {
			if len(q) > 0 {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		i := open[r.IntN(len(open))]
		out, queues[i] = append(out, queues[i][0]), queues[i][1:]
	}
}

// The chunks of parallel tool calls in any interleaving of their indexes
// (each index's chunks in their order) make the same message.
func TestChatStreamCallsInAnyOrder(t *testing.T) {
	sc := caseNamed(t, "chat_parallel_calls")
	want, wantUsage := sc.api.imp(t, sc.body)
	var before, after []openai.ChatCompletionChunk
	byIndex := map[int64][]openai.ChatCompletionChunk{}
	for _, data := range frameData(sc.frames) {
		var chunk openai.ChatCompletionChunk
		must(t, json.Unmarshal([]byte(data), &chunk))
		switch {
		case len(chunk.Choices) == 1 && len(chunk.Choices[0].Delta.ToolCalls) == 1:
			i := chunk.Choices[0].Delta.ToolCalls[0].Index
			byIndex[i] = append(byIndex[i], chunk)
		case len(byIndex) == 0:
			before = append(before, chunk)
		default:
			after = append(after, chunk)
		}
	}
	if len(byIndex) != 3 {
		t.Fatalf("%d calls in the fixture", len(byIndex))
	}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		var s nousopenai.ChatStream
		order := append(append(before, interleave(r, [][]openai.ChatCompletionChunk{byIndex[0], byIndex[1], byIndex[2]})...), after...)
		for _, chunk := range order {
			must(t, s.Add(chunk))
		}
		m, u, err := s.Message()
		if err != nil || messageJSON(t, m) != messageJSON(t, want) || u != wantUsage {
			t.Fatalf("seed %d: %v\n%s", seed, err, messageJSON(t, m))
		}
	}
}

// The events of parallel function calls in any interleaving of their
// output items (each item's events in their order) make the same message.
func TestResponsesStreamItemsInAnyOrder(t *testing.T) {
	sc := caseNamed(t, "responses_parallel_calls")
	want, wantUsage := sc.api.imp(t, sc.body)
	var before, after []responses.ResponseStreamEventUnion
	byItem := map[int64][]responses.ResponseStreamEventUnion{}
	for _, data := range frameData(sc.frames) {
		var e responses.ResponseStreamEventUnion
		must(t, json.Unmarshal([]byte(data), &e))
		switch {
		case e.JSON.OutputIndex.Valid():
			byItem[e.OutputIndex] = append(byItem[e.OutputIndex], e)
		case len(byItem) == 0:
			before = append(before, e)
		default:
			after = append(after, e)
		}
	}
	if len(byItem) != 3 {
		t.Fatalf("%d items in the fixture", len(byItem))
	}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 2))
		var s nousopenai.ResponsesStream
		order := append(append(before, interleave(r, [][]responses.ResponseStreamEventUnion{byItem[0], byItem[1], byItem[2]})...), after...)
		for _, e := range order {
			must(t, s.Add(e))
		}
		m, u, err := s.Message()
		if err != nil || messageJSON(t, m) != messageJSON(t, want) || u != wantUsage {
			t.Fatalf("seed %d: %v\n%s", seed, err, messageJSON(t, m))
		}
	}
}

func caseNamed(t testing.TB, name string) streamCase {
	t.Helper()
	for _, sc := range streamCases(t) {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no fixture %s", name)
	return streamCase{}
}
