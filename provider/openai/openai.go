// Package openai turns a nous context into the input of an OpenAI Chat
// Completions or Responses request, and the answer back into a nous
// message and usage, through OpenAI's Go SDK.
//
// It fills params the caller owns, and calls nothing:
//
//	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5, Tools: tools}
//	if err := nousopenai.FillChat(&params, c); err != nil { ... } // a view the API would refuse
//	resp, err := client.Chat.Completions.New(ctx, params)
//	msg, usage, err := nousopenai.ChatMessage(resp)
//
// and the same with [FillResponses] and [ResponseMessage] for the
// Responses API.
//
// # Rules
//
// The view is checked before anything is sent; a view the API would refuse
// is an [*Error] naming the message (its view index) and the call:
//
//   - Pairing: the results of an assistant message's tool calls follow it,
//     one tool message per call, before anything else (the view's
//     [nous.Context.CheckToolPairing]; an error wrapping [nous.ErrUnpaired]).
//     Each result is a role:tool message (Chat) or a function_call_output
//     item (Responses) right after its call's turn. Repairing a view is the
//     caller's choice: [nous.Context.PatchDanglingToolCalls].
//   - Content: no empty or whitespace-only text is sent (a message left
//     with nothing is not sent; an empty tool result is sent as ""). Tool
//     arguments must be a JSON object ("{}" when empty; another value: an
//     error wrapping [nous.ErrInvalidArguments]). Images are image parts
//     (base64 data as a data URL); files are file parts with their data; a
//     file URL has no place in Chat, and a Chat tool result is text only:
//     those are errors wrapping [ErrUnsupported].
//   - System: the context's SystemPrompt is the first system message,
//     unless the view starts with a system message that begins with it (a
//     runtime put it there; the overlay may follow it); the view's system
//     messages, the overlay among them, go where they are.
//   - Reasoning: Chat Completions takes no reasoning back: thinking parts
//     and ReasoningContent are not sent. In Responses, a reasoning item
//     [ResponseMessage] brought in (a thinking part with Options["provider"]
//     "openai", its item ID and encrypted content) goes back directly
//     before the item that followed it in the response, the message or the
//     function call it names; one whose follower is no longer in the
//     message is dropped, as the API refuses it alone; thinking from other
//     providers is dropped.
//
// [ChatMessage] and [ResponseMessage] keep what the API answered: text, tool
// calls with their argument bytes, and (Responses) reasoning items and the
// IDs of output items, so that a response brought in and sent back gives the
// API the same items. Usage counts every prompt token in InputTokens (cached
// ones too) and reasoning in OutputTokens.
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

// Error is a view the API would refuse: what, and where.
type Error struct {
	Index  int    // the view index of the message
	CallID string // the tool call concerned, if any
	Err    error  // what is wrong; wraps a sentinel
}

func (e *Error) Error() string {
	if e.CallID != "" {
		return fmt.Sprintf("openai: message %d, call %q: %v", e.Index, e.CallID, e.Err)
	}
	return fmt.Sprintf("openai: message %d: %v", e.Index, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Provider is the value of Options["provider"] on the thinking parts
// [ResponseMessage] makes.
const Provider = "openai"

// The Options keys of a reasoning item's thinking part, and the Metadata
// keys of output item IDs.
const (
	optProvider   = "provider"
	optItemID     = "id"                // the reasoning item's ID
	optEncrypted  = "encrypted_content" // its encrypted content
	optFollowedBy = "followed_by"       // what came after it: a call ID, a message item ID, or "message"
	optSummary    = "summary"           // the texts of its summary parts
	metaItemID    = "openai_item_id"    // on a message, a text part or a tool call: its output item's ID
)

// callError is an error about one tool call.
type callError struct {
	id  string
	err error
}

func (e callError) Error() string { return e.err.Error() }
func (e callError) Unwrap() error { return e.err }

// check checks c's pairing and returns it as an *Error.
func check(c *nous.Context) error {
	if err := c.CheckToolPairing(); err != nil {
		var p nous.PairingError
		errors.As(err, &p)
		return &Error{Index: p.Index, CallID: p.CallID, Err: err}
	}
	return nil
}

// wrap returns err, about view message i, as an *Error.
func wrap(i int, err error) error {
	e := &Error{Index: i, Err: err}
	var call callError
	if errors.As(err, &call) {
		e.CallID = call.id
	}
	return e
}

// blank reports whether text has nothing but white space.
func blank(text string) bool { return strings.TrimSpace(text) == "" }

// texts returns the texts of m, its Content then its text parts, each
// that is not blank.
func texts(m *nous.Message) []string {
	var out []string
	if !blank(m.Content) {
		out = append(out, m.Content)
	}
	for _, p := range m.Parts {
		if p.Type == nous.PartText && !blank(p.Content) {
			out = append(out, p.Content)
		}
	}
	return out
}

// promptInView reports whether c's view starts with a system message that
// begins with its SystemPrompt (a runtime put it there; the overlay may
// follow it): then the prompt is not sent apart.
func promptInView(c *nous.Context) bool {
	for _, m := range c.All() {
		return m.Role == nous.RoleSystem && len(m.Parts) == 0 && strings.HasPrefix(m.Content, c.SystemPrompt)
	}
	return false
}

// dataURL returns the data URL of an image or file part: its Content when
// it is one, or one made of Options["media_type"] and the base64 Content.
func dataURL(p *nous.ContentPart) (string, error) {
	if strings.HasPrefix(p.Content, "data:") {
		return p.Content, nil
	}
	media, _ := p.Options["media_type"].(string)
	if media == "" {
		return "", fmt.Errorf("a %s part without Options[\"media_type\"]: %w", p.Type, ErrUnsupported)
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

// systemOnlyText reports a part of a system message other than text, which
// no system message takes.
func systemOnlyText(m *nous.Message) error {
	for k, p := range m.Parts {
		if p.Type != nous.PartText {
			return fmt.Errorf("part %d: a %s part in a system message: %w", k, p.Type, ErrUnsupported)
		}
	}
	return nil
}
