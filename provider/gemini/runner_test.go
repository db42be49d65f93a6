package gemini_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
)

// Model is a nous.Model on GenerateContent: sent or streamed, its
// request's tools after the config's own, a cut stream's partial reply
// added, and a runner's turn run on it.
func TestModel(t *testing.T) {
	adapttest.RunModel(t, adapttest.ModelFake{
		Provider:  nousgemini.Provider,
		Start:     startModel,
		ToolNames: toolNames,
		CutText:   "The Eiffel Tower is 330 metres tall, and it was the tallest",
	})
}

// startModel starts a scripted model of replies, and a Model on it whose
// config holds adapttest.OwnTool with spare capacity. A Cut reply is the
// first two chunks of testdata/stream/text.sse, then the connection cut.
func startModel(t *testing.T, replies ...adapttest.ModelReply) adapttest.ModelServer {
	script := make([]geminitest.Reply, len(replies))
	for i, r := range replies {
		script[i] = geminitest.Reply{Text: r.Text, ToolCalls: r.ToolCalls, Usage: r.Usage}
		if r.Cut {
			sse, err := os.ReadFile(filepath.Join("testdata", "stream", "text.sse"))
			adapttest.Must(t, err)
			script[i] = geminitest.Reply{Frames: geminitest.Frames(string(sse))[:2], Abort: true}
		}
	}
	server := geminitest.NewServer(script...)
	t.Cleanup(server.Close)
	client, err := server.Client(context.Background())
	adapttest.Must(t, err)
	own, err := nousgemini.Tools(adapttest.OwnTool)
	adapttest.Must(t, err)
	config := &genai.GenerateContentConfig{MaxOutputTokens: 256, Tools: append(make([]*genai.Tool, 0, 8), own...)}
	return adapttest.ModelServer{
		Model:    nousgemini.NewModel(client, nousgemini.Params{Model: "gemini-test", Config: config}),
		Requests: server.Requests,
		Intact: func() bool {
			for _, tool := range config.Tools[1:cap(config.Tools)] {
				if tool != nil {
					return false
				}
			}
			return len(config.Tools) == 1 && len(config.Tools[0].FunctionDeclarations) == 1 && config.SystemInstruction == nil
		},
	}
}

// toolNames returns the names of the functions a request declares.
func toolNames(t testing.TB, body []byte) []string {
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		}
	}
	adapttest.Must(t, json.Unmarshal(body, &req))
	var names []string
	for _, tool := range req.Tools {
		for _, f := range tool.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	return names
}
