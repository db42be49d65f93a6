package openai_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// ChatModel is a nous.Model on Chat Completions: sent or streamed, its
// request's tools after the params' own, a cut stream's partial reply
// added, and a runner's turn run on it.
func TestChatModel(t *testing.T) {
	adapttest.RunModel(t, adapttest.ModelFake{
		Provider: nousopenai.Provider,
		Start: func(t *testing.T, replies ...adapttest.ModelReply) adapttest.ModelServer {
			server := scriptedModel(t, "chat_text", 3, replies) // the role's chunk, then "The ", "capital "
			own, err := nousopenai.ChatTools(adapttest.OwnTool)
			adapttest.Must(t, err)
			params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: append(make([]openai.ChatCompletionToolUnionParam, 0, 8), own...)}
			return adapttest.ModelServer{
				Model:    nousopenai.NewChatModel(server.Client(), params),
				Requests: server.Requests,
				Intact: func() bool {
					for _, tool := range params.Tools[1:cap(params.Tools)] {
						if tool.OfFunction != nil {
							return false
						}
					}
					return len(params.Tools) == 1 && params.Tools[0].OfFunction.Function.Name == adapttest.OwnTool.Name
				},
			}
		},
		ToolNames: func(t testing.TB, body []byte) []string {
			var req struct {
				Tools []struct{ Function struct{ Name string } }
			}
			adapttest.Must(t, json.Unmarshal(body, &req))
			var names []string
			for _, tool := range req.Tools {
				names = append(names, tool.Function.Name)
			}
			return names
		},
		CutText: "The capital ",
	})
}

// ResponsesModel is ChatModel on the Responses API.
func TestResponsesModel(t *testing.T) {
	adapttest.RunModel(t, adapttest.ModelFake{
		Provider: nousopenai.Provider,
		Start: func(t *testing.T, replies ...adapttest.ModelReply) adapttest.ModelServer {
			server := scriptedModel(t, "responses_text", 6, replies) // the response's and the item's starts, then "Paris ", "is "
			own, err := nousopenai.ResponsesTools(adapttest.OwnTool)
			adapttest.Must(t, err)
			params := responses.ResponseNewParams{Model: "gpt-test", Tools: append(make([]responses.ToolUnionParam, 0, 8), own...)}
			return adapttest.ModelServer{
				Model:    nousopenai.NewResponsesModel(server.Client(), params),
				Requests: server.Requests,
				Intact: func() bool {
					for _, tool := range params.Tools[1:cap(params.Tools)] {
						if tool.OfFunction != nil {
							return false
						}
					}
					return len(params.Tools) == 1 && params.Tools[0].OfFunction.Name == adapttest.OwnTool.Name
				},
			}
		},
		ToolNames: func(t testing.TB, body []byte) []string {
			var req struct{ Tools []struct{ Name string } }
			adapttest.Must(t, json.Unmarshal(body, &req))
			var names []string
			for _, tool := range req.Tools {
				names = append(names, tool.Name)
			}
			return names
		},
		CutText: "Paris is ",
	})
}

// scriptedModel starts a scripted model of replies, closed when t ends: a
// Cut reply is the first k events of testdata/stream/<cut>.sse, then the
// connection cut.
func scriptedModel(t *testing.T, cut string, k int, replies []adapttest.ModelReply) *openaitest.Server {
	script := make([]openaitest.Reply, len(replies))
	for i, r := range replies {
		script[i] = openaitest.Reply{Text: r.Text, ToolCalls: r.ToolCalls, Usage: r.Usage}
		if r.Cut {
			sse, err := os.ReadFile(filepath.Join("testdata", "stream", cut+".sse"))
			adapttest.Must(t, err)
			script[i] = openaitest.Reply{Frames: scripted.Frames(string(sse))[:k], Abort: true}
		}
	}
	server := openaitest.NewServer(script...)
	t.Cleanup(server.Close)
	return server
}
