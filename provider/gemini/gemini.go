// Package gemini turns a nous context into the contents of a Gemini
// GenerateContent request, and the answer back into a nous message and
// usage, through Google's Gen AI Go SDK.
//
// It fills what the caller passes to the SDK, and calls nothing:
//
//	config := &genai.GenerateContentConfig{Tools: tools}
//	contents, err := nousgemini.Contents(c, config) // a view the API would refuse: an *Error
//	resp, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config)
//	msg, usage, err := nousgemini.Message(resp)
//
// # Rules
//
// The view is checked before anything is sent; a view the API would refuse
// is an [*Error] naming the message (its view index) and the call:
//
//   - Pairing: the results of a model turn's function calls follow it, one
//     tool message per call, before anything else (the view's
//     [nous.Context.CheckToolPairing]; an error wrapping [nous.ErrUnpaired]).
//     They go back in one user content, one functionResponse part per call,
//     in the order of the calls, each with the call's ID and name (the call's, which the API matches,
//     whatever the tool message says). A model turn with function calls
//     must follow a user turn: one that comes first is an error wrapping
//     [ErrUnsupported]. Consecutive messages of one role are one
//     content: the API wants the roles to alternate. Repairing a view is the
//     caller's choice: [nous.Context.PatchDanglingToolCalls].
//   - Content: no empty or whitespace-only text part is sent. Tool arguments
//     must be a JSON object ("{}" when empty; another value: an error
//     wrapping [nous.ErrInvalidArguments]); the SDK carries them as a map
//     whose numbers it writes as float64s, so an integer beyond 2^53 reaches
//     the API rounded. A tool result whose text is a
//     JSON object is the function response itself; other text is
//     {"output": text}, or {"error": text} for an error result. Images and
//     files are inline data (base64, with Options["media_type"]) or file
//     data (a URL, with Options["media_type"], which the API needs: without
//     it, an error wrapping [ErrUnsupported]); a tool result's images and
//     files are its function response's parts (multimodal function
//     responses, which Gemini 3 models take).
//   - System: the system instruction is the context's SystemPrompt (unless
//     it is blank, or the view starts with a system message whose first
//     text begins with it) and the
//     view's leading system messages, the overlay among them; a system
//     message later in the view, which contents have no role for, is user
//     text; a system message with other parts than text is an error
//     wrapping [ErrUnsupported]. A nil config with a system instruction to
//     send is an error too.
//   - Thought signatures: [Message] keeps each part's thought signature
//     where it came (a function call's in the call's Metadata, a text's or
//     thought's in the part's Options, base64), and they go back on the
//     same parts, byte for byte: a model that requires the signature of its
//     own function calls gets it. A signature is never dropped and never
//     made up. Thought text from Gemini goes back as a thought part;
//     thinking from other providers, and ReasoningContent, are dropped.
//
// [Message] gives function calls without an ID one (the API may leave it
// out), so that their results can be paired. The images and files a model
// makes are image and file parts of the message (inline data as base64 with
// Options["media_type"], file data as a URL part), and a model turn sends
// such parts back as inline or file data, signatures on them. Parts the
// message has no place for (code the model ran and its result, thought
// images) are kept whole in its Metadata and go back as they came, in
// their place among the others: a model turn goes back to the API part for
// part.
package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrUnsupported reports content the API has no part for.
var ErrUnsupported = errors.New("not supported by the Gemini API")

// ErrNoCandidate reports a response without a candidate.
var ErrNoCandidate = errors.New("the response has no candidate")

// Error is a view the API would refuse: the view index of the message
// (Index), the tool call concerned if any (CallID), and what is wrong (Err,
// which wraps a sentinel).
type Error = adapt.Error

// Provider is the value of Options["provider"] on the thought parts
// [Message] makes.
const Provider = "gemini"

// The keys of the Options of a part and the Metadata of a tool call that
// carry what Gemini gave.
const (
	optProvider  = "provider"
	optSignature = nous.OptionThoughtSignature // base64 (standard) of the part's thought signature
	metaOrder    = "gemini_part_order"         // on a message: its parts' kinds in the order they came
	metaParts    = "gemini_parts"              // on a message: the JSON of the parts kept whole
)

// signature returns the thought signature kept in opts, or nil.
func signature(opts map[string]any) ([]byte, error) {
	s, _ := opts[optSignature].(string)
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("a thought signature that is not base64: %v: %w", err, ErrUnsupported)
	}
	return b, nil
}

// newCallID returns an ID for a function call the API gave none.
func newCallID() string {
	var b [8]byte
	rand.Read(b[:])
	return "gemini_" + hex.EncodeToString(b[:])
}
