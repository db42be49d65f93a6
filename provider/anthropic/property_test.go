package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// Thousands of random conversations: Fill refuses exactly the views whose
// pairing is broken (and those with content the API has no block for, or
// arguments that are not objects), with an *Error; every request it makes
// keeps the API's rules: no empty content and no blank text; each turn's
// tool_use blocks answered by tool_result blocks that open the next user
// message, one per call; no tool_result anywhere else; thinking only first
// in an assistant turn; no two turns of one role in a row.
func TestProperty(t *testing.T) {
	adapttest.Property(t, 1, 3000, []error{nousanthropic.ErrUnsupported, nousanthropic.ErrEditedThinking}, adapttest.Fill{
		Name: "Fill",
		Do: func(c *nous.Context) (any, error) {
			var params anthropic.MessageNewParams
			err := nousanthropic.Fill(&params, c)
			return params, err // params as Fill left it
		},
		Check: func(_ any, body []byte) string { return checkRequest(body) },
	})
}

type block struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

func checkRequest(body []byte) string {
	var req struct {
		System   []block `json:"system"`
		Messages []struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	for _, b := range req.System {
		if strings.TrimSpace(b.Text) == "" {
			return "a blank system block"
		}
	}
	var open []string // the calls of the last assistant turn
	for i, m := range req.Messages {
		if len(m.Content) == 0 {
			return "a message without content"
		}
		if i > 0 && m.Role == req.Messages[i-1].Role && m.Role != "system" {
			return "two " + m.Role + " turns in a row"
		}
		var results []string
		others := false
		for k, b := range m.Content {
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) == "" {
					return "a blank text block"
				}
				others = true
			case "tool_result":
				if m.Role != "user" || others {
					return "a tool_result block that does not open a user message"
				}
				results = append(results, b.ToolUseID)
			case "thinking", "redacted_thinking":
				if m.Role != "assistant" || k > 0 && m.Content[k-1].Type != "thinking" && m.Content[k-1].Type != "redacted_thinking" {
					return "thinking that is not first in an assistant turn"
				}
			default:
				others = true
			}
		}
		if len(open) > 0 || len(results) > 0 {
			if !adapttest.SameSet(open, results) {
				return "tool_use blocks " + strings.Join(open, ",") + " answered by " + strings.Join(results, ",")
			}
		}
		open = nil
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				open = append(open, b.ID)
			}
		}
	}
	if len(open) > 0 {
		return "tool_use blocks left unanswered"
	}
	return ""
}
