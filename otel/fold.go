package nousotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/nous-go/nous"
)

// The span kinds, as options made once.
var (
	kindClient   = trace.WithSpanKind(trace.SpanKindClient)
	kindInternal = trace.WithSpanKind(trace.SpanKindInternal)
)

// toolFunction is gen_ai.tool.type of the tools a model calls.
var toolFunction = semconv.GenAIToolType("function")

// errorOther is error.type's value for an error of no known type, as the
// conventions name it.
const errorOther = "_OTHER"

// fold turns a log's events, one at a time in seq order, into spans: the
// one machine behind live tracing and export, so that both give the same
// trace of the same events.
//
//   - A turn (invoke_agent) is the events between a turn_start and its
//     turn_end, when the log has them; otherwise it starts at a user
//     message, or at a reply with no turn open, and ends when a reply
//     that asks for no tool ends its step, or at the next user message,
//     or at the last event.
//   - A model call (chat) runs from the event before its reply (or its
//     step_start) to its step_end, or to the reply when no step_end
//     follows it; a step_end with no reply is a call that gave none.
//   - A tool call (execute_tool) runs from the end of the step that asked
//     for it to its result.
type fold struct {
	t      *Tracer
	parent context.Context
	c      *nous.Context // its prompt and deps, for content
	conv   attribute.KeyValue
	last   time.Time         // the time of the last event folded
	names  map[string]string // span names, by operation and model or tool

	turn         trace.Span // the open invoke_agent span, or nil
	turnRec      bool       // the turn is recorded: its calls have spans
	turnCtx      context.Context
	turnOpt      trace.SpanStartOption // the attributes every turn's span starts with
	startOpts    [3]trace.SpanStartOption
	endOpts      [1]trace.SpanEndOption
	turnStart    time.Time
	turnLast     time.Time // the latest end of the turn's spans
	lastTurnEnd  time.Time // when the turn before ended
	turnExplicit bool      // opened by a turn_start: a turn_end closes it
	turnUsage    nous.Usage
	turnSteps    int
	turnErr      string // the error of the turn's last model call

	next      time.Time // when the next model call starts
	nextFixed bool      // next is a step_start's: later events do not move it

	reply   *nous.Message // a reply whose step has not ended
	replyAt time.Time
	cut     bool // the last event ended a model call that failed with no reply

	summary                 *nous.Message // the summary the last event put in place, if it was one
	summaryAt, summaryStart time.Time

	calls map[string][]askedCall // calls asked for and not yet answered, by ID (a reply may repeat one), in recorded turns

	content *content // nil without WithContent
	masker  *content // without content, for errors' texts: made at the first
	input   []nous.Message
}

// askedCall is a tool call a reply asked for.
type askedCall struct {
	call  nous.ToolCall
	at    time.Time // when the step that asked for it ended, or its reply came
	asked bool      // the step ended: at is its end
}

func newFold(t *Tracer, ctx context.Context, c *nous.Context) *fold {
	f := &fold{
		t:      t,
		parent: ctx,
		c:      c,
		conv:   semconv.GenAIConversationID(c.Log().ID().String()),
		calls:  make(map[string][]askedCall),
		names:  make(map[string]string),
	}
	if t.content {
		f.content = newContent(t, c)
	}
	return f
}

// add folds the next event.
func (f *fold) add(e *nous.Event) {
	if e.Message == nil && e.Type.IsSurface() {
		return // not an event a log holds
	}
	if e.Type == nous.EventBatch {
		// The end of a save's batch: no event of the run, it neither
		// starts nor ends a span, nor moves a time the fold keeps.
		return
	}
	at := e.CreatedAt
	switch e.Type {
	case nous.EventTurnStart:
		f.flushStep()
		f.endTurn(f.last)
		f.startTurn(at, true)
	case nous.EventTurnEnd:
		f.flushStep()
		f.endTurn(at)
	case nous.EventStepStart:
		f.flushStep()
		f.next, f.nextFixed = at, true
	case nous.EventUserMessage:
		f.flushStep()
		if !f.turnExplicit {
			f.endTurn(f.last)
			f.startTurn(at, false)
		}
		f.addInput(e.Message)
	case nous.EventSystemMessage, nous.EventReplace:
		f.flushStep()
		f.summary = nil
		if e.Type == nous.EventReplace && e.Message.Metadata[nous.MetadataSummary] == true {
			// A summary: the reply of a model call when a step_end
			// comes next (Context.Compact logs a summarizer's call so).
			f.summary, f.summaryAt, f.summaryStart = e.Message, at, f.callStart(at)
		}
		f.addInput(e.Message)
	case nous.EventAssistantMessage:
		if f.cut && e.Message.Interrupted() {
			// The partial reply of the call that just failed, which the
			// caller added: that call's, which has its span.
			f.addInput(e.Message)
			break
		}
		f.flushStep()
		if f.turn == nil {
			f.startTurn(f.callStart(at), false)
		}
		f.reply, f.replyAt = e.Message, at
		if f.turnRec {
			for _, tc := range e.Message.ToolCalls {
				f.calls[tc.ID] = append(f.calls[tc.ID], askedCall{call: tc, at: at})
			}
		}
	case nous.EventStepEnd:
		s, ok := nous.StepOf(*e)
		switch {
		case ok && f.summary != nil:
			f.summaryStep(&s, at)
		case ok:
			f.endStep(&s, at)
		default:
			f.flushStep()
		}
	case nous.EventToolResult:
		f.flushStep()
		f.toolSpan(e.Message, at)
		f.addInput(e.Message)
	}
	f.cut = f.cut && e.Type == nous.EventStepEnd
	if e.Type != nous.EventReplace {
		f.summary = nil // a summary no step followed was no model's
	}
	f.last = at
	if !f.nextFixed && e.Type != nous.EventAssistantMessage {
		f.next = at
	}
}

// finish ends what is open at the last event's time.
func (f *fold) finish() {
	f.flushStep()
	f.endTurn(f.last)
}

// callStart returns when a model call whose reply came at at started.
func (f *fold) callStart(at time.Time) time.Time {
	if f.next.IsZero() || f.next.After(at) {
		return at
	}
	return f.next
}

func (f *fold) startTurn(at time.Time, explicit bool) {
	if f.turnOpt == nil {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, f.conv}
		if f.t.agent != "" {
			attrs = append(attrs, semconv.GenAIAgentName(f.t.agent))
		}
		f.turnOpt = trace.WithAttributes(attrs...)
	}
	if at.Before(f.lastTurnEnd) {
		at = f.lastTurnEnd // a call asked for in the turn before, answered in this one
	}
	f.turnLast = at
	// Options in arrays of the fold's own, which a turn's span reuses:
	// a run traced by a tracer that records nothing pays little per turn.
	f.startOpts = [3]trace.SpanStartOption{trace.WithTimestamp(at), kindInternal, f.turnOpt}
	ctx, span := f.t.tracer.Start(f.parent, f.name("invoke_agent", f.t.agent), f.startOpts[:]...)
	f.turn, f.turnCtx, f.turnStart, f.turnExplicit = span, ctx, at, explicit
	// A turn the tracer does not record (a no-op tracer, or a sampler
	// that drops it) gets no spans of its calls: they would have no
	// parent in the trace, and a parent-based sampler drops them.
	f.turnRec = span.IsRecording() || span.SpanContext().IsSampled()
	f.turnUsage, f.turnSteps, f.turnErr = nous.Usage{}, 0, ""
}

func (f *fold) endTurn(at time.Time) {
	if f.turn == nil {
		return
	}
	if f.turn.IsRecording() && f.turnSteps > 0 {
		f.turn.SetAttributes(usageAttrs(f.turnUsage)...)
	}
	if f.turnErr != "" {
		f.turn.SetAttributes(semconv.ErrorTypeKey.String(errorOther))
		f.turn.SetStatus(codes.Error, f.turnErr)
	}
	if f.turnRec || f.turn.IsRecording() {
		at = f.ended(f.turnStart, at) // not before its start, nor its calls' ends
		f.endOpts[0] = trace.WithTimestamp(at)
		f.turn.End(f.endOpts[:]...)
	} else {
		f.turn.End() // not recorded: its end is no one's
	}
	f.turn, f.turnCtx, f.turnExplicit, f.turnRec = nil, nil, false, false
	f.lastTurnEnd = at
}

// turnContext returns the context a model or a tool call's span that
// starts at at is made in: the open turn's, after opening one if none
// is; and when the span starts, which is not before its turn (a call
// asked for in a turn that ended runs in the next one).
func (f *fold) turnContext(at time.Time) (context.Context, time.Time) {
	if f.turn == nil {
		f.startTurn(at, false)
	}
	if at.Before(f.turnStart) {
		at = f.turnStart
	}
	return f.turnCtx, at
}

// flushStep ends the call of a reply no step_end followed, at the reply.
func (f *fold) flushStep() {
	if f.reply != nil {
		f.endStep(nil, f.replyAt)
	}
}

// endStep makes the chat span of the model call that ends at at: the
// pending reply's, if any, with the step s logged (nil when none was).
func (f *fold) endStep(s *nous.Step, at time.Time) {
	reply := f.reply
	start := f.callStart(at)
	if reply != nil {
		start = f.callStart(f.replyAt)
	}
	ctx, start := f.turnContext(start)
	var failure string
	switch {
	case s != nil && s.Error != "":
		failure = s.Error
	case reply == nil:
		failure = "the model call gave no reply"
	case reply.Interrupted():
		failure = "the reply was cut short"
	}
	if f.turnRec {
		failure = f.chatSpan(ctx, s, reply, f.input, start, at, failure)
	}

	if s != nil {
		f.turnUsage = f.turnUsage.Add(s.Usage)
	}
	f.turnSteps++
	f.turnErr = failure
	f.reply, f.input, f.nextFixed = nil, f.input[:0], false
	if reply == nil {
		f.cut = failure != "" // a partial reply the caller adds next is this call's
		return
	}
	for _, tc := range reply.ToolCalls {
		for i, a := range f.calls[tc.ID] {
			if !a.asked {
				f.calls[tc.ID][i].at, f.calls[tc.ID][i].asked = at, true
			}
		}
	}
	if len(reply.ToolCalls) == 0 && !f.turnExplicit && failure == "" {
		f.endTurn(at)
	}
}

// summaryStep makes the chat span of the model call that made the
// summary just put in place, whose step s ends at at. It is a call of the
// turn, which goes on; its input, the messages it replaced, is not in
// the span, and the next call's input is what it was before it.
func (f *fold) summaryStep(s *nous.Step, at time.Time) {
	ctx, start := f.turnContext(f.summaryStart)
	if f.turnRec {
		f.chatSpan(ctx, s, f.summary, nil, start, at, s.Error) // the turn's failure is its replies'
	}
	f.turnUsage = f.turnUsage.Add(s.Usage)
	f.turnSteps++
	f.summary, f.nextFixed = nil, false
}

// chatSpan makes the span of a model call that ran from start to at,
// in ctx, given input, and returns its failure's text as the span has it.
func (f *fold) chatSpan(ctx context.Context, s *nous.Step, reply *nous.Message, input []nous.Message, start, at time.Time, failure string) string {
	var model, provider string
	if s != nil {
		model, provider = s.Model, s.Provider
	}
	attrs := make([]attribute.KeyValue, 2, 4)
	attrs[0], attrs[1] = semconv.GenAIOperationNameChat, f.conv
	if provider != "" {
		attrs = append(attrs, providerName(provider))
	}
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	_, span := f.t.tracer.Start(ctx, f.name("chat", model), trace.WithTimestamp(start),
		kindClient, trace.WithAttributes(attrs...))
	if span.IsRecording() {
		if reply != nil {
			span.SetAttributes(replyAttrs(reply)...)
		}
		if s != nil {
			span.SetAttributes(usageAttrs(s.Usage)...)
		}
		if f.content != nil {
			f.content.refresh() // a tool may have set a secret since the last call
			span.SetAttributes(f.content.chat(input, reply)...)
		}
	}
	if failure != "" {
		failure = f.mask(failure)
		span.SetAttributes(semconv.ErrorTypeKey.String(errorOther))
		span.SetStatus(codes.Error, failure)
	}
	span.End(trace.WithTimestamp(f.ended(start, at)))
	return failure
}

// ended returns when a span of the turn that started at start ends: at,
// or start when the clock went back between them; the turn's last end
// moves to it.
func (f *fold) ended(start, at time.Time) time.Time {
	if at.Before(start) {
		at = start
	}
	if at.After(f.turnLast) {
		f.turnLast = at
	}
	return at
}

// name returns the name of a span of operation op on what ("chat
// gpt-5", "execute_tool get_weather"), or op when what is "".
func (f *fold) name(op, what string) string {
	if what == "" {
		return op
	}
	key := op + "\x00" + what
	n, ok := f.names[key]
	if !ok {
		n = op + " " + what
		f.names[key] = n
	}
	return n
}

// toolSpan makes the execute_tool span of the call result m answers, at
// at.
func (f *fold) toolSpan(m *nous.Message, at time.Time) {
	call := nous.ToolCall{ID: m.ToolCallID, Name: m.Name}
	start := at
	if asked := f.calls[m.ToolCallID]; len(asked) > 0 {
		call, start = asked[0].call, asked[0].at
		if len(asked) == 1 {
			delete(f.calls, m.ToolCallID)
		} else {
			f.calls[m.ToolCallID] = asked[1:]
		}
	}
	ctx, start := f.turnContext(start)
	if !f.turnRec {
		return
	}
	attrs := make([]attribute.KeyValue, 4, 5)
	attrs[0], attrs[1], attrs[2], attrs[3] = semconv.GenAIOperationNameExecuteTool, f.conv, semconv.GenAIToolCallID(call.ID), toolFunction
	if call.Name != "" {
		attrs = append(attrs, semconv.GenAIToolName(call.Name))
	}
	_, span := f.t.tracer.Start(ctx, f.name("execute_tool", call.Name), trace.WithTimestamp(start),
		kindInternal, trace.WithAttributes(attrs...))
	if f.content != nil && span.IsRecording() {
		f.content.refresh() // the call's update, applied before its result, may have set one
		span.SetAttributes(f.content.tool(&call, m)...)
	}
	if m.IsError() {
		desc := "the tool returned an error"
		if f.content != nil {
			f.content.refresh()
			desc = f.content.text(m.Text())
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errorOther))
		span.SetStatus(codes.Error, desc)
	}
	span.End(trace.WithTimestamp(f.ended(start, at)))
}

// mask returns an error's text with the deps' secrets masked, as
// content has them: an error is no content, but may quote a secret.
func (f *fold) mask(text string) string {
	if f.content != nil {
		f.content.refresh()
		return f.content.mask(text)
	}
	if f.masker == nil {
		f.masker = newContent(f.t, f.c)
	} else {
		f.masker.refresh()
	}
	return f.masker.mask(text)
}

// addInput keeps m for the next chat span's input, with content.
func (f *fold) addInput(m *nous.Message) {
	if f.content != nil && m != nil && f.turnRec {
		f.input = append(f.input, *m)
	}
}

// replyAttrs returns what a reply says of itself: the model that made
// it and why it stopped, as the provider adapters record them.
func replyAttrs(m *nous.Message) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if model, _ := m.Metadata["model"].(string); model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(model))
	}
	if r := finishReason(m); r != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(r))
	}
	return attrs
}

// finishReason returns why the model stopped, as its provider's adapter
// recorded it: OpenAI's and Gemini's finish_reason, Anthropic's
// stop_reason.
func finishReason(m *nous.Message) string {
	for _, k := range [...]string{"finish_reason", "stop_reason"} {
		if r, _ := m.Metadata[k].(string); r != "" {
			return r
		}
	}
	return ""
}

// usageAttrs returns u as the conventions' usage attributes. The
// breakdowns are set only when not 0.
func usageAttrs(u nous.Usage) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.GenAIUsageInputTokens(u.InputTokens),
		semconv.GenAIUsageOutputTokens(u.OutputTokens),
	}
	if u.CacheReadInputTokens != 0 {
		attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(u.CacheReadInputTokens))
	}
	if u.CacheCreationInputTokens != 0 {
		attrs = append(attrs, semconv.GenAIUsageCacheCreationInputTokens(u.CacheCreationInputTokens))
	}
	if u.ReasoningTokens != 0 {
		attrs = append(attrs, semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
	}
	return attrs
}

// providerName returns gen_ai.provider.name for a provider adapter's
// name: Gemini's adapter talks to the Gemini API or Vertex AI, which the
// conventions name together as gcp.gen_ai; other names are theirs.
func providerName(p string) attribute.KeyValue {
	switch p {
	case "openai":
		return semconv.GenAIProviderNameOpenAI
	case "anthropic":
		return semconv.GenAIProviderNameAnthropic
	case "gemini":
		return semconv.GenAIProviderNameGCPGenAI
	}
	return semconv.GenAIProviderNameKey.String(p)
}
