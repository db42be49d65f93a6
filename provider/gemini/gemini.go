// Package gemini turns a nous context into a Gemini GenerateContent
// request, and the answer back into a nous message and usage, through
// Google's Gen AI Go SDK.
//
// It fills what the caller passes to the SDK, and calls nothing:
//
//	params := nousgemini.Params{Model: "gemini-3-flash-preview", Config: &genai.GenerateContentConfig{Tools: tools}}
//	if err := nousgemini.Fill(&params, c); err != nil { // a view the API would refuse: an *Error
//		return err
//	}
//	resp, err := client.Models.GenerateContent(ctx, params.Model, params.Contents, params.Config)
//	msg, usage, err := nousgemini.Message(resp)
//
// # Rules
//
// The view is checked before anything is sent; a view the API would refuse
// is an [*Error] naming the message (its view index) and the call, and
// saying what the caller can do. What the library itself makes (a reply
// [Message] read, results [nous.Context.RunToolCalls] recorded, a view
// [nous.Context.Compact] shortened with a summary of any role, a
// conversation another provider began) is sent:
//
//   - Pairing: the results of a model turn's function calls follow it, one
//     tool message per call, before anything else (the view's
//     [nous.Context.CheckToolPairing]; an error wrapping [nous.ErrUnpaired]).
//     They go back in one user content, one functionResponse part per call,
//     in the order of the calls, each named after its call (the call's name,
//     whatever the tool message says): the API matches a response to its
//     call by its place and name, and by its ID when the call has one.
//     Repairing a view is the caller's choice:
//     [nous.Context.PatchDanglingToolCalls].
//   - Turns: the contents begin with a user content: when the view does not
//     (a view of system messages only, the task in the instructions; a
//     compacted view whose summary went into the system instruction, or is
//     the model's, and that goes on with the model's turn), a user content
//     of the text "Continue." is sent first; and when they end with a model
//     content (a runtime that asks again after the model's answer), one of
//     the same text is sent last, as recent models refuse a request that
//     ends with a model turn (they take no prefill). The view is not
//     changed. Consecutive messages of one role are one content, except
//     that a user content of function responses holds nothing else: a user
//     message, or a later system message, that follows the results is a
//     user content of its own, which begins a new turn (Gemini 3 models read
//     text after the responses in their content as more of the results, and
//     answer nothing, or refuse the request).
//   - Names: a call without a name (a server that left it out, a stream
//     cut before it came) is sent as "unnamed_tool", as the API refuses a
//     call without one; the model sees the error result its runtime gave
//     the call. The log keeps the call as it came.
//   - Call IDs: a function call and its response carry the ID Gemini gave
//     the call, which [Message] records in the call's
//     Metadata[MetadataCallID], and no other: not the ID Message made up for
//     a call the API gave none (a log written before MetadataCallID has no
//     such key, so its made-up IDs, "gemini_" and 16 hex digits, are not
//     sent either), nor the ID of a call another provider's model or a
//     runtime made. Such calls and their responses go without an ID, matched
//     by place and name.
//   - Content: no empty or whitespace-only text part is sent. Tool arguments
//     that are not a JSON object (a model that stopped halfway, an array, a
//     string) are sent as {"invalid_arguments": "<the text as it came>"}, so
//     that the model sees what it sent, and null or empty ones as {}: the
//     API takes a call's arguments only as an object; the log keeps them as
//     they came.
//     The SDK carries arguments as a map whose numbers it writes as
//     float64s, so an integer beyond 2^53 reaches the API rounded. A tool
//     result whose text is a JSON object is the function response itself;
//     other text is {"output": text}, or {"error": text} for an error
//     result; the texts of a result (its Content and text parts) are
//     joined each on a line of its own, as the other adapters join them.
//     Images and files are inline data (base64, with
//     Options["media_type"]) or file data (a URL, with Options["media_type"],
//     which the API needs: without it, an error wrapping [ErrUnsupported]
//     that says so); a tool result's images and files are its function
//     response's parts (multimodal function responses, which Gemini 3 models
//     take).
//   - System: the system instruction is the context's SystemPrompt (unless
//     it is blank, or the view starts with a system message whose first
//     text begins with it) and the view's leading system messages, the
//     overlay and a system summary among them; a system message later in
//     the view, which contents have no role for, is user text; a system
//     message with other parts than text is an error wrapping
//     [ErrUnsupported]. [Fill] allocates Config when there is a system
//     instruction to send and Config is nil.
//   - Thought signatures: [Message] keeps each part's thought signature
//     where it came (a function call's in the call's
//     Metadata[nous.OptionThoughtSignature], a text's or thought's in the
//     part's Options under the same key, base64), and they go back on the
//     same parts, byte for byte: a signature Gemini gave is never dropped or
//     changed. Gemini 3 refuses a request whose current turn (the model's
//     steps since the last user content with text, not function responses
//     alone) has a step whose first function call carries no signature: calls
//     another provider's model made, or a runtime, or an older Gemini that
//     signed another part. Such a call is sent with the signature Google
//     documents for calls the API did not make, [SkipSignatureValidator];
//     calls in earlier turns, which the API does not check, go as they are.
//     Thought text from Gemini goes back as a thought part; thinking from
//     other providers, and ReasoningContent, are dropped.
//
// [Message] gives function calls without an ID one (the API may leave it
// out), and a call whose ID a call before it in the response has an ID of
// its own (its own with _2, _3, ... after it), so that their results can be
// paired. The images and files a model
// makes are image and file parts of the message (inline data as base64 with
// Options["media_type"], file data as a URL part), and a model turn sends
// such parts back as inline or file data, signatures on them. Parts the
// message has no place for (code the model ran and its result, thought
// images) are kept whole in its Metadata[MetadataParts] and go back as they
// came, in their place among the others (Metadata[MetadataPartOrder]): a
// model turn goes back to the API part for part.
//
// A summary of any role works; a user summary is sent as it is (the first
// content, joined to the user message it precedes), which makes it the one
// this package prefers: a system summary joins the system instruction, and
// an assistant summary is the model's text, each with the lead user content
// before the model's turn when the kept messages begin with it.
//
// # Streaming
//
// [Stream] is [Send] on GenerateContentStream: the reply's deltas go to
// onDelta as they come, and the message at the end is the one [Message]
// gives for the same reply not streamed, byte for byte. c.EmitDelta routes
// the deltas to the context's Callbacks: text to "on_llm_new_delta",
// thoughts to "on_llm_new_thinking_delta", function calls to
// "on_tool_call_delta"; a runtime may c.Emit(nous.CallbackLLMNewMessage, m)
// once the message is whole:
//
//	m, err := nousgemini.Stream(ctx, client, params, c, c.EmitDelta)
//	if errors.Is(err, nous.ErrInterrupted) && m.Role != "" {
//		c.AddMessage(m) // what came before the stream stopped: text and plain thinking
//	}
//	if err != nil {
//		return err
//	}
//	c.Emit(nous.CallbackLLMNewMessage, m)
//	// m.ToolCalls are what the loop runs next
//
// A runtime that reads the stream itself (ADK-Go) adds each chunk to a
// [ContentStream]. The chunks' parts merge as the response not streamed
// has them: consecutive text parts of one kind (thoughts, or text) are one
// part carrying the thought signature that came on any of them (a second
// signature begins a part of its own), so the signature Gemini 3 sends on
// an empty text part at the end of a run signs the run's part, and one
// after a function call stays an empty text part that carries it. Function
// calls come whole, one delta each (its arguments as Text).
//
// A reply ends with a finish reason on candidate 0, or a blocked prompt
// (promptFeedback with a blockReason: an error wrapping [ErrNoCandidate],
// its usage added, as for Send). One that stops before (ctx cancelled, a
// cut connection, an error event of the API, chunks that end without a
// finish reason) has the usage of its last chunk added (the API's counts
// are running totals; Requests 1) and returns [ContentStream.Partial],
// which it does not add, with an error wrapping [nous.ErrInterrupted]. The
// partial message is marked Metadata[nous.MetadataInterrupted] and keeps
// the text so far, as Message places it, and the thoughts so far as plain
// nous.ThinkingPart(text, "") parts, which no adapter sends back. It drops
// the function calls (even whole ones: a call of a reply that stopped is
// not run, and one without its result would break the pairing), every
// thought signature, the images and files the model made, and the parts
// Message keeps whole (code the model ran, its result). With neither text
// nor thoughts it is the zero nous.Message: nothing to add.
//
// # A runner's model
//
// [NewModel] makes a [nous.Model] of a client and base params, for a
// runner of turns (package github.com/nous-go/nous/agent) or any loop that
// calls a model through that interface:
//
//	model := nousgemini.NewModel(client, nousgemini.Params{Model: "gemini-3-flash-preview"})
//	r := &agent.Runner{Model: model, Tools: tools}
//	turn, err := r.Continue(ctx, c, agent.Input{Messages: []nous.Message{nous.UserMessage("Weather in Paris?")}})
//
// Each call is [Send], or [Stream] when the runner streams, on a copy of
// the params and their Config with the runner's tools after the Config's
// own ([Tools] converts them); a stream cut short adds its partial reply
// to the context, which the loop above leaves to its caller. One Model
// serves concurrent calls.
//
// # Summaries
//
// [NewSummarizer] makes a [nous.Summarizer] of the client and params a
// runtime already has, so that compacting writes its summary with a
// Gemini model:
//
//	s := nousgemini.NewSummarizer(client, nousgemini.Params{Model: "gemini-3-flash-preview",
//		Config: &genai.GenerateContentConfig{MaxOutputTokens: 2048}})
//	plan, err := c.Compact(ctx, budget, nous.WithSummarizer(s))
//
// It sends its Prompt ([nous.DefaultSummaryPrompt] when empty) as the
// system instruction and [nous.Transcript] of the range as the one user
// message, through [Fill]; the summary is [nous.SummaryMessage] of the
// reply's text, a user message, the role this package sends as it is. It is
// a [nous.UsageSummarizer]: [nous.Context.Compact] adds the tokens of the
// summary call to the context's Usage, also when the summary is refused.
package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nous-go/nous"
)

// ErrUnsupported reports content the API has no part for.
var ErrUnsupported = errors.New("not supported by the Gemini API")

// ErrNoCandidate reports a response without a candidate (a blocked prompt),
// or no response at all.
var ErrNoCandidate = errors.New("the response has no candidate")

// Error is a view the API would refuse, as [Fill] reports it: Provider is
// "gemini", Index the view index of the message, CallID the tool call
// concerned if any, and Err what is wrong and what the caller can do (it
// wraps [nous.ErrUnpaired], [ErrUnsupported] or [nous.ErrInvalidArguments]).
type Error = nous.ViewError

// Provider is the value of Options[nous.OptionProvider] on the parts
// [Message] makes.
const Provider = "gemini"

// The Metadata keys of what [Message] records of a response, which [Fill]
// reads back. A part's and a call's thought signature is kept under
// [nous.OptionThoughtSignature] (in the part's Options, the call's
// Metadata), base64 (standard).
const (
	// MetadataCallID, on a tool call, is the ID Gemini gave the call: the
	// one a request sends back. A call without it (an ID Message made up, a
	// call of another provider or of a runtime, a log written before the
	// key) is sent without an ID.
	MetadataCallID = "gemini_call_id"
	// MetadataPartOrder, on a message, is the order its parts came in, as
	// a list of strings: "thought", "text" and "media" for the next part of
	// the kind, "call:ID" for a function call, "part:N" for the part kept
	// whole at index N of MetadataParts. It is there only when the parts
	// did not come as thoughts, text, media, then calls, or some were kept
	// whole.
	MetadataPartOrder = "gemini_part_order"
	// MetadataParts, on a message, is the JSON (as strings) of the parts the
	// message has no place for, kept whole.
	MetadataParts = "gemini_parts"
)

// SkipSignatureValidator is the thought signature Google documents for a
// function call the API did not make (a trace of another model, a call a
// client ran on its own): it lets a Gemini 3 model take such calls in the
// current turn, which it otherwise refuses without a signature. It is the
// base64 of the signature, as the API's JSON writes it; the SDK writes the
// same bytes in the standard alphabet ("skip/thought/signature/validator").
const SkipSignatureValidator = "skip_thought_signature_validator"

// skipSignature is the bytes of [SkipSignatureValidator].
var skipSignature, _ = base64.URLEncoding.DecodeString(SkipSignatureValidator) // a constant of the alphabet: it decodes

// signature returns the thought signature kept in opts, or nil.
func signature(opts map[string]any) ([]byte, error) {
	s, _ := opts[nous.OptionThoughtSignature].(string)
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("a thought signature that is not base64 (%v): put back what Message recorded, or delete the key %q: %w",
			err, nous.OptionThoughtSignature, ErrUnsupported)
	}
	return b, nil
}

// newCallID returns an ID for a function call the API gave none.
func newCallID() string {
	var b [8]byte
	rand.Read(b[:])
	return "gemini_" + hex.EncodeToString(b[:])
}
