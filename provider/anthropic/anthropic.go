// Package anthropic turns a nous context into the messages of an Anthropic
// Messages API request, and the API's answer back into a nous message and
// usage, through Anthropic's Go SDK.
//
// It fills params the caller owns, and calls nothing:
//
//	params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024, Tools: tools}
//	if err := nousanthropic.Fill(&params, c); err != nil { ... } // a view the API would refuse
//	resp, err := client.Messages.New(ctx, params)
//	msg, usage := nousanthropic.Message(resp)
//	c.AddMessage(msg)
//	c.AddUsage(usage)
//
// # Rules
//
// The view is checked before anything is sent, and a view the API would
// refuse is an [*Error] naming the message (its view index) and the call:
//
//   - Pairing: the results of an assistant message's tool calls follow it,
//     one tool message per call, before anything else (the view's
//     [nous.Context.CheckToolPairing]; an error wrapping [nous.ErrUnpaired]).
//     Repairing a view is the caller's choice: [nous.Context.PatchDanglingToolCalls].
//     The results of one assistant turn go in one user message, tool_result
//     blocks first, then any user text that follows them (but none after
//     the result of a call code execution made: the API wants that message
//     to hold results only, and such a view is an error wrapping
//     [ErrUnsupported]).
//   - Content: no empty or whitespace-only text block is sent; a tool result
//     without content is sent without content. Tool arguments must be a
//     JSON object ("{}" when empty; another value: an error wrapping
//     [nous.ErrInvalidArguments]). Images (base64 or URL) and PDF or plain
//     text files (base64 or URL) map to image and document blocks; a part the
//     API has no block for is an error wrapping [ErrUnsupported]. An image or
//     file another provider's model made (Options["provider"] names it) is
//     dropped from an assistant message, which has no media block.
//   - System: the system blocks are the context's SystemPrompt, then the
//     view's leading system messages (the overlay is there); the prompt is
//     not sent apart when it is blank, or when the view starts with a system
//     message whose first text begins with it (a runtime put it there; the
//     overlay may follow it). A system
//     message later in the view is a system message in its place among the
//     messages, as the API takes it there.
//   - Calls: tool_use IDs must be unique in a request and made of letters,
//     digits, _ and -, as the API wants; a call ID from elsewhere that is not
//     (or one used twice, as servers that number calls per turn do) is an
//     error wrapping [ErrUnsupported]. A view with no message to send, or a
//     system message with other parts than text, is an error too.
//   - Thinking: a thinking part goes back only when it came from Anthropic
//     ([Message] marks it: Options["provider"] is "anthropic"), with its
//     signature, or its redacted data, byte for byte, first in its assistant
//     turn, as the API wants for the last turn of a tool loop (assistant
//     messages in a row are one turn: their thinking goes first, in order;
//     but the rest of a turn the API paused follows it as it came). A
//     server tool use without its result goes only in the last message,
//     where the API goes on with a paused turn. A thinking part
//     whose text was changed since (its digest no longer matches) is an error
//     wrapping [ErrEditedThinking]: the API would refuse its signature.
//     Thinking from another provider, or without a signature, and
//     ReasoningContent, are dropped: the API cannot check them.
//
// [Message] keeps what the API answered exactly: text with its citations,
// thinking blocks with their signatures (in [nous.ContentPart.Options]),
// tool calls with their input bytes as arguments (and, for a call code
// execution made, its caller), and the blocks of the
// API's server tools (web search, code execution) as their JSON in the
// message's Metadata, sent back only to this API; so a response brought in
// and sent back gives the API the same blocks, in their order, and a turn
// the API paused goes on. Its usage counts every prompt token in InputTokens
// (input, cache writes and cache reads), reasoning in OutputTokens.
package anthropic

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrUnsupported reports content the Messages API has no block for.
var ErrUnsupported = errors.New("not supported by the Anthropic Messages API")

// ErrEditedThinking reports a thinking part whose text changed after it was
// received: its signature no longer matches it.
var ErrEditedThinking = errors.New("thinking changed after it was received: its signature no longer matches")

// Error is a view the Messages API would refuse: the view index of the
// message (Index), the tool call concerned if any (CallID), and what is
// wrong (Err, which wraps a sentinel).
type Error = adapt.Error

// Provider is the value of Options["provider"] on the thinking parts
// [Message] makes.
const Provider = "anthropic"

// The Options keys of a thinking part from Anthropic.
const (
	optProvider  = "provider"
	optSignature = nous.OptionSignature
	optRedacted  = nous.OptionRedactedData // a redacted_thinking block's data
	optDigest    = "digest"                // SHA-256 of the thinking text when received, hex
	optCitations = "citations"             // a text part's citations, their JSON
	metaOrder    = "anthropic_block_order" // on a message: its blocks' kinds in the order they came
	metaBlocks   = "anthropic_blocks"      // on a message: the JSON of the blocks kept whole
	metaCaller   = "anthropic_caller"      // on a tool call: the JSON of the caller, when code made the call
	metaToolset  = "anthropic_toolset"     // on a tool call: its toolset's name
)

// The keys of blocks in the order [Message] records: thinking (redacted
// too) and text by their kind, a tool use by its ID ("tool_use:toolu_1"), a
// block kept whole by its index in Metadata["anthropic_blocks"]
// ("block:2"); and their ranks in the layout [Fill] sends without an order.
const (
	keyThinking  = "thinking"
	keyText      = "text"
	keyToolUse   = "tool_use:"
	keyKept      = "block:"
	rankThinking = 0
	rankText     = 1
	rankToolUse  = 2
)

// toolUseID is what the API takes as a tool_use block's ID.
var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// digest returns the digest Options["digest"] holds of a thinking text.
func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}
