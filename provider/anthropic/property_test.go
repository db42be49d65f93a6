package anthropic_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// Thousands of random conversations, filled with thinking left out and
// with it on: Fill refuses exactly the views whose pairing is broken (and
// those with thinking edited since it was received), with an *Error; every
// request it makes keeps the API's rules: the first message a user one; no
// empty content and no blank text; each turn's tool_use blocks answered by
// tool_result blocks that open the next user message, one per call; no
// tool_result anywhere else; tool_use IDs unique and of the API's form, and
// inputs objects; thinking only first in an assistant turn; no two turns of
// one role in a row; with thinking on, an open tool loop's final assistant
// message starts with thinking. Fill turns thinking off (and an effort above
// high down) only for a request that needs it.
func TestProperty(t *testing.T) {
	for _, tt := range []struct {
		name string
		base anthropic.MessageNewParams
	}{
		{"thinking left out", anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}},
		{"thinking on", anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 4096, Thinking: adaptive(),
			OutputConfig: anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffortMax}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			adapttest.Property(t, 1, 3000, []error{nousanthropic.ErrEditedThinking}, adapttest.Fill{
				Name: "Fill",
				Do: func(c *nous.Context) (any, error) {
					params := tt.base
					err := nousanthropic.Fill(&params, c)
					if errors.Is(err, nousanthropic.ErrUnsupported) || errors.Is(err, nous.ErrInvalidArguments) {
						return nil, fmt.Errorf("a refusal that is not of pairing: %v", err) // not an *Error: the property fails
					}
					return params, err // params as Fill left it
				},
				Check: func(_ any, body []byte) string {
					if p := checkRequest(body); p != "" {
						return p
					}
					return checkThinkingKept(tt.base, body)
				},
			})
		})
	}
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Input     json.RawMessage `json:"input"`
}

type request struct {
	System   []block `json:"system"`
	Messages []struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	} `json:"messages"`
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	OutputConfig struct {
		Effort string `json:"effort"`
	} `json:"output_config"`
}

// checkRequest returns what in a request body breaks a rule of the API
// (adapttest.CheckAnthropic), "" for nothing.
func checkRequest(body []byte) string { return adapttest.CheckAnthropic(body) }

func thinkingBlock(b block) bool { return b.Type == "thinking" || b.Type == "redacted_thinking" }

// openWithoutThinking reports whether a request ends in an open tool loop
// (its last message a user one that opens with tool_result blocks) whose
// final assistant message does not start with thinking.
func openWithoutThinking(req *request) bool {
	n := len(req.Messages)
	if n < 2 {
		return false
	}
	last, prev := req.Messages[n-1], req.Messages[n-2]
	return last.Role == "user" && last.Content[0].Type == "tool_result" && prev.Role == "assistant" && !thinkingBlock(prev.Content[0])
}

// checkThinkingKept returns what is wrong with the thinking and effort of
// a request body filled from base: they are base's, but for a request that
// needs thinking off, whose thinking is disabled and its effort at most
// high.
func checkThinkingKept(base anthropic.MessageNewParams, body []byte) string {
	var req, want request
	mine, _ := json.Marshal(base)
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(mine, &want) != nil {
		return "a body that does not decode"
	}
	if openWithoutThinking(&req) {
		want.Thinking = &struct {
			Type string `json:"type"`
		}{"disabled"}
		if want.OutputConfig.Effort == "max" {
			want.OutputConfig.Effort = "high"
		}
	}
	switch {
	case (req.Thinking == nil) != (want.Thinking == nil) || req.Thinking != nil && req.Thinking.Type != want.Thinking.Type:
		return fmt.Sprintf("thinking sent %+v, want %+v", req.Thinking, want.Thinking)
	case req.OutputConfig.Effort != want.OutputConfig.Effort:
		return fmt.Sprintf("effort sent %q, want %q", req.OutputConfig.Effort, want.OutputConfig.Effort)
	}
	return ""
}
