package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Message returns the assistant message and the usage of a GenerateContent
// response's first candidate: its text as Content (one part without a
// signature) or text parts, its thoughts as thinking parts marked as
// Gemini's (Options[nous.OptionProvider]), its function calls as tool calls
// (their arguments the JSON of the call's args; the ID the API gave, also
// recorded in Metadata[MetadataCallID], or one made up when it gave none),
// the images and files it made as image and file parts (base64,
// Options["media_type"]) or URL parts, each part's thought signature kept
// where it came (Options or Metadata[nous.OptionThoughtSignature]), and
// Metadata["finish_reason"] and ["model"]. Other parts (code the model ran
// and its result, thought images, parts newer than this package) are kept
// as their JSON in Metadata[MetadataParts], for [Fill] alone: other
// providers do not see them. When the parts did not come as thoughts, text,
// media, calls, or some were kept whole, Metadata[MetadataPartOrder]
// records their order, which Fill follows. A response without a candidate
// (a blocked prompt) is an error wrapping [ErrNoCandidate], returned with
// the response's usage, which is billed all the same; so is a nil response,
// with no usage.
func Message(resp *genai.GenerateContentResponse) (nous.Message, nous.Usage, error) {
	if resp == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("gemini: a nil response: %w", ErrNoCandidate)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil || resp.Candidates[0].Content == nil {
		why := ""
		if f := resp.PromptFeedback; f != nil && f.BlockReason != "" {
			why = fmt.Sprintf(" (the prompt was blocked: %s %s)", f.BlockReason, f.BlockReasonMessage)
		} else if len(resp.Candidates) > 0 && resp.Candidates[0] != nil && resp.Candidates[0].FinishReason != "" {
			why = fmt.Sprintf(" (finish reason %s)", resp.Candidates[0].FinishReason)
		}
		return nous.Message{}, Usage(resp.UsageMetadata), fmt.Errorf("gemini: %w%s", ErrNoCandidate, why) // a blocked prompt is billed too
	}
	m := nous.AssistantMessage("")
	var parts []nous.ContentPart
	var order adapt.Order
	var kept []any // the JSON of the parts kept whole
	plain := true  // one text part, no signature, no thought: Content
	for _, p := range resp.Candidates[0].Content.Parts {
		if p == nil {
			continue
		}
		sig := ""
		if len(p.ThoughtSignature) > 0 {
			sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
		}
		switch kind := kindOf(p); kind {
		case kindText, kindThought:
			if sig == "" && (p.Text == "" || kind == kindThought && strings.TrimSpace(p.Text) == "") {
				continue // nothing: an empty part, or a blank thought, may only carry the turn's signature
			}
			fallthrough
		case kindMedia:
			parts = append(parts, contentPart(p, sig))
			plain = plain && kind == kindText && sig == ""
			order.Add(kind, rankOf(kind))
		case kindCall:
			tc, err := toolCall(p.FunctionCall, sig)
			if err != nil {
				return nous.Message{}, nous.Usage{}, err
			}
			m.ToolCalls = append(m.ToolCalls, tc)
			adapt.DistinctIDs(m.ToolCalls) // an ID a call before it has: its own, so that results pair
			order.Add(kindCall+":"+m.ToolCalls[len(m.ToolCalls)-1].ID, rankOf(kind))
		case kindKept:
			raw, err := json.Marshal(p)
			if err != nil {
				return nous.Message{}, nous.Usage{}, fmt.Errorf("gemini: a part of the response: %w", err)
			}
			order.AddWhole(fmt.Sprint(kindKept, ":", len(kept)))
			kept = append(kept, string(raw))
		}
	}
	if plain && len(parts) == 1 {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{"finish_reason": string(resp.Candidates[0].FinishReason), "model": resp.ModelVersion}
	if len(kept) > 0 {
		m.Metadata[MetadataParts] = kept
	}
	if keys := order.Keys(); keys != nil {
		m.Metadata[MetadataPartOrder] = keys
	}
	u := Usage(resp.UsageMetadata)
	u.ToolCalls = len(m.ToolCalls)
	return m, u, nil
}

// toolCall returns the tool call of a function call part: the JSON of its
// args as the arguments ({} for none), an ID made up when the API gave
// none, the part's signature sig (base64) in Metadata.
func toolCall(call *genai.FunctionCall, sig string) (nous.ToolCall, error) {
	args, err := json.Marshal(call.Args)
	if err != nil {
		return nous.ToolCall{}, fmt.Errorf("gemini: function call %q: %w", call.Name, err)
	}
	if call.Args == nil {
		args = []byte("{}")
	}
	tc := nous.ToolCall{ID: call.ID, Name: call.Name, Arguments: args}
	if call.ID == "" {
		tc.ID = newCallID()
	} else {
		tc.Metadata = map[string]any{MetadataCallID: call.ID}
	}
	if sig != "" {
		if tc.Metadata == nil {
			tc.Metadata = map[string]any{}
		}
		tc.Metadata[nous.OptionThoughtSignature] = sig
	}
	return tc, nil
}

// The kinds of parts, as Metadata["gemini_part_order"] names them: a
// function call's with its ID ("call:ID"), a part kept whole with its index
// in Metadata["gemini_parts"] ("part:2").
const (
	kindThought = "thought"
	kindText    = "text"
	kindMedia   = "media"
	kindCall    = "call"
	kindKept    = "part"
)

// rankOf returns the rank of a kind in the layout [Contents] sends without
// an order: thoughts, then text, then media, then function calls.
func rankOf(kind string) int {
	switch kind {
	case kindThought:
		return 0
	case kindText:
		return 1
	case kindMedia:
		return 2
	}
	return 3
}

// kindOf returns the kind of a part of a response.
func kindOf(p *genai.Part) string {
	other := p.ExecutableCode != nil || p.CodeExecutionResult != nil || p.FunctionResponse != nil ||
		p.ToolCall != nil || p.ToolResponse != nil || p.VideoMetadata != nil || p.PartMetadata != nil ||
		p.MediaResolution != nil || p.AudioTranscription != nil || p.SpeechMetadata != nil || p.MediaProcessing != ""
	media := p.InlineData != nil || p.FileData != nil
	switch {
	case other:
		return kindKept
	case p.FunctionCall != nil && !media && p.Text == "" && !p.Thought:
		return kindCall
	case p.FunctionCall != nil || media && (p.Thought || p.Text != "") || p.InlineData != nil && p.FileData != nil:
		return kindKept
	case media:
		return kindMedia
	case p.Thought:
		return kindThought
	}
	return kindText // an empty text part may carry the turn's signature
}

// contentPart returns the content part of a thought, text or media part of
// a response, with its signature sig (base64), if any, in Options.
func contentPart(p *genai.Part, sig string) nous.ContentPart {
	part := unsigned(p)
	if sig != "" {
		if part.Options == nil {
			part.Options = map[string]any{}
		}
		part.Options[nous.OptionThoughtSignature] = sig
	}
	return part
}

// unsigned returns the content part of a thought, text or media part of a
// response, without its signature.
func unsigned(p *genai.Part) nous.ContentPart {
	switch {
	case p.Thought:
		return nous.ContentPart{Type: nous.PartThinking, Content: p.Text, Options: map[string]any{nous.OptionProvider: Provider}}
	case p.InlineData != nil:
		typ := nous.PartFile
		if strings.HasPrefix(p.InlineData.MIMEType, "image/") {
			typ = nous.PartImage
		}
		return nous.ContentPart{Type: typ, Content: base64.StdEncoding.EncodeToString(p.InlineData.Data),
			Options: map[string]any{nous.OptionProvider: Provider, "media_type": p.InlineData.MIMEType}}
	case p.FileData != nil:
		typ := nous.PartFileURL
		if strings.HasPrefix(p.FileData.MIMEType, "image/") {
			typ = nous.PartImageURL
		}
		return nous.ContentPart{Type: typ, Content: p.FileData.FileURI,
			Options: map[string]any{nous.OptionProvider: Provider, "media_type": p.FileData.MIMEType}}
	}
	return nous.TextPart(p.Text)
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
