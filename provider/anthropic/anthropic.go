// Package anthropic turns a nous context into the messages of an Anthropic
// Messages API request, and the API's answer back into a nous message and
// usage, through Anthropic's Go SDK.
//
// [Fill] fills params the caller owns, and calls nothing (the one caller of
// the API here is [Summarizer]). Fill a fresh copy of your base params for
// each request: Fill may turn thinking off for one request (see "One
// thinking mode per turn" below), and the next one should start from yours.
//
//	base := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 4096, Tools: tools}
//	for {
//		params := base // a copy: what Fill sets is this request's only
//		if err := nousanthropic.Fill(&params, c); err != nil { ... } // an *Error: a view the API would refuse
//		resp, err := client.Messages.New(ctx, params)
//		if err != nil { ... }
//		msg, usage, err := nousanthropic.Message(resp)
//		if err != nil { ... }
//		c.AddMessage(msg)
//		c.AddUsage(usage)
//		if len(msg.ToolCalls) == 0 { break }
//		c.RunToolCalls(ctx, msg.ToolCalls, run)
//	}
//
// # Rules
//
// The view is checked before anything is sent, and a view the API would
// refuse is an [*Error] naming the message (its view index) and the call,
// whose text says what the caller can do. A view the library's own
// operations made (responses added, tool results, compaction with a summary
// of any role, a switch from another provider at any point) is sent:
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
//     without content is sent without content. Images (base64 or URL) and
//     PDF or plain text files (base64 or URL) map to image and document
//     blocks; a part the API has no block for is an error wrapping
//     [ErrUnsupported]. An image or file another provider's model made
//     (Options["provider"] names it) is dropped from an assistant message,
//     which has no media block.
//   - Arguments: a tool_use block's input is a JSON object, which a call's
//     arguments are not always (a model that stopped halfway, `{"city": "Par`;
//     null; an array; a string). They go as the object the shared rule
//     makes of them: empty or null as {}, anything else that is not an
//     object as {"invalid_arguments": "<the text as it came>"}, so that the
//     model sees what it sent and the error result that answered it. The
//     log keeps the arguments as they came.
//   - System: the system blocks are the context's SystemPrompt, then the
//     view's leading system messages (the overlay is there); the prompt is
//     not sent apart when it is blank, or when the view starts with a system
//     message whose first text begins with it (a runtime put it there; the
//     overlay may follow it). A system message later in the view is a system
//     message in its place among the messages, as the API takes it there. A
//     system message with other parts than text is an error wrapping
//     [ErrUnsupported].
//   - First message: the API wants the messages to begin with a user turn.
//     When they do not, a user message holding "Continue." goes first: a
//     compacted view whose summary was a system message (which joins the
//     system blocks, so that the assistant's turn comes first), one whose
//     summary was the assistant's, or a view of system messages only (the
//     task is in the instructions). The view is not changed.
//   - Last message: a request that ends with the assistant's turn (a runtime
//     that asks again after the model's answer) gets a user message holding
//     "Continue." after it: the API refuses a final assistant message that
//     ends in white space, as other providers' answers often do, and recent
//     models refuse any (they take no prefill). A turn the API paused
//     (stop_reason "pause_turn") goes last, as the API goes on with it.
//   - Names: a call without a name (a server that left it out, a stream
//     cut before it came) is sent as "unnamed_tool", as the API refuses a
//     call without one; the model sees the error result its runtime gave
//     the call. The log keeps the call as it came.
//   - Calls: tool_use IDs must be unique in a request and made of letters,
//     digits, _ and - (the API's pattern ^[a-zA-Z0-9_-]+$; it documents no
//     length limit). A call whose ID is not of that form ("functions.f:0"),
//     or that an earlier call of the view has (a server that numbers calls
//     per turn answers call_0 every time), is sent with an ID made of its
//     own: the ID made valid, then _2, _3, ... (the first that no call of
//     the view has); its results go with that ID. The same view always
//     sends the same IDs, and a view that grows keeps those of its earlier
//     turns (the prompt cache sees the same prefix). The log keeps the IDs
//     as they came; a reply never names a call of the request, so nothing
//     needs mapping back.
//   - Thinking: a thinking part goes back only when it came from Anthropic
//     ([Message] and [ThinkingPart] mark it: Options["provider"] is
//     "anthropic"), with its signature, or its redacted data, byte for byte,
//     first in its assistant turn, as the API wants for the last turn of a
//     tool loop (assistant messages in a row are one turn: their thinking
//     goes first, in order; but the rest of a turn the API paused follows it
//     as it came). A server tool use without its result goes only in the
//     last message, where the API goes on with a paused turn. A thinking
//     part whose text was changed since (its digest no longer matches) is an
//     error wrapping [ErrEditedThinking]: the API would refuse its
//     signature. Thinking from another provider, or without a signature, and
//     ReasoningContent, are dropped: the API cannot check them.
//   - One thinking mode per turn: with thinking on, the API wants the final
//     assistant message of an open tool loop to start with a thinking block
//     ("a final assistant message must start with a thinking block"), and a
//     turn runs in one thinking mode. So when the request ends in an open
//     tool loop (its last message is a user message that opens with
//     tool_result blocks) whose final assistant message does not start with
//     thinking that goes back (its calls came from another provider, or from
//     Anthropic with thinking off), and params.Thinking may be on (enabled,
//     adaptive, or left out: recent models think by default), Fill turns
//     thinking off for that request: params.Thinking becomes {"type":
//     "disabled"}, or {"type": "between_tools"} on Claude Sonnet 5.5, which
//     takes that in place of "disabled"; and an effort of "xhigh" or "max" in
//     params.OutputConfig becomes "high", the most the API takes with
//     thinking off. These are the only fields of params besides System and
//     Messages that Fill sets, and so the caller should fill a fresh copy of
//     its base params for each request. The models whose thinking cannot be
//     turned off (Claude Opus 5.5, Claude Fable 5 and Claude Mythos 5 and
//     their point releases) keep params.Thinking as it is, and that final
//     step goes as text instead: its tool_use blocks as text blocks,
//     "[tool call <name> <input>, id <id>]", and the tool_result blocks that
//     answer them as text blocks opening the user message, "[tool result of
//     <name>, id <id>: <text>]" ("tool error" for an error result), their
//     images and documents after them; so the request opens a new turn,
//     which the API takes with thinking on. The view is not changed.
//
// # Streaming
//
// [Stream] is [Send] on a streamed reply (client.Messages.NewStreaming):
// the reply's deltas go to onDelta as they come, and the reply, once whole,
// is added to the context as Send adds it: the same message and usage, byte
// for byte, as the reply not streamed gives ([MessageStream] accumulates the
// events with the SDK's own Accumulate, and [Message] reads the result).
// Pass c.EmitDelta to route the deltas to the context's Callbacks: text to
// "on_llm_new_delta", thinking to "on_llm_new_thinking_delta", a tool
// call's name and input pieces to "on_tool_call_delta" (a [nous.Delta]); a
// runtime may c.Emit(nous.CallbackLLMNewMessage, m) once m is whole.
//
//	for {
//		m, err := nousanthropic.Stream(ctx, client, base, c, c.EmitDelta)
//		if errors.Is(err, nous.ErrInterrupted) { // cancelled, cut, or an error event
//			if m.Role != "" {
//				c.AddMessage(m) // what came: text, and thinking as plain text
//			}
//			break
//		}
//		if err != nil { ... } // nothing sent, or the API refused it: nothing changed
//		if len(m.ToolCalls) == 0 { break }
//		c.RunToolCalls(ctx, m.ToolCalls, run)
//	}
//
// A stream ends with message_stop; reading stops there. Usage arrives in
// message_start (input and cache tokens) and message_delta (the output
// tokens so far, counted whole each time). A stream that stops before
// message_stop (ctx cancelled, the connection cut, the body ending early,
// an error event such as overloaded_error) adds the usage that arrived and
// returns an error wrapping [nous.ErrInterrupted] with the partial
// message, which it does not add. The partial message
// ([MessageStream.Partial]) is what the API takes back: the assistant's,
// marked with [nous.MetadataInterrupted], holding the text of every text
// block so far (a block cut halfway included; no citations) and the thinking
// so far as plain [nous.ThinkingPart]s, without signature, which [Fill]
// does not send (the API checks a signature, and a cut block has none).
// It drops every tool_use block, complete or not (a call of an unfinished
// reply is never run, and one without a result breaks the pairing),
// redacted thinking, and the server tools' blocks (a server_tool_use and its
// web_search_tool_result or other result). With no text and no thinking
// it is the zero Message: nothing to add. The deltas of the API's server
// tools are not given: they are no call the runtime runs.
//
// # A runner's model
//
// [NewModel] makes a [nous.Model] of a client and base params, for a
// runner of turns (package github.com/nous-go/nous/agent) or any loop that
// calls a model through that interface:
//
//	model := nousanthropic.NewModel(client, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 4096})
//	r := &agent.Runner{Model: model, Tools: tools}
//	turn, err := r.Continue(ctx, c, agent.Input{Messages: []nous.Message{nous.UserMessage("Weather in Paris?")}})
//
// Each call is [Send], or [Stream] when the runner streams, on a copy of
// the params with the runner's tools after their own ([Tools] converts
// them); a stream cut short adds its partial reply to the context, which
// the loop above leaves to its caller. One Model serves concurrent calls.
//
// # Compaction
//
// A summary of any role works ([nous.Context.Compact], and
// [nous.Context.ApplyCompaction] with the caller's summary). This adapter
// prefers a user message: it opens the messages as it is. A system summary
// (and the marker compaction writes without a summarizer) at the head of the
// view joins the system blocks, and an assistant summary joins the
// assistant turn that follows it; either way, when the assistant's turn
// comes first, "Continue." leads it (see First message).
//
// # Summaries
//
// [Summarizer] has a Claude model write the summary, through the client and
// params you give it:
//
//	c.Compact(ctx, budget, nous.WithSummarizer(nousanthropic.NewSummarizer(client, params)))
//
// Its request is one user message, the range as [nous.Transcript] writes
// it, under its Prompt ([nous.DefaultSummaryPrompt] unless you set one) as
// the system prompt; the summary is a user message ([nous.SummaryMessage]),
// which opens the messages as it is. The call's usage goes into the
// context's Usage ([nous.UsageSummarizer]), also when the reply holds no
// text ([ErrNoSummary]).
//
// # Reading a reply
//
// [Message] keeps what the API answered exactly: text with its citations,
// thinking blocks with their signatures (in [nous.ContentPart.Options]),
// tool calls with their input bytes as arguments (and, for a call code
// execution made, its caller), and the blocks of the API's server tools
// (web search, code execution) as their JSON in the message's Metadata, sent
// back only to this API; so a response brought in and sent back gives the
// API the same blocks, in their order, and a turn the API paused goes on.
// Its usage counts every prompt token in InputTokens (input, cache writes
// and cache reads), reasoning in OutputTokens. The keys of what it records
// are exported ([OptionDigest], [MetadataBlockOrder], ...), for a runtime
// that records thinking from elsewhere ([ThinkingPart]) or reads the shape.
package anthropic

import (
	"errors"
	"regexp"

	"github.com/nous-go/nous"
)

// ErrUnsupported reports content the Messages API has no block for.
var ErrUnsupported = errors.New("not supported by the Anthropic Messages API")

// ErrEditedThinking reports a thinking part whose text changed after it was
// received: its signature no longer matches it.
var ErrEditedThinking = errors.New("thinking changed after it was received: its signature no longer matches")

// ErrNoResponse reports a nil response given to [Message].
var ErrNoResponse = errors.New("no response")

// Error is a view the Messages API would refuse, as [Fill] reports it: the
// adapter (Provider, "anthropic"), the view index of the message (Index),
// the tool call concerned if any (CallID, the call's own ID), and what is
// wrong and what the caller can do (Err, which wraps a sentinel:
// [nous.ErrUnpaired], [ErrUnsupported] or [ErrEditedThinking]). It is the
// one error type of every provider adapter.
type Error = nous.ViewError

// Provider is the value of Options[nous.OptionProvider] on the parts
// [Message] and [ThinkingPart] make.
const Provider = "anthropic"

// The keys of what [Message] records of a response, besides the core's
// (a thinking block's signature under [nous.OptionSignature], a redacted
// thinking block's data under [nous.OptionRedactedData], the provider under
// [nous.OptionProvider]), for a caller or another runtime that reads or
// writes that shape. They are stored in logs and never change.
const (
	// OptionDigest, on a thinking part, is the hex digest of its text as
	// received (the first 16 bytes of its SHA-256): [Fill] refuses a part
	// whose text no longer matches it ([ErrEditedThinking]). A part without
	// one is sent as it is.
	OptionDigest = "digest"
	// OptionCitations, on a text part Options[nous.OptionProvider] marks as
	// Anthropic's, is the JSON of its text block's citations, sent back with
	// it.
	OptionCitations = "citations"
	// MetadataBlockOrder, on a message, is the order its response's blocks
	// came in ([]any of strings), when it was not thinking, then text, then
	// tool use: "thinking" and "text" name a part of the kind, in turn;
	// "tool_use:<call ID>" a tool call; "block:<n>" the n-th block of
	// MetadataBlocks. Fill sends the blocks in it.
	MetadataBlockOrder = "anthropic_block_order"
	// MetadataBlocks, on a message, is the JSON of the blocks it keeps whole
	// ([]any of strings): those of the API's server tools, and any block
	// type the SDK does not know.
	MetadataBlocks = "anthropic_blocks"
	// MetadataCaller, on a tool call, is the JSON of its caller when code
	// made the call (programmatic tool calling).
	MetadataCaller = "anthropic_caller"
	// MetadataToolset, on a tool call, is the name of its toolset.
	MetadataToolset = "anthropic_toolset"
	// MetadataStopReason, on a message, is its response's stop_reason:
	// "pause_turn" marks a turn the API paused, whose rest Fill sends after
	// it as it came.
	MetadataStopReason = "stop_reason"
)

// The Options and Metadata keys this package reads and writes besides
// those it exports.
const (
	optProvider = nous.OptionProvider
	metaModel   = "model" // on a message: its response's model
)

// The keys of blocks in the order [Message] records, and their ranks in the
// layout [Fill] sends without an order.
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
