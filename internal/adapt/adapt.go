// Package adapt holds what the provider adapters (provider/anthropic,
// provider/openai, provider/gemini) share: the error of a view a provider
// would refuse, the checks every one of them makes, and the order of a
// response's items that each records and sends back ([Order], [Replay]).
package adapt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nous-go/nous"
)

// Error is a view a provider's API would refuse: what, and where.
type Error = nous.ViewError

// CallError is an error about one tool call, which Wrap names.
type CallError struct {
	ID  string
	Err error
}

func (e CallError) Error() string { return e.Err.Error() }
func (e CallError) Unwrap() error { return e.Err }

// Wrap returns err, about view message i, as an *Error of provider, naming
// the call a CallError in it is about.
func Wrap(provider string, i int, err error) error {
	e := &Error{Provider: provider, Index: i, Err: err}
	var call CallError
	if errors.As(err, &call) {
		e.CallID = call.ID
	}
	return e
}

// Pairing returns the first pairing problem of c's view as an *Error of
// provider, or nil. Its text says the way out: PatchDanglingToolCalls when
// that repairs the view (calls left without results), else replacing the
// message (a result whose call is not before it, an ID used twice in one
// message).
func Pairing(provider string, c *nous.Context) error {
	err := c.CheckToolPairing()
	if err == nil {
		return nil
	}
	var p nous.PairingError
	errors.As(err, &p)
	patched := c.Clone()
	patched.PatchDanglingToolCalls()
	way := "c.PatchDanglingToolCalls() answers the calls left without a result"
	if patched.CheckToolPairing() != nil {
		way = "replace or remove the message (c.ReplaceMessage, c.ReplaceMessageRange)"
	}
	return &Error{Provider: provider, Index: p.Index, CallID: p.CallID, Err: pairingError{p, way}}
}

// pairingError is a pairing problem, as an adapter reports it: the
// problem and the way out, the index and call being the *Error's.
type pairingError struct {
	p   nous.PairingError
	way string
}

func (e pairingError) Error() string {
	return fmt.Sprintf("%s: %v; %s", e.p.Problem, nous.ErrUnpaired, e.way)
}

func (e pairingError) Unwrap() error { return e.p }

// Blank reports whether text has nothing but white space: providers refuse
// such a text block.
func Blank(text string) bool { return strings.TrimSpace(text) == "" }

// SystemOnlyText returns an error wrapping unsupported for a part of a
// system message other than text, which no provider's system blocks take.
func SystemOnlyText(m *nous.Message, unsupported error) error {
	for k, p := range m.Parts {
		if p.Type != nous.PartText {
			return fmt.Errorf("part %d: a %s part in a system message: %w", k, p.Type, unsupported)
		}
	}
	return nil
}

// Prompt returns c's SystemPrompt, to send apart from the view: "" when it
// is blank, or when the view starts with a system message whose first text
// begins with it (a runtime put it there; the overlay may follow it).
func Prompt(c *nous.Context) string {
	if Blank(c.SystemPrompt) {
		return ""
	}
	for _, m := range c.All() {
		if t := Texts(&m); m.Role == nous.RoleSystem && len(t) > 0 && strings.HasPrefix(t[0], c.SystemPrompt) {
			return ""
		}
		break
	}
	return c.SystemPrompt
}

// Texts returns the texts of m, its Content then its text parts, each that
// is not blank.
func Texts(m *nous.Message) []string {
	var out []string
	if !Blank(m.Content) {
		out = append(out, m.Content)
	}
	for _, p := range m.Parts {
		if p.Type == nous.PartText && !Blank(p.Content) {
			out = append(out, p.Content)
		}
	}
	return out
}

// Foreign reports whether another provider than provider made p (its
// Options["provider"] names another): an image a model made, which an API
// that takes no media in an assistant turn drops there rather than refuse
// the view.
func Foreign(p *nous.ContentPart, provider string) bool {
	made, _ := p.Options[nous.OptionProvider].(string)
	return made != "" && made != provider
}

// LeadText is the text of the user message that an adapter whose API wants
// the messages to begin with a user turn (Anthropic's, Gemini's) sends
// first when they do not: a compacted view that begins with the assistant's
// turn (its summary a system message), or a view of system messages only
// (the task in the instructions). The view is not changed.
const LeadText = "Continue."

// ResultSeparator joins the texts of a tool result (its Content and text
// parts) for an API that takes one text: each on a line of its own. The
// parts of a tool's output are chunks a runtime made, which a model reads
// as lines; servers that take a list of text parts where a string goes
// join them so too (vLLM's chat templates).
const ResultSeparator = "\n"
