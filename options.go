package nous

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/nous-go/nous/internal/jsonx"
)

// Option configures a [Context] made by [NewContext] or [FromRunContext].
// Options set a configuration that NewContext applies once, after all of
// them, so their order does not matter except between two options that set
// the same thing, where the later wins (WithMessages adds up).
//
// A session loaded from a store ([LoadWith], [LoadByName], [Resume]) takes of
// them what no store keeps: the runtime fields ([WithStream],
// [WithCancellationCheck], [WithCallbacks], [WithNotify], [WithObserver],
// [WithApprovalHandler], [WithLogger], [WithRedaction]) and the deps of
// [WithDeps], merged over the stored ones.
type Option func(*options)

// options is the configuration the options of one NewContext call set.
type options struct {
	systemPrompt      string
	deps              map[string]any
	usage             Usage
	needsResponse     bool
	iteration         int
	maxIterations     int
	agentName         string
	messages          []Message
	stream            bool
	cancellationCheck func() error
	callbacks         map[string]Callback
	notify            Callback
	observer          func(Event)
	approvalHandler   ApprovalHandler
	logger            *slog.Logger
	redact            func(key string) bool
	logName           string
	logLabels         map[string]string
}

// WithLogName names the context's log: a key of the application's own
// ("user 42/chat 7") by which a [Store] finds it ([LoadByName]), unique in
// the store. The name is the log's from its first save on: saving a log
// whose name another log of the store holds stores nothing and fails with
// [ErrConflict], atomically, across processes and replicas. A name is
// valid UTF-8 of 1 to [MaxNameBytes] bytes without NUL (checked at Save:
// [ErrInvalidName]). A fork ([Context.Clone]) has no name.
func WithLogName(name string) Option { return func(o *options) { o.logName = name } }

// WithLogLabels gives the context's log labels, key/value strings such as
// app and user, which [Store.List] filters by ([ListOptions.Labels]). They
// are the log's from its first save on, and a fork ([Context.Clone]) keeps
// them. Keys are 1 to [MaxNameBytes] bytes, values up to that, valid UTF-8 without NUL,
// at most [MaxLabels] of them (checked at Save: [ErrInvalidName]). The map
// is copied.
func WithLogLabels(labels map[string]string) Option {
	return func(o *options) { o.logLabels = labels }
}

// WithSystemPrompt sets the system prompt.
func WithSystemPrompt(s string) Option { return func(o *options) { o.systemPrompt = s } }

// WithDeps sets the deps to a deep copy of deps.
func WithDeps(deps map[string]any) Option { return func(o *options) { o.deps = deps } }

// WithUsage sets the usage so far.
func WithUsage(u Usage) Option { return func(o *options) { o.usage = u } }

// WithNeedsResponse sets whether the model must be called again; the default
// is true. Messages added by WithMessages do not change it, as in the
// reference library: they seed the conversation, they are not a turn.
func WithNeedsResponse(on bool) Option { return func(o *options) { o.needsResponse = on } }

// WithIteration sets the iteration counter, for a run that resumes.
func WithIteration(n int) Option { return func(o *options) { o.iteration = n } }

// WithMaxIterations sets the iteration limit; the default is 10.
func WithMaxIterations(n int) Option { return func(o *options) { o.maxIterations = n } }

// WithAgentName sets the agent's name, for logs and telemetry.
func WithAgentName(name string) Option { return func(o *options) { o.agentName = name } }

// WithMessages adds msgs, in order, after those of any earlier WithMessages,
// as [Context.AddMessages] would, except that NeedsResponse is left as
// WithNeedsResponse sets it. An invalid message cannot be reported by an
// option: it is skipped with a warning on the context's logger. Use
// AddMessages to get the error.
func WithMessages(msgs ...Message) Option {
	return func(o *options) { o.messages = append(o.messages, msgs...) }
}

// WithStream sets whether the runner streams responses.
func WithStream(on bool) Option { return func(o *options) { o.stream = on } }

// WithCancellationCheck sets the function that says when the run must stop.
func WithCancellationCheck(f func() error) Option {
	return func(o *options) { o.cancellationCheck = f }
}

// WithCallbacks sets the run's callbacks, by event name. The map is copied.
func WithCallbacks(cbs map[string]Callback) Option {
	return func(o *options) { o.callbacks = cbs }
}

// WithNotify sets the function that receives every event of the run.
func WithNotify(f Callback) Option { return func(o *options) { o.notify = f } }

// WithObserver sets the context's Observer, which is called with each
// event the context appends to its log.
func WithObserver(f func(Event)) Option { return func(o *options) { o.observer = f } }

// WithApprovalHandler sets the function that decides on tool calls that
// require approval.
func WithApprovalHandler(h ApprovalHandler) Option {
	return func(o *options) { o.approvalHandler = h }
}

// WithLogger sets the logger that receives the package's warnings.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRedaction sets the rule that names the keys of deps and event data
// the context never writes, in place of [IsSecretKey]; see [Context.Redact].
func WithRedaction(rule func(key string) bool) Option {
	return func(o *options) { o.redact = rule }
}

// NewContext returns a context with no messages, empty deps, zero usage,
// NeedsResponse true, iteration 0, at most 10 iterations and StartedAt now,
// in UTC, changed by opts. Its log has a new ID.
func NewContext(opts ...Option) *Context {
	o := resolve(options{needsResponse: true, maxIterations: 10}, opts)
	c := &Context{
		SystemPrompt:  o.systemPrompt,
		Deps:          jsonx.CloneMap(o.deps),
		Usage:         o.usage,
		NeedsResponse: o.needsResponse,
		Iteration:     o.iteration,
		MaxIterations: o.maxIterations,
		AgentName:     o.agentName,
		StartedAt:     now(),
		log:           eventLog{id: newLogID(), name: o.logName, labels: cloneLabels(o.logLabels)},
		persist:       newPersistence(),
	}
	o.setRuntime(c)
	if c.Deps == nil {
		c.Deps = map[string]any{}
	}
	for i, m := range o.messages {
		if err := m.Validate(); err != nil {
			c.logger().Warn("nous: WithMessages skipped an invalid message", "index", i, "err", err)
			continue
		}
		c.appendMessage(m, "")
	}
	c.NeedsResponse = o.needsResponse // appendMessage set it
	return c
}

// resolve returns o changed by opts, in order.
func resolve(o options, opts []Option) options {
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// setRuntime sets c's runtime fields, those no store keeps, as o says.
func (o *options) setRuntime(c *Context) {
	c.Stream = o.stream
	c.CancellationCheck = o.cancellationCheck
	c.Callbacks = maps.Clone(o.callbacks)
	c.Notify = o.notify
	c.Observer = o.observer
	c.ApprovalHandler = o.approvalHandler
	c.Logger = o.logger
	c.Redact = o.redact
}

// FromRunContext returns a new context changed by opts, with a copy of rc's
// deps and its usage, which win over a WithDeps or WithUsage among opts, as
// in the reference library.
func FromRunContext(rc RunContext, opts ...Option) *Context {
	return NewContext(append(slices.Clip(opts), WithDeps(rc.Deps), WithUsage(rc.Usage))...)
}
