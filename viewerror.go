package nous

import "fmt"

// ViewError is a view a provider's API would refuse, as the provider
// adapters (provider/anthropic, provider/openai, provider/gemini) report it
// before anything is sent: which adapter, the view index of the message
// (see [Context.All]), the tool call concerned, and what is wrong. Err wraps
// a sentinel ([ErrUnpaired], or one of the adapter's own) and says what the
// caller can do. One type for every adapter, so that a runtime that
// switches provider matches one with errors.As.
type ViewError struct {
	Provider string // the adapter: "anthropic", "openai" or "gemini"
	Index    int    // the view index of the message
	CallID   string // the tool call concerned, if any
	Err      error  // what is wrong and what would help; wraps a sentinel
}

func (e *ViewError) Error() string {
	if e.CallID != "" {
		return fmt.Sprintf("%s: message %d, call %q: %v", e.Provider, e.Index, e.CallID, e.Err)
	}
	return fmt.Sprintf("%s: message %d: %v", e.Provider, e.Index, e.Err)
}

func (e *ViewError) Unwrap() error { return e.Err }
