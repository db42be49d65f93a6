// Package openai turns a nous context into the input of an OpenAI Chat
// Completions or Responses request, and the answer back into a nous
// message and usage, through OpenAI's Go SDK.
//
// It fills params the caller owns, and calls nothing:
//
//	params := responses.ResponseNewParams{Model: openai.ChatModelGPT5, Tools: tools}
//	if err := nousopenai.FillResponses(&params, c); err != nil { ... } // a view the API would refuse
//	resp, err := client.Responses.New(ctx, params)
//	if err != nil { ... }
//	msg, usage, err := nousopenai.ResponseMessage(resp) // err: a failed response, its usage billed
//	c.AddUsage(usage)
//	if err != nil { ... }
//	c.AddMessage(msg)
//
// and the same with [FillChat] and [ChatMessage] for Chat Completions.
//
// # Summaries
//
// [NewChatSummarizer] and [NewResponsesSummarizer] make a compaction's
// summary with a model call of the caller's client and params:
//
//	s := nousopenai.NewChatSummarizer(client, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5Mini, MaxCompletionTokens: openai.Int(1024)})
//	_, err := c.Compact(ctx, budget, nous.WithSummarizer(s))
//
// The request holds Prompt ([nous.DefaultSummaryPrompt] when blank) as its
// system prompt and the range as text ([nous.Transcript]) as its one user
// message, so any range goes whatever it holds; the summary is a user
// message ([nous.SummaryMessage]), which every adapter sends as it is. The
// call's usage goes into the context's Usage, also when the summary fails
// or is refused; a reply without text is an error wrapping [ErrNoSummary].
//
// # Streaming
//
// [StreamChat] and [StreamResponses] are [SendChat] and [SendResponses] on
// a streamed reply: the reply's deltas go to a callback as they come, and
// the message at the end is the one the import of the same response not
// streamed gives, byte for byte. A runtime passes the context's
// [nous.Context.EmitDelta], which routes text to its "on_llm_new_delta"
// callback, thinking to "on_llm_new_thinking_delta" and tool-call deltas
// to "on_tool_call_delta", and may emit the whole message after:
//
//	m, err := nousopenai.StreamChat(ctx, client, params, c, c.EmitDelta)
//	switch {
//	case errors.Is(err, nous.ErrInterrupted): // cancelled, cut or failed: m is what came
//		if m.Role != "" {
//			c.AddMessage(m) // text so far, marked interrupted; no tool call
//		}
//	case err != nil: // nothing changed
//	default: // m and its usage are in c
//		c.Emit(nous.CallbackLLMNewMessage, m)
//	}
//
// A runtime that reads the SDK's stream itself feeds its events to a
// [ChatStream] or a [ResponsesStream] (Add each, then Message, or Partial
// when the stream stopped early). What ends a stream: a Chat reply ends at
// its first choice's finish_reason; its usage comes in a last chunk
// without choices, which StreamChat asks for (StreamOptions.IncludeUsage)
// and which a body that ends right after the finish lacks: the reply is
// whole, its usage Requests 1 without tokens. A Responses reply ends with
// response.completed, or response.incomplete (the message of an
// incomplete response, as the import gives it); response.failed and an
// error event stop it, an error wrapping [ErrFailed].
//
// A stream that stops before its end (the context cancelled, the
// connection cut, an error of the API, a body that ends too soon) gives a
// partial message, which is not added: the assistant's text so far (every
// text so far, one cut halfway too), placed as the import places text but
// without item IDs, and the reasoning summary so far as plain thinking
// parts ([nous.ThinkingPart] without a signature, never the encrypted
// content, which no adapter sends back), marked
// [nous.MetadataInterrupted]. It holds no tool call, not even one whose
// arguments came whole: a call of an unfinished reply is never run, and a
// call without its result would break the pairing; nor any hosted tool's
// item (a web search). With neither text nor thinking it is the zero
// Message. The usage added is what arrived: Requests 1 once an event came,
// and tokens only from the final usage (the Chat usage chunk, a
// Responses API final or failed response), never more than the reply's.
// An error before any event (the API refused the request) changes
// nothing.
//
// # A runner's model
//
// [NewChatModel] and [NewResponsesModel] make a [nous.Model] of a client
// and base params, for a runner of turns (package
// github.com/nous-go/nous/agent) or any loop that calls a model through
// that interface:
//
//	model := nousopenai.NewResponsesModel(client, responses.ResponseNewParams{Model: openai.ChatModelGPT5})
//	r := &agent.Runner{Model: model, Tools: tools}
//	turn, err := r.Continue(ctx, c, agent.Input{Messages: []nous.Message{nous.UserMessage("Weather in Paris?")}})
//
// Each call is [SendChat] or [SendResponses], or [StreamChat] or
// [StreamResponses] when the runner streams, on a copy of the params with
// the runner's tools after their own ([ChatTools], [ResponsesTools]
// convert them); a stream cut short adds its partial reply to the
// context, which the loop above leaves to its caller. One model serves
// concurrent calls.
//
// # Rules
//
// The view is checked before anything is sent; a view the API would refuse
// is an [*Error] naming the message (its view index) and the call, and
// saying what the caller can do. What the library itself made (a response
// brought in, RunToolCalls, PatchDanglingToolCalls, a compaction, a switch
// from another provider) is sent:
//
//   - Pairing: the results of an assistant message's tool calls follow it,
//     one tool message per call, before anything else (the view's
//     [nous.Context.CheckToolPairing]; an error wrapping [nous.ErrUnpaired]).
//     Each result is a role:tool message (Chat) or a function_call_output
//     item (Responses, a custom_tool_call_output for a custom tool's call)
//     right after its call's turn. Repairing a view is the caller's
//     choice: [nous.Context.PatchDanglingToolCalls].
//   - Arguments: a function call's arguments go as a JSON object: as they
//     came when they are one, {} when empty or null, and otherwise (bytes a
//     model that stopped halfway sent, an array, a string) as
//     {"invalid_arguments": their text}, so that a call the runtime
//     answered with an error goes on every turn after and the model sees
//     what it sent. Both APIs carry arguments as a string, but servers that
//     speak them (vLLM, SGLang and others) refuse a request whose earlier
//     call's arguments are not an object. A custom tool's call
//     (Metadata[MetadataCustom]) goes with the input of its arguments
//     {"input": text}, or, when they are of another shape, with their text
//     as its input (free text, which the API takes whatever it holds). The
//     log keeps the arguments as they came.
//   - Names: a call without a name (a server that left it out, a stream
//     cut before it came) is sent as "unnamed_tool", as the API refuses a
//     call without one; the model sees the error result its runtime gave
//     the call. The log keeps the call as it came.
//   - Call IDs: each call goes under its own ID, unless a call before it in
//     the view has it (a server that numbers its calls per turn, call_0
//     each time; the APIs, or the servers that speak them, refuse an ID
//     twice in a request) or it is longer than the API takes (Chat 40
//     characters, Responses 64); such a call goes under an ID made of its
//     own (its first characters, then _2, _3, ...), its results with it.
//     The IDs are a function of the view: the same view sends the same
//     ones, and a view that grows keeps those of its earlier turns. An ID
//     from another provider (Anthropic's toolu_..., Gemini's) goes as it
//     is when it fits. The log keeps its IDs.
//   - Content: no empty or whitespace-only text is sent (a message left
//     with nothing is not sent; an empty tool result is sent as ""; a
//     request left with no message at all, an empty view, gets a user
//     message of the text "Continue.", as the APIs want one). A
//     tool result's texts (its Content and text parts) go each on a line
//     of its own. Images are image parts (base64 data as a data URL, made
//     of Options["media_type"]); files are file parts with their data; a
//     file URL has no place in Chat, and a Chat tool result is text only:
//     those are errors wrapping [ErrUnsupported] (the caller's content;
//     the error says what to send instead, or to use FillResponses). An
//     assistant turn takes text only, but for the images of the Responses
//     API's own image generation calls, which go back as those items (one
//     without its item ID, which such an item needs, is dropped): an image
//     or file another model made ([nous.OptionProvider] names it) is
//     dropped from it, and any other is an error wrapping [ErrUnsupported].
//   - System: the context's SystemPrompt is the first system message,
//     unless it is blank, or the view starts with a system message whose
//     first text begins with it (a runtime put it there; the overlay may
//     follow it); the view's system messages, the overlay among them, go
//     where they are.
//   - Reasoning: Chat Completions takes no reasoning back: thinking parts
//     and ReasoningContent are not sent. In Responses, a reasoning item
//     [ResponseMessage] brought in (a thinking part with
//     [nous.OptionProvider] [Provider], its [OptionItemID] and encrypted
//     content) goes back directly before the first of the items that
//     followed it in the response that is still in the message. It is
//     dropped when none is (the API refuses it alone), when it came before
//     an item a message does not keep (a hosted tool's call:
//     [OptionUnsendable]), when it has no ID, when its ID went before in
//     the request (a server that numbers its items per turn), and when it
//     came without its encrypted content while params.Store is false: it
//     would go by reference to an item the API did not store, which it
//     refuses ("Items are not persisted when store is set to false").
//     Thinking from other providers is dropped.
//   - Item IDs: an item goes with its output item ID (fc_..., msg_...,
//     ig_...) only when the reasoning item it came after in its response
//     ([MetadataReasoning]) goes right before it in this turn, for the API
//     refuses it without ("provided without its required 'reasoning'
//     item"): once the caller drops thinking, or a rule above drops a
//     reasoning item, its items go without their IDs, which the API
//     takes; and only when no item before it in the request had the ID
//     (the API refuses an ID twice). An image generation item, whose ID is
//     required, then goes not at all (the image stays in the message). A
//     message recorded before [MetadataReasoning] was is read by its
//     reasoning parts' followers ([OptionFollowedByAll]): an item none of
//     them names goes without its ID, and in a message with no reasoning
//     part from OpenAI every item keeps its ID (a response without
//     reasoning, most likely; if its reasoning parts were removed, the
//     API refuses the request: remove the items' [MetadataItemID] too).
//   - Order: the items go back in the order the response had them
//     ([MetadataItemOrder]), and a message item's content parts (refusals,
//     annotations) as they came while its text is unchanged
//     ([MetadataContent]).
//
// [ChatMessage] and [ResponseMessage] keep what the API answered: text, tool
// calls with their argument bytes (and, in Responses, their namespace and
// the program that made them), custom tool calls, and (Responses)
// reasoning items, the images of image generation calls, and the IDs of
// output items, so that a response brought in and sent back gives the API
// the same items. The keys they record are this package's Option and
// Metadata constants. A nil response is an error wrapping [ErrNoResponse];
// a Chat response without a choice one wrapping [ErrNoChoice], a Responses
// response that failed one wrapping [ErrFailed], each returned with the
// usage billed; an incomplete response is a message with its reason
// ([MetadataIncompleteReason]). Usage counts every prompt token in
// InputTokens (cached ones too) and reasoning in OutputTokens.
package openai

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nous-go/nous"
)

// ErrUnsupported reports content the API has no place for.
var ErrUnsupported = errors.New("not supported by this OpenAI API")

// ErrNoChoice reports a Chat Completions response without a choice.
var ErrNoChoice = errors.New("the response has no choice")

// ErrNoResponse reports a nil response given to [ChatMessage] or
// [ResponseMessage].
var ErrNoResponse = errors.New("no response")

// ErrFailed reports a Responses API response whose status is "failed", or
// a Responses API stream's error event: the API's error (its code and
// message) is in the error's text.
var ErrFailed = errors.New("the response failed")

// Error is a view the API would refuse, as [FillChat] and [FillResponses]
// report it: Provider "openai", the view index of the message (Index), the
// tool call concerned if any (CallID), and what is wrong and what the
// caller can do (Err, which wraps a sentinel: [nous.ErrUnpaired] or
// [ErrUnsupported]).
type Error = nous.ViewError

// Provider is the value of Options[nous.OptionProvider] on the thinking
// parts and the images [ResponseMessage] makes.
const Provider = "openai"

// The Options keys of the thinking part [ResponseMessage] makes of a
// reasoning item, beside [nous.OptionProvider] ([Provider]) and
// [nous.OptionEncryptedContent] (the item's encrypted content, when the
// response had it). The values are stored in logs and never change.
const (
	// OptionItemID holds the reasoning item's ID.
	OptionItemID = "id"
	// OptionSummary holds the texts of its summary parts, a []any of
	// strings; the part's Content is them joined, for reading.
	OptionSummary = "summary"
	// OptionFollowedBy holds the key of the first item that came after it:
	// a function or custom tool call's call ID, or a message or image
	// item's ID.
	OptionFollowedBy = "followed_by"
	// OptionFollowedByAll holds the keys of every item that came after it,
	// past the reasoning items right after it and up to the next one, a
	// []any of strings.
	OptionFollowedByAll = "followed_by_all"
	// OptionUnsendable, true, marks a reasoning item that came before an
	// item a message does not keep (a hosted tool's call): it cannot go
	// back, and the items after it go without their IDs.
	OptionUnsendable = "unsendable"
)

// The Metadata keys of the messages and tool calls [ResponseMessage] makes,
// which are also the Options keys of its text and image parts where the
// concept is theirs. The values are stored in logs and never change.
const (
	// MetadataItemID holds the ID of the output item a message (of one
	// message item), a text part (of one of several), an image part or a
	// tool call was.
	MetadataItemID = "openai_item_id"
	// MetadataReasoning holds the ID of the reasoning item the output item
	// came after in the response, on a tool call, a text or image part, or
	// a message of one message item; absent when none came before it. The
	// item goes back with its ID only when that reasoning item goes with
	// it, for the API refuses an item with its ID without the reasoning
	// it came after.
	MetadataReasoning = "openai_reasoning"
	// MetadataItemOrder holds, on a message, the keys of its items (message
	// and image item IDs, call IDs) in the order the response had them, a
	// []any of strings; absent when they came in the default layout
	// (images, then text, then calls).
	MetadataItemOrder = "openai_item_order"
	// MetadataContent holds, on a message or a text part, its message
	// item's content parts (refusals, annotations) when they are not one
	// output_text without annotations: a []any of maps with "type", "text"
	// and "json" (the part as it came).
	MetadataContent = "openai_content"
	// MetadataCustom, true, marks a custom tool's call, whose arguments are
	// {"input": text}.
	MetadataCustom = "openai_custom"
	// MetadataNamespace holds a tool call's tool's namespace.
	MetadataNamespace = "openai_namespace"
	// MetadataCaller holds the JSON of a tool call's caller, the program
	// that made it.
	MetadataCaller = "openai_caller"
	// MetadataClientItems holds, on a message, the JSON of the client tool
	// calls it has no place for (computer, shell, apply patch, MCP
	// approval requests), a []any of strings, for the runtime that runs
	// them; they are not sent back.
	MetadataClientItems = "openai_client_items"
	// MetadataIncompleteReason holds, on the message of a response whose
	// status is "incomplete", why it stopped ("max_output_tokens",
	// "content_filter", ...).
	MetadataIncompleteReason = "incomplete_reason"
)

// dataURL returns the data URL of an image or file part: its Content when
// it is one, or one made of Options["media_type"] and the base64 Content.
func dataURL(p *nous.ContentPart) (string, error) {
	if strings.HasPrefix(p.Content, "data:") {
		return p.Content, nil
	}
	media, _ := p.Options["media_type"].(string)
	if media == "" {
		return "", fmt.Errorf("a %s part without Options[\"media_type\"] (set it, or make Content a data URL): %w", p.Type, ErrUnsupported)
	}
	return "data:" + media + ";base64," + p.Content, nil
}

// filename returns Options["filename"] of a file part, or a default.
func filename(p *nous.ContentPart) string {
	if name, _ := p.Options["filename"].(string); name != "" {
		return name
	}
	return "file"
}
