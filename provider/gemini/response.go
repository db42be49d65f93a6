package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
)

// Message returns the assistant message and the usage of a GenerateContent
// response's first candidate: its text as Content (one part without a
// signature) or text parts, its thoughts as thinking parts marked as
// Gemini's, its function calls as tool calls (their arguments the JSON of
// the call's args; an ID made up when the API gave none), each part's
// thought signature kept where it came, and Metadata["finish_reason"] and
// ["model"]. A response without a candidate (a blocked prompt) is an error
// wrapping [ErrNoCandidate], returned with the response's usage, which is
// billed all the same.
func Message(resp *genai.GenerateContentResponse) (nous.Message, nous.Usage, error) {
	if resp == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("gemini: a nil response: %w", ErrNoCandidate)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil || resp.Candidates[0].Content == nil {
		return nous.Message{}, Usage(resp.UsageMetadata), fmt.Errorf("gemini: %w", ErrNoCandidate) // a blocked prompt is billed too
	}
	cand := resp.Candidates[0]
	m := nous.AssistantMessage("")
	var parts []nous.ContentPart
	plain := true // one text part, no signature, no thought: Content
	for _, p := range cand.Content.Parts {
		if p == nil {
			continue
		}
		sig := ""
		if len(p.ThoughtSignature) > 0 {
			sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
		}
		switch {
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return nous.Message{}, nous.Usage{}, fmt.Errorf("gemini: function call %q: %w", p.FunctionCall.Name, err)
			}
			if p.FunctionCall.Args == nil {
				args = []byte("{}")
			}
			id := p.FunctionCall.ID
			if id == "" {
				id = newCallID()
			}
			tc := nous.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args}
			if sig != "" {
				tc.Metadata = map[string]any{optSignature: sig}
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		case p.Thought:
			plain = false
			part := nous.ContentPart{Type: nous.PartThinking, Content: p.Text, Options: map[string]any{optProvider: Provider}}
			if sig != "" {
				part.Options[optSignature] = sig
			}
			parts = append(parts, part)
		case p.Text != "" || sig != "": // an empty text part may carry the turn's signature
			part := nous.TextPart(p.Text)
			if sig != "" {
				plain = false
				part.Options = map[string]any{optSignature: sig}
			}
			parts = append(parts, part)
		}
	}
	if plain && len(parts) == 1 {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{"finish_reason": string(cand.FinishReason), "model": resp.ModelVersion}
	u := Usage(resp.UsageMetadata)
	u.ToolCalls = len(m.ToolCalls)
	return m, u, nil
}

// Usage returns the usage of one response: Requests 1, InputTokens every
// prompt token (cached and tool-use prompt ones included), OutputTokens the
// candidates' tokens and the thoughts' (which the API counts apart), the
// cache and thought counts as their breakdowns.
func Usage(u *genai.GenerateContentResponseUsageMetadata) nous.Usage {
	if u == nil {
		return nous.Usage{Requests: 1}
	}
	in := int(u.PromptTokenCount + u.ToolUsePromptTokenCount)
	out := int(u.CandidatesTokenCount + u.ThoughtsTokenCount)
	return nous.Usage{
		Requests: 1, InputTokens: in, OutputTokens: out, TotalTokens: in + out,
		CacheReadInputTokens: int(u.CachedContentTokenCount),
		ReasoningTokens:      int(u.ThoughtsTokenCount),
	}
}
