package anthropic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ThinkingPart returns a thinking part that [Fill] sends back as the
// thinking block it was: text and signature as the block had them, marked
// as Anthropic's (Options[nous.OptionProvider]), with the digest of the
// text ([OptionDigest]), as [Message] makes it. It is for thinking recorded
// elsewhere (a runtime's own event store, a stream read without Message).
// An empty signature gives a part Fill does not send: the API cannot check
// it. A redacted thinking block is a part with Options[nous.OptionRedactedData]
// and Options[nous.OptionProvider] "anthropic".
func ThinkingPart(text, signature string) nous.ContentPart {
	p := nous.ThinkingPart(text, signature)
	if p.Options == nil {
		p.Options = map[string]any{}
	}
	p.Options[optProvider], p.Options[OptionDigest] = Provider, digest(text)
	return p
}

// digest returns the digest Options[OptionDigest] holds of a thinking text.
func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

// thinkingBlock returns the block of a thinking part that came from
// Anthropic, and ok false for one that did not, or has no signature.
func thinkingBlock(p *nous.ContentPart) (block anthropic.ContentBlockParamUnion, ok bool, err error) {
	if p.Options[optProvider] != Provider {
		return block, false, nil
	}
	if data, _ := p.Options[nous.OptionRedactedData].(string); data != "" {
		return anthropic.NewRedactedThinkingBlock(data), true, nil
	}
	signature, _ := p.Options[nous.OptionSignature].(string)
	if signature == "" {
		return block, false, nil
	}
	if d, _ := p.Options[OptionDigest].(string); d != "" && d != digest(p.Content) {
		return block, false, ErrEditedThinking
	}
	return anthropic.NewThinkingBlock(signature, p.Content), true, nil
}

// thinkingFor returns the thinking and output config to send with msgs:
// params's, but with thinking off when the request needs it so. It does
// when it ends in an open tool loop (its last message is a user message
// that opens with tool_result blocks) whose final assistant message does
// not start with thinking, which the API refuses with thinking on; and
// params.Thinking may be on (enabled, adaptive, or left out, which recent
// models take as on). A turn runs in one thinking mode: that turn began
// without thinking that goes back. On a model whose thinking cannot be
// turned off, thinking stays on and the step goes as text instead
// ([stepAsText]). It changes nothing of params, and returns the messages
// to send.
func thinkingFor(params *anthropic.MessageNewParams, msgs []anthropic.MessageParam) (anthropic.ThinkingConfigParamUnion, anthropic.OutputConfigParam, []anthropic.MessageParam) {
	thinking, output := params.Thinking, params.OutputConfig
	if !openWithoutThinking(msgs) || thinking.OfDisabled != nil || thinking.OfBetweenTools != nil {
		return thinking, output, msgs
	}
	off, ok := offFor(params.Model)
	if !ok { // thinking stays on: the step goes as text
		return thinking, output, stepAsText(msgs)
	}
	if output.Effort == anthropic.OutputConfigEffortXhigh || output.Effort == anthropic.OutputConfigEffortMax {
		output.Effort = anthropic.OutputConfigEffortHigh // the most the API takes with thinking off
	}
	return off, output, msgs
}

// openWithoutThinking reports whether msgs end in an open tool loop whose
// final assistant message does not start with a thinking block.
func openWithoutThinking(msgs []anthropic.MessageParam) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].OfUser == nil || msgs[n-2].OfAssistant == nil {
		return false
	}
	results, turn := msgs[n-1].OfUser.Content, msgs[n-2].OfAssistant.Content
	if len(results) == 0 || results[0].OfToolResult == nil {
		return false
	}
	return len(turn) == 0 || turn[0].OfThinking == nil && turn[0].OfRedactedThinking == nil
}

// offFor returns the thinking config that turns thinking off on model, as
// Anthropic's model pages say: "between_tools" on Claude Sonnet 5.5, which
// refuses "disabled" and takes that in its place; none (ok false) on the
// models whose thinking is always on (Claude Opus 5.5, Claude Fable 5 and
// Claude Mythos 5 and their point releases), which refuse both; "disabled"
// on any other.
func offFor(model anthropic.Model) (anthropic.ThinkingConfigParamUnion, bool) {
	m := string(model)
	switch {
	case strings.Contains(m, "claude-sonnet-5-5"):
		return anthropic.ThinkingConfigParamUnion{OfBetweenTools: &anthropic.ThinkingConfigBetweenToolsParam{}}, true
	case strings.Contains(m, "claude-opus-5-5"), strings.Contains(m, "claude-fable-5"), strings.Contains(m, "claude-mythos-5"):
		return anthropic.ThinkingConfigParamUnion{}, false
	}
	return anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}, true
}

// stepAsText returns msgs, which end in an open tool loop whose final
// assistant message does not start with thinking, with that step as text,
// for a model whose thinking cannot be turned off: the final assistant
// message's tool_use blocks become text blocks naming each call and its
// input, and the tool_result blocks that open the last message text blocks
// of their results (their images and documents kept after them), so that
// the request opens a new turn, which the API takes with thinking on. The
// messages are new; msgs is not changed.
func stepAsText(msgs []anthropic.MessageParam) []anthropic.MessageParam {
	out := slices.Clone(msgs)
	n := len(out)
	call := map[string]string{} // the name of each call of the step, by its ID
	var turn []anthropic.ContentBlockParamUnion
	for _, b := range out[n-2].OfAssistant.Content {
		if u := b.OfToolUse; u != nil {
			input, _ := json.Marshal(u.Input) // an input Fill made: it encodes
			call[u.ID] = u.Name
			b = anthropic.NewTextBlock(fmt.Sprintf("[tool call %s %s, id %s]", u.Name, input, u.ID))
		}
		turn = append(turn, b)
	}
	var results []anthropic.ContentBlockParamUnion
	for _, b := range out[n-1].OfUser.Content {
		r := b.OfToolResult
		if r == nil {
			results = append(results, b)
			continue
		}
		var texts []string
		var media []anthropic.ContentBlockParamUnion
		for _, c := range r.Content {
			switch {
			case c.OfText != nil:
				texts = append(texts, c.OfText.Text)
			case c.OfImage != nil:
				media = append(media, anthropic.ContentBlockParamUnion{OfImage: c.OfImage})
			case c.OfDocument != nil:
				media = append(media, anthropic.ContentBlockParamUnion{OfDocument: c.OfDocument})
			}
		}
		what := "result"
		if r.IsError.Value {
			what = "error"
		}
		text := fmt.Sprintf("[tool %s of %s, id %s: %s]", what, call[r.ToolUseID], r.ToolUseID, strings.Join(texts, adapt.ResultSeparator))
		results = append(append(results, anthropic.NewTextBlock(text)), media...)
	}
	assistant, user := *out[n-2].OfAssistant, *out[n-1].OfUser
	assistant.Content, user.Content = turn, results
	out[n-2] = anthropic.MessageParam{OfAssistant: &assistant}
	out[n-1] = anthropic.MessageParam{OfUser: &user}
	return out
}
