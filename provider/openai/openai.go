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
//     those are errors wrapping [ErrUnsupported]. An assistant turn takes
//     text only, but for the images of the Responses API's own image
//     generation calls, which go back as those items: an image or file
//     another model made (Options["provider"] names it) is dropped from it,
//     and any other is an error wrapping [ErrUnsupported].
//   - System: the context's SystemPrompt is the first system message,
//     unless it is blank, or the view starts with a system message whose
//     first text begins with it (a runtime put it there; the overlay may
//     follow it); the view's system
//     messages, the overlay among them, go where they are.
//   - Reasoning: Chat Completions takes no reasoning back: thinking parts
//     and ReasoningContent are not sent. In Responses, a reasoning item
//     [ResponseMessage] brought in (a thinking part with Options["provider"]
//     "openai", its item ID and encrypted content) goes back directly
//     before the first of the items that followed it in the response (up to
//     the next reasoning item) that is still in the message, as the API
//     wants every such item sent with its ID to come with it; one none of
//     whose items is left (or whose follower was an item a message does not
//     keep) is dropped, as the API refuses it alone; the items after one
//     that came before a hosted tool's call (which a message does not keep)
//     go without their IDs (an image generation item, whose ID is required,
//     not at all). Thinking from other providers is dropped. The
//     items go back in the order the response had them, and a message
//     item's content parts (refusals, annotations) as they came while its
//     text is unchanged.
//
// [ChatMessage] and [ResponseMessage] keep what the API answered: text, tool
// calls with their argument bytes (and, in Responses, their namespace and
// the program that made them), and (Responses) custom tool calls (sent to
// Chat as custom calls too), reasoning items, the images of image
// generation calls, and the IDs of output items, so that a response brought
// in and sent back gives the API the same items. Usage counts every prompt token in InputTokens (cached
// ones too) and reasoning in OutputTokens.
package openai

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrUnsupported reports content the API has no place for.
var ErrUnsupported = errors.New("not supported by this OpenAI API")

// ErrNoChoice reports a Chat Completions response without a choice.
var ErrNoChoice = errors.New("the response has no choice")

// Error is a view the API would refuse: the view index of the message
// (Index), the tool call concerned if any (CallID), and what is wrong (Err,
// which wraps a sentinel).
type Error = adapt.Error

// Provider is the value of Options["provider"] on the thinking parts
// [ResponseMessage] makes.
const Provider = "openai"

// The Options keys of a reasoning item's thinking part, and the Metadata
// keys of output item IDs.
const (
	optProvider     = "provider"
	optItemID       = "id"                        // the reasoning item's ID
	optEncrypted    = nous.OptionEncryptedContent // its encrypted content
	optFollowedBy   = "followed_by"               // what came after it: a call ID, a message item ID, or "message"
	optGroup        = "followed_by_all"           // every item that came after it, up to the next reasoning item
	optUnsendable   = "unsendable"                // it followed an item a message does not keep: its items go without IDs
	metaOrder       = "openai_item_order"         // on a message: the keys of its items (message and image IDs, call IDs) in the order they came
	metaCustom      = "openai_custom"             // on a tool call: a custom tool's, its arguments {"input": text}
	metaNamespace   = "openai_namespace"          // on a tool call: its tool's namespace
	metaCaller      = "openai_caller"             // on a tool call: the JSON of its caller, the program that made it
	metaClientItems = "openai_client_items"       // on a message: the JSON of client tool calls it cannot hold (computer, shell, patch)
	optSummary      = "summary"                   // the texts of its summary parts
	metaItemID      = "openai_item_id"            // on a message, a text part or a tool call: its output item's ID
	metaContent     = "openai_content"            // on a message or a text part: its item's content parts, when not one output_text
)

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
