package nous

// DeltaKind says what a streamed [Delta] grows.
type DeltaKind string

// The kinds of delta a streamed reply gives.
const (
	DeltaText     DeltaKind = "text"      // the reply's text
	DeltaThinking DeltaKind = "thinking"  // the model's thinking, or its summary
	DeltaToolCall DeltaKind = "tool_call" // a tool call: its name, then its arguments
)

// Delta is a piece of a model's reply as it streams in: what a UI shows
// before the reply is whole. The provider adapters' stream readers give
// one for each piece that carries text, thinking, or a tool call's name or
// arguments, in the order the API sent them, on the goroutine that reads
// the stream. A delta is for show: the message the reader makes at the
// end is built from the stream itself, not from the deltas.
type Delta struct {
	Kind DeltaKind
	// Index is the position of what the delta grows among the reply's
	// pieces of its kind: the n-th text or thinking block from 0, or the
	// n-th tool call from 0. Deltas of one piece share it, so that a UI
	// can keep parallel calls apart.
	Index int
	// Text is what the delta adds: text, thinking, or a piece of a tool
	// call's arguments, JSON as the model writes it and not yet whole.
	Text string
	// ToolCallID and ToolName name the call a DeltaToolCall grows, on
	// every delta of it once the API has sent them (its first, for every
	// API this module knows).
	ToolCallID string
	ToolName   string
}

// The events of a run that [Context.Emit] passes to the context's
// [Callback]s, by name: the reference library's names, so that callbacks
// written for it read the same events. Each comment gives the payload.
const (
	CallbackLLMNewDelta         = "on_llm_new_delta"          // string: text of the reply, as it streams
	CallbackLLMNewThinkingDelta = "on_llm_new_thinking_delta" // string: thinking, as it streams
	CallbackLLMNewMessage       = "on_llm_new_message"        // Message: the model's reply, whole
	CallbackToolCall            = "on_tool_call"              // ToolCall: a call about to run (RunToolCalls)
	CallbackToolResponse        = "on_tool_response"          // Message: a call's result (RunToolCalls)
	// CallbackToolCallDelta is this package's own: a Delta of a tool call, as
	// it streams, for a UI that shows a call before it runs. The
	// reference library has no event for it.
	CallbackToolCallDelta = "on_tool_call_delta"
)

// Emit calls the context's callback for event, if any, then its Notify, if
// set, with event and payload, on the caller's goroutine. It is how a
// runtime raises the events of a run; see the Callback names.
func (c *Context) Emit(event string, payload any) {
	if f := c.Callbacks[event]; f != nil {
		f(event, payload)
	}
	if c.Notify != nil {
		c.Notify(event, payload)
	}
}

// listens reports whether anything receives event: a callback for it, or
// Notify. An event nobody receives costs nothing, not even its payload.
func (c *Context) listens(event string) bool { return c.Notify != nil || c.Callbacks[event] != nil }

// EmitDelta emits d as its event: a text delta's Text as
// [CallbackLLMNewDelta], a thinking delta's as [CallbackLLMNewThinkingDelta], a
// tool call's Delta as [CallbackToolCallDelta]. The method value c.EmitDelta
// is what the provider adapters' Stream functions take to route a reply's
// deltas to the context's callbacks:
//
//	m, err := openai.StreamChat(ctx, client, params, c, c.EmitDelta)
func (c *Context) EmitDelta(d Delta) {
	switch {
	case d.Kind == DeltaText && c.listens(CallbackLLMNewDelta):
		c.Emit(CallbackLLMNewDelta, d.Text)
	case d.Kind == DeltaThinking && c.listens(CallbackLLMNewThinkingDelta):
		c.Emit(CallbackLLMNewThinkingDelta, d.Text)
	case d.Kind == DeltaToolCall && c.listens(CallbackToolCallDelta):
		c.Emit(CallbackToolCallDelta, d)
	}
}

// MetadataInterrupted is the Metadata key, set to true, that marks an
// assistant message a stream left unfinished: the reply of a stream that
// was cancelled, cut or failed before its end, as the provider adapters'
// Stream functions return it. It holds what the stream gave up to then
// that the API takes back: the text so far, and thinking as plain text
// that no adapter sends as signed. It holds no tool call: a call whose
// arguments may be half there is never run, and a call without its result
// would break the pairing.
const MetadataInterrupted = "interrupted"

// Interrupted reports whether m is a reply a stream left unfinished,
// marked with [MetadataInterrupted].
func (m Message) Interrupted() bool { return m.Metadata[MetadataInterrupted] == true }
