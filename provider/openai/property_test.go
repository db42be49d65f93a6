package openai_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// Thousands of random conversations: FillChat and FillResponses refuse
// exactly the views whose pairing is broken (and those with content the API
// has no place for, or arguments that are not objects), with an *Error;
// every request they make keeps the API's rules. Chat: no blank text; an
// assistant message has content or tool calls; its calls are answered by
// the role:tool messages right after it, one per call, and tool messages
// appear nowhere else. Responses: each function_call's output follows
// before any other message; every function_call_output answers a call;
// reasoning items come right before a message or a function call.
func TestProperty(t *testing.T) {
	adapttest.Property(t, 2, 3000, []error{nousopenai.ErrUnsupported}, adapttest.Fill{
		Name: "FillChat",
		Do: func(c *nous.Context) (any, error) {
			var params openai.ChatCompletionNewParams
			err := nousopenai.FillChat(&params, c)
			return params, err // params as Fill left it
		},
		Check: func(_ any, body []byte) string { return checkChat(body) },
	}, adapttest.Fill{
		Name: "FillResponses",
		Do: func(c *nous.Context) (any, error) {
			var params responses.ResponseNewParams
			err := nousopenai.FillResponses(&params, c)
			return params, err // params as Fill left it
		},
		Check: func(_ any, body []byte) string { return checkResponses(body) },
	})
}

func blankContent(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s) == ""
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return false
	}
	for _, p := range parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) == "" {
			return true
		}
	}
	return len(parts) == 0
}

func checkChat(body []byte) string {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	var open []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			k := slices.Index(open, m.ToolCallID)
			if k < 0 {
				return "a tool message " + m.ToolCallID + " that answers no open call"
			}
			open = slices.Delete(open, k, k+1)
			continue
		}
		if len(open) > 0 {
			return "calls " + strings.Join(open, ",") + " not answered before a " + m.Role + " message"
		}
		if m.Content != nil && blankContent(m.Content) {
			return "blank content in a " + m.Role + " message"
		}
		if m.Role == "assistant" && m.Content == nil && len(m.ToolCalls) == 0 {
			return "an assistant message with neither content nor calls"
		}
		for _, tc := range m.ToolCalls {
			open = append(open, tc.ID)
		}
	}
	if len(open) > 0 {
		return "calls left unanswered"
	}
	return ""
}

func checkResponses(body []byte) string {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			CallID  string          `json:"call_id"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	var open []string
	for k, it := range req.Input {
		switch it.Type {
		case "function_call_output":
			i := slices.Index(open, it.CallID)
			if i < 0 {
				return "an output " + it.CallID + " that answers no open call"
			}
			open = slices.Delete(open, i, i+1)
			continue
		case "reasoning":
			if k+1 == len(req.Input) || (req.Input[k+1].Type != "function_call" && req.Input[k+1].Type != "message" && req.Input[k+1].Type != "reasoning" && req.Input[k+1].Role != "assistant") {
				return "a reasoning item without a follower"
			}
			continue
		case "function_call":
			open = append(open, it.CallID)
			continue
		}
		if len(open) > 0 {
			return "calls " + strings.Join(open, ",") + " not answered before a " + it.Role + " message"
		}
		if it.Content != nil && blankContent(it.Content) {
			return "blank content in a " + it.Role + " message"
		}
	}
	if len(open) > 0 {
		return "calls left unanswered"
	}
	return ""
}
