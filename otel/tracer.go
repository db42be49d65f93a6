package nousotel

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/nous-go/nous"
)

// ScopeName is the instrumentation scope of the spans a [Tracer] makes.
const ScopeName = "github.com/nous-go/nous/otel"

// Tracer makes OpenTelemetry spans of session logs, live or after the
// fact. It is safe for concurrent use; each trace it makes is of one
// context, on that context's goroutine.
type Tracer struct {
	tracer  trace.Tracer
	off     bool // a no-op provider's: nothing it makes is recorded
	content bool
	agent   string
	rule    func(key string) bool
}

// An Option configures a [Tracer].
type Option func(*Tracer)

// WithContent makes the spans carry what the conversation said, as the
// conventions' opt-in content attributes: gen_ai.system_instructions,
// gen_ai.input.messages and gen_ai.output.messages on chat spans, and
// gen_ai.tool.call.arguments and gen_ai.tool.call.result on execute_tool
// spans, redacted (see the package doc). Without it, no span carries
// content, nor a tool error's text.
func WithContent() Option { return func(t *Tracer) { t.content = true } }

// WithAgentName sets gen_ai.agent.name on each invoke_agent span, whose
// name it ends ("invoke_agent weather").
func WithAgentName(name string) Option { return func(t *Tracer) { t.agent = name } }

// WithRedaction sets the rule naming the keys whose values content never
// carries, for a context that has none of its own ([nous.Context.Redact],
// which a store does not keep, so [Tracer.Export] of a stored session
// needs this for a rule other than [nous.IsSecretKey]).
func WithRedaction(rule func(key string) bool) Option {
	return func(t *Tracer) { t.rule = rule }
}

// NewTracer returns a Tracer whose spans go to tp, or to the global
// tracer provider (otel.GetTracerProvider) when tp is nil. Its spans
// follow the OpenTelemetry GenAI semantic conventions of version 1.41.0,
// whose schema URL its instrumentation scope carries.
func NewTracer(tp trace.TracerProvider, opts ...Option) *Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	_, off := tp.(noop.TracerProvider)
	t := &Tracer{tracer: tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)), off: off}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Observe traces c live: from now on, the events c appends become spans
// as the run goes (and the turn or the model call under way, when c's log
// ends with a question or a reply, saved or not) (through
// [nous.Context.Observer], after the observer already set, which still
// sees every event). Each span is made when
// its end is logged, with the times of the events that bound it, so the
// trace is the one [Tracer.ExportContext] makes of the same events
// later. Turns are children of ctx's span, if it has one; otherwise each
// turn is a trace of its own.
//
// stop ends what is still open (the turn, a reply whose step has not
// ended) at the time of the last event observed, and puts the observer
// back as it was; call it when the run is done, on c's goroutine, as
// every event is. Events a load or a Refresh brings in are not observed.
//
// A tracer of the no-op provider (go.opentelemetry.io/otel/trace/noop)
// makes nothing anyone sees: it does not observe c, and stop does
// nothing.
func (t *Tracer) Observe(ctx context.Context, c *nous.Context) (stop func()) {
	if t.off {
		return func() {}
	}
	f := newFold(t, ctx, c)
	if from := underWay(c); from > 0 {
		for e := range c.Log().Since(from - 1) {
			f.add(&e) // the turn or the model call under way
		}
	}
	prev := c.Observer
	c.Observer = func(e nous.Event) {
		if prev != nil {
			prev(e)
		}
		f.add(&e)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.Observer = prev
			f.finish()
		})
	}
}

// underWay returns the seq of the question or the reply c's log ends
// with, but for the events a save ends a batch with (the deps' changes
// and the batch event, which may follow it): the turn or the model call
// under way. It is 0 when the log ends with no such message.
func underWay(c *nous.Context) int64 {
	for seq := int64(c.Log().Len()); ; seq-- {
		e, ok := c.Log().Event(seq)
		switch {
		case !ok:
			return 0
		case e.Type == nous.EventBatch || e.Type == nous.EventDepsUpdate:
			continue
		case e.Type == nous.EventUserMessage || e.Type == nous.EventAssistantMessage:
			return seq
		}
		return 0
	}
}

// ExportContext makes the spans of c's whole log, with its events' own
// times: a session run yesterday, traced today. Turns are children of
// ctx's span, if it has one; otherwise each turn is a trace of its own.
// A log exported twice gives its spans twice.
func (t *Tracer) ExportContext(ctx context.Context, c *nous.Context) {
	f := newFold(t, ctx, c)
	for e := range c.Log().All() {
		f.add(&e)
	}
	f.finish()
}

// Export loads the session the store keeps by name and makes the spans
// of its whole log, as [Tracer.ExportContext] does. The error is the
// load's: an unknown name wraps [nous.ErrNotFound].
func (t *Tracer) Export(ctx context.Context, s nous.Store, name string) error {
	c, err := nous.LoadByName(ctx, s, name)
	if err != nil {
		return fmt.Errorf("nousotel: export %q: %w", name, err)
	}
	t.ExportContext(ctx, c)
	return nil
}
