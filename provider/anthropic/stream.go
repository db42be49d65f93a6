package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ErrEventOutOfPlace reports a stream event the Messages API does not send
// where it came: an event before message_start or after message_stop, a
// second message_start, a content block started out of turn, a delta or a
// stop for a block that is not open, or a delta of another kind than its
// block's (a text_delta for a tool_use block).
var ErrEventOutOfPlace = errors.New("an event out of place in the stream")

// MessageStream reads a streamed reply of the Messages API, event by
// event: the events of client.Messages.NewStreaming, in the order they
// came, given to Add. It is what [Stream] reads a reply with, and it is for
// a runtime that reads the stream itself. The zero value is ready; one
// MessageStream reads one reply, on one goroutine.
//
// It accumulates the events with the SDK's own [anthropic.Message.Accumulate]
// (the blocks' JSON kept up to date with every delta), and [MessageStream.Message]
// reads the result with [Message], the importer of a reply not streamed: a
// stream that ended gives the message and usage the same response not
// streamed gives, signatures, citations and server tool blocks included. A
// tool's input, which the stream sends as the model writes it, is compacted
// when its block stops, as the response not streamed has it.
type MessageStream struct {
	// OnDelta, when set, is called with each delta of the reply (see
	// [nous.Delta]), on the goroutine that calls Add, before Add returns:
	// text_delta as [nous.DeltaText], thinking_delta as [nous.DeltaThinking],
	// a tool_use block's start (its ID and name) and its input_json_delta
	// pieces as [nous.DeltaToolCall]. Index counts the blocks of a kind from
	// 0: text blocks, thinking blocks (redacted thinking is one, though it
	// gives no delta), and tool_use blocks, so that a call's Index is its
	// place in the message's ToolCalls. The API's server tools (web search,
	// code execution) give no delta: they are not calls the runtime runs.
	// Signatures and citations give none either. A delta with no text is
	// not given, but the first of a tool call, which names it.
	OnDelta func(nous.Delta)

	msg     anthropic.Message // the events, accumulated by the SDK
	blocks  []streamBlock     // what Add knows of each content block, by index
	counts  [3]int            // the blocks so far of each kind that gives deltas
	events  int               // the events read
	started bool              // message_start came
	ended   bool              // message_stop came
	failed  error             // the error event that ended the stream
}

var _ adapt.Accumulator[anthropic.MessageStreamEventUnion] = (*MessageStream)(nil)

// streamBlock is what a [MessageStream] knows of one content block.
type streamBlock struct {
	kind    nous.DeltaKind // "" for a block that gives no delta
	index   int            // its place among the blocks of its kind
	stopped bool           // content_block_stop came
}

// The kinds of delta, in MessageStream.counts.
var deltaKinds = [...]nous.DeltaKind{nous.DeltaText, nous.DeltaThinking, nous.DeltaToolCall}

// Add reads the next event of the stream. A ping changes nothing. An error
// event (an overloaded API, mid-stream) ends the stream: it is an error
// wrapping [nous.ErrInterrupted] with the API's error type and message, and
// every event after it is refused. An event out of place is an error
// wrapping [ErrEventOutOfPlace], and changes nothing: what came before it
// stays readable. An event type this package does not know is ignored, as
// the SDK ignores it.
func (s *MessageStream) Add(e anthropic.MessageStreamEventUnion) error {
	if e.Type == "ping" {
		return nil
	}
	if s.failed != nil || s.ended {
		return fmt.Errorf("anthropic: a %s event after the stream ended: %w", e.Type, ErrEventOutOfPlace)
	}
	if e.Type == "error" {
		s.failed = fmt.Errorf("anthropic: the stream failed after %d events: %s: %w", s.events, streamError(e.RawJSON()), nous.ErrInterrupted)
		return s.failed
	}
	if !s.started && e.Type != "message_start" {
		return fmt.Errorf("anthropic: a %s event before message_start: %w", e.Type, ErrEventOutOfPlace)
	}
	var err error
	switch e.Type {
	case "message_start":
		err = s.startMessage(e)
	case "content_block_start":
		err = s.startBlock(e)
	case "content_block_delta":
		err = s.blockDelta(e)
	case "content_block_stop":
		err = s.stopBlock(e)
	case "message_delta":
		err = s.msg.Accumulate(e)
	case "message_stop":
		err = s.stopMessage(e)
	default:
		return nil // an event the SDK does not know either
	}
	if err != nil {
		return err
	}
	s.events++
	return nil
}

// startMessage reads message_start, the first event of the stream: a
// second one is an error wrapping [ErrEventOutOfPlace]. The blocks the
// message starts with (the API sends none) are counted, and give no
// delta.
func (s *MessageStream) startMessage(e anthropic.MessageStreamEventUnion) error {
	if s.started {
		return fmt.Errorf("anthropic: a second message_start: %w", ErrEventOutOfPlace)
	}
	if err := s.msg.Accumulate(e); err != nil {
		return err
	}
	s.started = true
	for i := range s.msg.Content { // the API starts with none; blocks given here give no delta
		s.blocks = append(s.blocks, s.newBlock(s.msg.Content[i].Type))
	}
	return nil
}

// startBlock reads content_block_start, which must start the block after
// the last: it adds the block, and gives the delta of what the block
// starts with (a tool call's ID and name, text or thinking), if any. A
// block out of turn, or one the SDK cannot read, is an error wrapping
// [ErrEventOutOfPlace], and leaves the blocks as they were.
func (s *MessageStream) startBlock(e anthropic.MessageStreamEventUnion) error {
	if e.Index != int64(len(s.blocks)) {
		return fmt.Errorf("anthropic: content block %d started after %d blocks: %w", e.Index, len(s.blocks), ErrEventOutOfPlace)
	}
	if err := s.msg.Accumulate(e); err != nil {
		s.msg.Content = s.msg.Content[:len(s.blocks)] // the block the SDK could not read
		return fmt.Errorf("anthropic: content block %d: %w: %w", e.Index, ErrEventOutOfPlace, err)
	}
	cb := &s.msg.Content[e.Index]
	sb := s.newBlock(cb.Type)
	s.blocks = append(s.blocks, sb)
	switch {
	case cb.Type == "tool_use" && (cb.ID != "" || cb.Name != ""):
		s.emit(nous.Delta{Kind: nous.DeltaToolCall, Index: sb.index, ToolCallID: cb.ID, ToolName: cb.Name})
	case cb.Type == "text" && cb.Text != "":
		s.emit(nous.Delta{Kind: nous.DeltaText, Index: sb.index, Text: cb.Text})
	case cb.Type == "thinking" && cb.Thinking != "":
		s.emit(nous.Delta{Kind: nous.DeltaThinking, Index: sb.index, Text: cb.Thinking})
	}
	return nil
}

// blockDelta reads content_block_delta, which must be for an open block
// and of a kind its block takes (else an error wrapping
// [ErrEventOutOfPlace], and nothing changes), and gives its delta: text,
// thinking, or a piece of a tool call's input, when it has any.
func (s *MessageStream) blockDelta(e anthropic.MessageStreamEventUnion) error {
	sb, err := s.open(e)
	if err != nil {
		return err
	}
	cb := &s.msg.Content[e.Index]
	if !fits(cb.Type, e.Delta.Type) {
		return fmt.Errorf("anthropic: a %s for content block %d, a %s block: %w", e.Delta.Type, e.Index, cb.Type, ErrEventOutOfPlace)
	}
	if err := s.msg.Accumulate(e); err != nil {
		return fmt.Errorf("anthropic: content block %d: %w: %w", e.Index, ErrEventOutOfPlace, err)
	}
	switch {
	case e.Delta.Type == "text_delta" && e.Delta.Text != "":
		s.emit(nous.Delta{Kind: nous.DeltaText, Index: sb.index, Text: e.Delta.Text})
	case e.Delta.Type == "thinking_delta" && e.Delta.Thinking != "":
		s.emit(nous.Delta{Kind: nous.DeltaThinking, Index: sb.index, Text: e.Delta.Thinking})
	case e.Delta.Type == "input_json_delta" && e.Delta.PartialJSON != "" && sb.kind == nous.DeltaToolCall:
		s.emit(nous.Delta{Kind: nous.DeltaToolCall, Index: sb.index, Text: e.Delta.PartialJSON, ToolCallID: cb.ID, ToolName: cb.Name})
	}
	return nil
}

// stopBlock reads content_block_stop, which must be for an open block:
// the block's tool input, if any, is compacted, and the block is stopped.
func (s *MessageStream) stopBlock(e anthropic.MessageStreamEventUnion) error {
	sb, err := s.open(e)
	if err != nil {
		return err
	}
	compactInput(&s.msg.Content[e.Index])
	if err := s.msg.Accumulate(e); err != nil {
		return err
	}
	sb.stopped = true
	return nil
}

// stopMessage reads message_stop, which ends the stream: the tool input
// of each block not stopped is compacted, as its stop would have done.
func (s *MessageStream) stopMessage(e anthropic.MessageStreamEventUnion) error {
	for i := range s.blocks {
		if !s.blocks[i].stopped {
			compactInput(&s.msg.Content[i])
		}
	}
	if err := s.msg.Accumulate(e); err != nil {
		return err
	}
	s.ended = true
	return nil
}

// newBlock returns what Add knows of a new block of type typ, and counts
// it among the blocks of its kind.
func (s *MessageStream) newBlock(typ string) streamBlock {
	k := -1
	switch typ {
	case "text":
		k = 0
	case "thinking", "redacted_thinking":
		k = 1
	case "tool_use":
		k = 2
	}
	if k < 0 {
		return streamBlock{}
	}
	sb := streamBlock{kind: deltaKinds[k], index: s.counts[k]}
	s.counts[k]++
	return sb
}

// open returns the block a delta or stop event is for, which must have
// started and not stopped.
func (s *MessageStream) open(e anthropic.MessageStreamEventUnion) (*streamBlock, error) {
	if e.Index < 0 || e.Index >= int64(len(s.blocks)) {
		return nil, fmt.Errorf("anthropic: a %s event for content block %d of %d: %w", e.Type, e.Index, len(s.blocks), ErrEventOutOfPlace)
	}
	sb := &s.blocks[e.Index]
	if sb.stopped {
		return nil, fmt.Errorf("anthropic: a %s event for content block %d, which stopped: %w", e.Type, e.Index, ErrEventOutOfPlace)
	}
	return sb, nil
}

// fits reports whether a delta of type delta goes in a block of type
// block, as the API sends them; a delta this package does not know goes
// anywhere (the SDK ignores it).
func fits(block, delta string) bool {
	switch delta {
	case "text_delta", "citations_delta":
		return block == "text"
	case "thinking_delta", "signature_delta":
		return block == "thinking"
	case "input_json_delta":
		return block != "text" && block != "thinking" && block != "redacted_thinking"
	}
	return true
}

// compactInput compacts the input of a tool_use or server_tool_use block,
// which the stream gave as the model wrote it, as the response not
// streamed has it. Input that is not JSON is left for the SDK, which
// empties it.
func compactInput(cb *anthropic.ContentBlockUnion) {
	if len(cb.Input) == 0 {
		return
	}
	var b bytes.Buffer
	if json.Compact(&b, cb.Input) == nil && b.Len() != len(cb.Input) {
		cb.Input = b.Bytes()
	}
}

// streamError returns the type and message of an error event's JSON.
func streamError(raw string) string {
	var e struct {
		Error struct{ Type, Message string }
	}
	if json.Unmarshal([]byte(raw), &e) != nil || e.Error.Type == "" {
		return "an error event"
	}
	return e.Error.Type + ": " + e.Error.Message
}

func (s *MessageStream) emit(d nous.Delta) {
	if s.OnDelta != nil {
		s.OnDelta(d)
	}
}

// Message returns the reply and its usage once the stream has ended
// (message_stop came): what [Message] gives for the same response not
// streamed. Before that, it returns no message, the usage that arrived (as
// [MessageStream.Partial]), and an error wrapping [nous.ErrInterrupted].
// The message's tool call arguments share memory with the stream: read
// them, do not change them.
func (s *MessageStream) Message() (nous.Message, nous.Usage, error) {
	if !s.ended {
		_, u := s.Partial()
		if s.failed != nil {
			return nous.Message{}, u, s.failed
		}
		return nous.Message{}, u, fmt.Errorf("anthropic: the stream stopped before message_stop, after %d events: %w", s.events, nous.ErrInterrupted)
	}
	return Message(&s.msg)
}

// Partial returns what the stream gave so far as a message the caller can
// add to a context whose view stays one the API takes, and the usage that
// arrived. The message is the assistant's, marked with
// [nous.MetadataInterrupted] (and the model, when message_start named it):
// the text of each text block so far, a block cut halfway included, without
// its citations, placed as [Message] places text (one block is the
// message's Content); the thinking so far as plain [nous.ThinkingPart]s,
// without signature or provider, which no adapter sends back; all in the
// order the blocks came, each block of nothing but white space left out
// (the API takes no blank text). It holds no tool call (a call of an
// unfinished reply is never run, and one without a result would break the
// pairing, even when its block stopped), no redacted thinking, and no block
// of the API's server tools (a server tool use without its result, or a
// result whose citations the text no longer has). When there is no text and
// no thinking, it is the zero Message: nothing to add.
//
// The usage is that of the events so far: once message_start came,
// Requests 1, the input and cache tokens it counts, and the output tokens
// of the last message_delta (the API counts them whole so far), or of
// message_start; never more than the usage of the whole reply, whose
// ToolCalls Partial leaves 0. Before message_start, it is the zero Usage.
//
// Partial does not end the stream: it is also what a stream read so far
// looks like, for a caller that stops reading.
func (s *MessageStream) Partial() (nous.Message, nous.Usage) {
	var u nous.Usage
	if s.started {
		u = Usage(s.msg.Usage)
	}
	var parts []nous.ContentPart
	thinking := false
	for i := range s.msg.Content {
		switch b := &s.msg.Content[i]; b.Type {
		case "text":
			if !adapt.Blank(b.Text) {
				parts = append(parts, nous.TextPart(b.Text))
			}
		case "thinking":
			if !adapt.Blank(b.Thinking) {
				parts = append(parts, nous.ThinkingPart(b.Thinking, ""))
				thinking = true
			}
		}
	}
	if len(parts) == 0 {
		return nous.Message{}, u
	}
	m := nous.AssistantMessage("")
	if len(parts) == 1 && !thinking {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{nous.MetadataInterrupted: true}
	if s.msg.Model != "" {
		m.Metadata[metaModel] = string(s.msg.Model)
	}
	return m, u
}

// Stream is [Send] on a streamed reply: a copy of params filled from c by
// [Fill], sent through client.Messages.NewStreaming with opts, and read
// event by event by a [MessageStream] whose OnDelta is onDelta (nil for
// none; c.EmitDelta routes the deltas to c's Callbacks). A stream that
// ends (message_stop) has its usage and message added to c, the message
// [Send] would add for the same reply, and returns it.
//
// A view Fill refuses is its [*Error], and nothing is sent; an error of the
// API before any event (the request refused, an HTTP error) changes
// nothing. Reading stops at message_stop: a connection cut after it does
// not change the reply; and it stops at the first event after ctx is done,
// even one the client had read already. A stream that stops before message_stop (ctx cancelled, the
// connection cut, the body ending early, an error event of the API such
// as overloaded_error) has the usage that arrived added to c, and returns
// [MessageStream.Partial]'s message, which it does not add, with an error
// wrapping [nous.ErrInterrupted] and the cause (errors.As finds the SDK's
// *anthropic.Error of an error event). The caller adds the partial message
// when it is not the zero Message, or drops it.
func Stream(ctx context.Context, client anthropic.Client, params anthropic.MessageNewParams, c *nous.Context, onDelta func(nous.Delta), opts ...option.RequestOption) (nous.Message, error) {
	return adapt.Stream(ctx, c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, Fill, func(p anthropic.MessageNewParams) iter.Seq2[anthropic.MessageStreamEventUnion, error] {
		return untilStop(adapt.Seq(client.Messages.NewStreaming(ctx, p, opts...)))
	}, &MessageStream{OnDelta: onDelta})
}

// untilStop returns the events of a stream up to its message_stop, the
// last the API sends: what the connection does after it (closes, or is cut
// before the end of the body) does not change a reply that is whole.
func untilStop(events iter.Seq2[anthropic.MessageStreamEventUnion, error]) iter.Seq2[anthropic.MessageStreamEventUnion, error] {
	return func(yield func(anthropic.MessageStreamEventUnion, error) bool) {
		for e, err := range events {
			if !yield(e, err) || err != nil || e.Type == "message_stop" {
				return
			}
		}
	}
}
