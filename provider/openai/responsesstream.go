package openai

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ResponsesStream reads a streamed Responses API reply, event by event,
// as openai-go's stream gives them: a runtime that reads the stream itself
// passes each event to Add, then takes Message once the stream is over, or
// Partial when it stopped before its end. The zero value is ready to use;
// a ResponsesStream reads one reply and is not safe for concurrent use.
//
// The reply ends with a response.completed or response.incomplete event,
// whose response is the whole reply, usage and all; a response.failed
// event, or an error event, ends it without one.
type ResponsesStream struct {
	// OnDelta, when set, is called with each piece of the reply that
	// carries text (output_text and refusal deltas: [nous.DeltaText],
	// Index the n-th message item), reasoning (summary and reasoning text
	// deltas: [nous.DeltaThinking], Index the n-th reasoning item; a
	// summary part after the first starts with "\n\n", as the message
	// joins them), or a function or custom tool call's name (when its
	// item is added) or arguments ([nous.DeltaToolCall], Index the n-th
	// call, its call ID and name on each), in the order they came, from
	// Add.
	OnDelta func(nous.Delta)

	started bool // an event came
	model   string
	items   map[int64]*streamItem // by output_index
	counts  [3]int                // the items opened of each kind: texts, thinking, calls
	final   *responses.Response   // of response.completed or response.incomplete
	failed  error                 // of response.failed or an error event
	usage   nous.Usage            // of a failed response
}

// The kinds of output item a stream's deltas grow, as indexes of
// ResponsesStream.counts.
const (
	kindText = iota
	kindThinking
	kindCall
	kindOther
)

// streamItem is an output item of a streamed reply so far: its kind and
// index among the items of its kind; a message's text by content part, and
// whether one is a refusal; a reasoning item's summary parts; a call's ID,
// name and arguments.
type streamItem struct {
	kind    int
	index   int
	text    map[int64]*strings.Builder
	refusal bool
	summary map[int64]*strings.Builder
	callID  string
	name    string
}

// Add reads the next event of the reply. A response.failed event is an
// error wrapping [ErrFailed] that quotes the API's error, and so is an
// error event; what came before stays readable through Partial. Other
// events never make an error; those that carry nothing a message keeps
// (a hosted tool's progress, annotations, which the final response
// holds) are read for their place only.
func (s *ResponsesStream) Add(e responses.ResponseStreamEventUnion) error {
	s.started = true
	switch e.Type {
	case "response.created", "response.in_progress", "response.queued":
		if s.model == "" {
			s.model = e.Response.Model
		}
	case "response.completed", "response.incomplete":
		resp := e.Response
		s.final = &resp
	case "response.failed":
		if e.JSON.Response.Valid() && e.Response.JSON.Usage.Valid() {
			s.usage = ResponseUsage(e.Response.Usage)
		}
		s.failed = fmt.Errorf("openai: response %q failed: %s: %s: %w", e.Response.ID, e.Response.Error.Code, e.Response.Error.Message, ErrFailed)
		return s.failed
	case "error":
		s.failed = fmt.Errorf("openai: the stream's error event: %s: %s: %w", e.Code, e.Message, ErrFailed)
		return s.failed
	case "response.output_item.added":
		s.itemAdded(e)
	case "response.output_text.delta", "response.refusal.delta":
		it := s.item(e.OutputIndex, kindText)
		it.part(&it.text, e.ContentIndex).WriteString(e.Delta)
		it.refusal = it.refusal || e.Type == "response.refusal.delta"
		if e.Delta != "" {
			s.emit(nous.Delta{Kind: nous.DeltaText, Index: it.index, Text: e.Delta})
		}
	case "response.output_text.done", "response.refusal.done":
		it := s.item(e.OutputIndex, kindText)
		b := it.part(&it.text, e.ContentIndex)
		b.Reset()
		b.WriteString(e.Text + e.Refusal)
		it.refusal = it.refusal || e.Type == "response.refusal.done"
	case "response.reasoning_summary_text.delta":
		s.summaryDelta(e)
	case "response.reasoning_summary_text.done":
		it := s.item(e.OutputIndex, kindThinking)
		b := it.part(&it.summary, e.SummaryIndex)
		b.Reset()
		b.WriteString(e.Text)
	case "response.reasoning_text.delta":
		// The reasoning itself (open-weight models): shown, but not kept,
		// as the message keeps the summary only.
		if it := s.item(e.OutputIndex, kindThinking); e.Delta != "" {
			s.emit(nous.Delta{Kind: nous.DeltaThinking, Index: it.index, Text: e.Delta})
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if it := s.item(e.OutputIndex, kindCall); e.Delta != "" {
			s.emit(nous.Delta{Kind: nous.DeltaToolCall, Index: it.index, Text: e.Delta, ToolCallID: it.callID, ToolName: it.name})
		}
	case "response.output_item.done":
		s.itemDone(e)
	}
	return nil
}

// itemAdded reads response.output_item.added: it opens the item at the
// event's output index, and a function or custom tool call's item keeps
// the call's ID and name and gives the call's first delta, which names
// it, with the arguments or input the item came with (when it has a name
// or arguments).
func (s *ResponsesStream) itemAdded(e responses.ResponseStreamEventUnion) {
	it := s.item(e.OutputIndex, kindOf(e.Item.Type))
	if it.kind == kindCall {
		it.callID, it.name = e.Item.CallID, e.Item.Name
		args := e.Item.Arguments.OfString + e.Item.Input
		if it.name != "" || args != "" {
			s.emit(nous.Delta{Kind: nous.DeltaToolCall, Index: it.index, Text: args, ToolCallID: it.callID, ToolName: it.name})
		}
	}
}

// summaryDelta reads response.reasoning_summary_text.delta: it adds the
// delta to its summary part, and gives it as a thinking delta, the first
// text of a part after the first led by "\n\n", as the message joins the
// parts. An empty delta gives none.
func (s *ResponsesStream) summaryDelta(e responses.ResponseStreamEventUnion) {
	it := s.item(e.OutputIndex, kindThinking)
	b := it.part(&it.summary, e.SummaryIndex)
	text := e.Delta
	if b.Len() == 0 && text != "" && len(it.summary) > 1 && e.SummaryIndex > 0 {
		text = "\n\n" + text // the parts are joined so in the message
	}
	b.WriteString(e.Delta)
	if text != "" {
		s.emit(nous.Delta{Kind: nous.DeltaThinking, Index: it.index, Text: text})
	}
}

// itemDone reads response.output_item.done, whose item is whole: a
// message's text parts, and a reasoning item's summary parts, are
// replaced with the item's, whatever the deltas made of them. It gives
// no delta.
func (s *ResponsesStream) itemDone(e responses.ResponseStreamEventUnion) {
	it := s.item(e.OutputIndex, kindOf(e.Item.Type))
	switch it.kind {
	case kindText:
		it.text = nil
		for k, c := range e.Item.Content {
			it.part(&it.text, int64(k)).WriteString(c.Text + c.Refusal)
			it.refusal = it.refusal || c.Type == "refusal"
		}
	case kindThinking:
		it.summary = nil
		for k, p := range e.Item.Summary {
			it.part(&it.summary, int64(k)).WriteString(p.Text)
		}
	}
}

// kindOf returns the kind of an output item's type.
func kindOf(typ string) int {
	switch typ {
	case "message":
		return kindText
	case "reasoning":
		return kindThinking
	case "function_call", "custom_tool_call":
		return kindCall
	}
	return kindOther
}

// item returns the item at output index i, opened as one of kind when it
// is new.
func (s *ResponsesStream) item(i int64, kind int) *streamItem {
	if it := s.items[i]; it != nil {
		return it
	}
	if s.items == nil {
		s.items = map[int64]*streamItem{}
	}
	it := &streamItem{kind: kind}
	if kind < kindOther {
		it.index = s.counts[kind]
		s.counts[kind]++
	}
	s.items[i] = it
	return it
}

// part returns the builder of part k of parts, made when it is new.
func (it *streamItem) part(parts *map[int64]*strings.Builder, k int64) *strings.Builder {
	if *parts == nil {
		*parts = map[int64]*strings.Builder{}
	}
	b := (*parts)[k]
	if b == nil {
		b = new(strings.Builder)
		(*parts)[k] = b
	}
	return b
}

// joined returns the texts of parts in their order, joined by sep.
func joined(parts map[int64]*strings.Builder, sep string) string {
	var texts []string
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		texts = append(texts, parts[k].String())
	}
	return strings.Join(texts, sep)
}

func (s *ResponsesStream) emit(d nous.Delta) {
	if s.OnDelta != nil {
		s.OnDelta(d)
	}
}

// Message returns the reply and its usage as [ResponseMessage] gives them
// for the same response not streamed: the response of the
// response.completed event, or of response.incomplete (a message of what
// it made, with [MetadataIncompleteReason]), read by ResponseMessage. A
// stream without either has not ended: an error wrapping
// [nous.ErrInterrupted], and also the [ErrFailed] of a response.failed or
// error event.
func (s *ResponsesStream) Message() (nous.Message, nous.Usage, error) {
	if s.failed != nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: the Responses API stream failed: %w: %w", nous.ErrInterrupted, s.failed)
	}
	if s.final == nil {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: the Responses API stream ended before its response.completed: %w", nous.ErrInterrupted)
	}
	return ResponseMessage(s.final)
}

// Partial returns what the events so far hold that the caller can add to
// the context, and the usage that arrived, for a stream that stopped
// before its end. The message has the text of its message items so far
// (output_text and refusal deltas, or their done events), placed as
// [ResponseMessage] places text but without item IDs (no item of an
// unfinished reply goes back by its ID), and the summary text of its
// reasoning items as plain thinking parts ([nous.ThinkingPart] without a
// signature, never the encrypted content, which no adapter sends back),
// marked [nous.MetadataInterrupted], with Metadata["model"]. It has no
// function or custom tool call, not even one whose arguments are whole, as
// a call of an unfinished reply is never run, and no hosted tool's item
// (web search and the others). With neither text nor thinking it is the
// zero Message, which there is no need to add. The usage is Requests 1
// once an event came: only a final response carries tokens, that of a
// response.failed event among them, whose tokens are counted.
func (s *ResponsesStream) Partial() (nous.Message, nous.Usage) {
	if !s.started {
		return nous.Message{}, nous.Usage{}
	}
	u := nous.Usage{Requests: 1}
	if s.usage.Requests > 0 {
		u = s.usage
		u.ToolCalls = 0
	}
	var texts, thinking []nous.ContentPart
	refusal := false
	for _, k := range slices.Sorted(maps.Keys(s.items)) {
		it := s.items[k]
		switch it.kind {
		case kindText:
			if t := joined(it.text, ""); !adapt.Blank(t) {
				texts = append(texts, nous.TextPart(t))
				refusal = refusal || it.refusal
			}
		case kindThinking:
			if t := joined(it.summary, "\n\n"); !adapt.Blank(t) {
				thinking = append(thinking, nous.ThinkingPart(t, ""))
			}
		}
	}
	if len(texts) == 0 && len(thinking) == 0 {
		return nous.Message{}, u
	}
	m := nous.AssistantMessage("")
	m.Metadata = map[string]any{nous.MetadataInterrupted: true, "model": s.model}
	if refusal {
		m.Metadata["refusal"] = true
	}
	if len(texts) == 1 && len(thinking) == 0 {
		m.Content = texts[0].Content
	} else {
		m.Parts = slices.Concat(thinking, texts)
	}
	return m, u
}

// StreamResponses is [SendResponses] on a streamed reply: a copy of params
// filled from c by [FillResponses], streamed through client with opts,
// each event read by a [ResponsesStream] that gives onDelta (nil for none)
// the reply's deltas as they come.
//
// A stream that ends (response.completed, or response.incomplete) has its
// usage and message added to c, as SendResponses would, and its message
// returned. One that stops before (the context cancelled, the connection
// cut, a response.failed or error event, the body ended before the final
// event) has the usage that arrived added (Requests 1, and the tokens of a
// failed response) and returns the [ResponsesStream.Partial] message,
// which it does not add, with an error wrapping [nous.ErrInterrupted] and
// the cause ([ErrFailed] for a failed response); the caller adds it when
// it is not the zero Message. A view FillResponses refuses, or an error
// before any event came (the API refused the request), changes nothing.
func StreamResponses(ctx context.Context, client openai.Client, params responses.ResponseNewParams, c *nous.Context, onDelta func(nous.Delta), opts ...option.RequestOption) (nous.Message, error) {
	return adapt.Stream(ctx, c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, FillResponses, func(p responses.ResponseNewParams) iter.Seq2[responses.ResponseStreamEventUnion, error] {
		return adapt.Seq(client.Responses.NewStreaming(ctx, p, opts...))
	}, &ResponsesStream{OnDelta: onDelta})
}

var _ adapt.Accumulator[responses.ResponseStreamEventUnion] = (*ResponsesStream)(nil)
