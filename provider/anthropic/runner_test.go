package anthropic_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
)

// Model is a nous.Model on the Messages API: sent or streamed, its
// request's tools after the params' own, a cut stream's partial reply
// added, and a runner's turn run on it.
func TestModel(t *testing.T) {
	adapttest.RunModel(t, adapttest.ModelFake{
		Provider:  nousanthropic.Provider,
		Start:     startModel,
		ToolNames: toolNames,
		CutText:   "Paris is the capital",
	})
}

// startModel starts a scripted model of replies, and a Model on it whose
// params hold adapttest.OwnTool with spare capacity.
func startModel(t *testing.T, replies ...adapttest.ModelReply) adapttest.ModelServer {
	script := make([]anthropictest.Reply, len(replies))
	for i, r := range replies {
		script[i] = anthropictest.Reply{Text: r.Text, ToolCalls: r.ToolCalls, Usage: r.Usage}
		if r.Cut {
			sse, err := os.ReadFile(filepath.Join("testdata", "stream", "text.sse"))
			adapttest.Must(t, err)
			frames := scripted.Frames(string(sse))[:5] // message_start, the block's start, a ping, two deltas
			script[i] = anthropictest.Reply{Frames: frames, Abort: true}
		}
	}
	server := anthropictest.NewServer(script...)
	t.Cleanup(server.Close)
	own, err := nousanthropic.Tools(adapttest.OwnTool)
	adapttest.Must(t, err)
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 256, Tools: append(make([]anthropic.ToolUnionParam, 0, 8), own...)}
	return adapttest.ModelServer{
		Model:    nousanthropic.NewModel(server.Client(), params),
		Requests: server.Requests,
		Intact: func() bool {
			for _, tool := range params.Tools[1:cap(params.Tools)] {
				if tool.OfTool != nil {
					return false
				}
			}
			return len(params.Tools) == 1 && params.Tools[0].OfTool.Name == adapttest.OwnTool.Name
		},
	}
}

// toolNames returns the names of the tools a request offers.
func toolNames(t testing.TB, body []byte) []string {
	var req struct{ Tools []struct{ Name string } }
	adapttest.Must(t, json.Unmarshal(body, &req))
	var names []string
	for _, tool := range req.Tools {
		names = append(names, tool.Name)
	}
	return names
}
