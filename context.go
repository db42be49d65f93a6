package nous

import (
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/jsonx"
)

// DanglingToolCallText is the content of the tool result that
// [Context.PatchDanglingToolCalls] adds for a call nobody answered.
const DanglingToolCallText = "Tool call was interrupted and not executed. Please retry if needed."

// MetadataSynthesized is the Metadata key, set to true, that marks a message
// the package wrote itself rather than a model or a tool, such as the result
// of a dangling tool call.
const MetadataSynthesized = "synthesized"

// Callback receives an event of the run (a delta of streamed text, a tool
// call, ...) and its payload. Callbacks are runtime-only: never serialized.
type Callback func(event string, payload any)

// ApprovalHandler decides whether a tool call that requires approval runs. It
// returns the call to run, unchanged or edited, and true, or false to reject
// the call. It is runtime-only: never serialized.
type ApprovalHandler func(call ToolCall) (ToolCall, bool)

// Context is the state of one agent run: its conversation, its deps, its
// usage and its loop control.
//
// Every message added becomes an event in the context's [SessionLog], and the
// message view, what [Context.Messages] and [Context.All] return, is the fold
// of that log plus the system-prompt overlay. The view is kept incrementally:
// adding a message appends to it and never re-reads the log.
//
// A Context is owned by one goroutine: its methods must not be called
// concurrently. [Context.ToRunContext] gives tools running on other goroutines
// a snapshot they may read while the owner goes on, and [Context.Clone] gives
// an independent context. A Context must not be copied by value; use Clone.
//
// The exported fields are plain state the owner may read and set. The runtime
// fields (Stream, CancellationCheck, Callbacks, Notify, Observer,
// ApprovalHandler, Logger, Redact) are never serialized: [Deserialize]
// leaves them unset, and [LoadWith], [LoadByName] and [Resume] set them from
// their options, as [NewContext] does.
//
// Use [NewContext]. The zero Context works, but has no deps map until one is
// needed, a MaxIterations of 0, so that [Context.MaxIterationsReached]
// reports true at once, and a log that gets its ID on first use.
type Context struct {
	// SystemPrompt is the agent's instructions. It is state, serialized
	// with the context, and never an event: a runner sends it with each
	// request. The overlay ([Context.SetSystemPromptOverlay]) is apart.
	SystemPrompt string
	// Deps are the values tools read through a [RunContext] and change by
	// returning a [ContextUpdate]. Keys that name secrets are never
	// serialized; see [Context.Serialize]. Every change is recorded in the
	// log (an update's as it applies, a direct write at the next Save), so
	// that [SessionLog.Deps] gives the deps as of any event.
	Deps map[string]any
	// Usage is what the run consumed so far; [Context.AddUsage] adds to it.
	Usage Usage
	// NeedsResponse reports whether the model must be called again. Adding
	// a message sets it; see [Context.AddMessage].
	NeedsResponse bool
	// Iteration counts the runner's loop turns; [Context.IncrementIteration]
	// adds one.
	Iteration int
	// MaxIterations is the limit of Iteration; 10 for a new context.
	MaxIterations int
	// AgentName names the agent, for logs and telemetry.
	AgentName string
	// StartedAt is when the run started, in UTC.
	StartedAt time.Time
	// Stream says whether the runner streams responses; runtime-only.
	Stream bool
	// ToolCalls are the tool calls recorded by [Context.AddToolCall]: the
	// fold of the log's tool_call events, kept as they are appended. The
	// context owns it; see AddToolCall for what a direct write does.
	ToolCalls []ToolCall
	// calls is ToolCalls as the context last set it: a Save finds a
	// direct write by comparing the two headers, at no cost per call.
	calls []ToolCall

	// CancellationCheck, when set, returns an error once the run must stop.
	CancellationCheck func() error
	// Callbacks are called by a runner with the events of the run, by name.
	Callbacks map[string]Callback
	// Notify, when set, receives every event of the run, for a UI.
	Notify Callback
	// Observer, when set, is called with each event the context appends
	// to its log, in seq order, on the goroutine that appends it, right
	// after the append: a live trace of the run (provider-neutral, as the
	// log is). The event shares its message, data and call with the log:
	// read them, do not modify them, and copy what is kept. Events a load
	// or a Refresh brings in are not observed, and a Clone has none (its
	// log is another). Unset, it costs nothing. Runtime-only: never
	// serialized.
	Observer func(Event)
	// ApprovalHandler decides on tool calls that require approval.
	ApprovalHandler ApprovalHandler
	// Logger receives the package's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Redact, when set, replaces [IsSecretKey] as the rule that names the
	// keys of deps and event data Serialize, AppendEventJSON and Save
	// never write, and the deps' values they mask wherever they occur
	// ([MaskedSecret]). To add to the rule rather than replace it, call
	// IsSecretKey from it. Save asks it again of every key it writes.
	Redact func(key string) bool

	// lists holds, by deps key, the []any lists ContextUpdate.Apply made,
	// with their spare capacity; Deps holds them clipped. It is a cache an
	// Apply checks against Deps before use, never state of its own.
	lists map[string][]any

	persist persistence // what c keeps for writing itself out, and knows of its store
	depsRec depsRecord  // the deps as the log records them

	tokens tokenCache // compaction's counts of the log's messages and its index of the view, by one counter

	log  eventLog
	view view // the fold of log, as it is kept, and the overlay
}

// MessageOption configures one call of [Context.AddMessage].
type MessageOption func(*messageOptions)

type messageOptions struct {
	source string
}

// WithSource marks an injected message with where it came from ("memory",
// "knowledge_base", ...). The source is recorded under [DataSource] in the
// event's Data, so a reader of the log can tell injected context from
// conversation; it never appears in the message.
func WithSource(source string) MessageOption {
	return func(o *messageOptions) { o.source = source }
}

func (c *Context) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// ready gives a zero Context its log ID on first use.
func (c *Context) ready() {
	if c.log.id == uuid.Nil {
		c.log.id = newLogID()
	}
}

// AddMessage appends m to the conversation: one surface event in the log and
// one entry at the end of the view. m is copied, maps and slices included; a
// zero CreatedAt is stamped with the current time and any other is kept, in
// UTC. NeedsResponse becomes true after a user or tool message and after an
// assistant message with tool calls, false after any other assistant message,
// and is unchanged by a system message.
//
// An invalid message is an error wrapping [ErrInvalidMessage], and nothing is
// appended.
func (c *Context) AddMessage(m Message, opts ...MessageOption) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var source string
	if len(opts) > 0 {
		// Behind the check because the options escape o to the heap: a
		// call without options must not pay that allocation.
		source = resolveMessageOptions(opts).source
	}
	c.appendMessage(m, source)
	return nil
}

// resolveMessageOptions applies opts to a zero messageOptions.
func resolveMessageOptions(opts []MessageOption) *messageOptions {
	o := new(messageOptions)
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

// AddMessages appends msgs in order, with the same result as adding them one
// by one. It is all or nothing: when one is invalid, the error names its index
// and nothing is appended.
func (c *Context) AddMessages(msgs ...Message) error {
	for i, m := range msgs {
		if err := m.validate(); err != nil {
			return fmt.Errorf("nous: message %d of %d: %w", i, len(msgs), err)
		}
	}
	for _, m := range msgs {
		c.appendMessage(m, "")
	}
	return nil
}

// appendMessage appends a valid message.
func (c *Context) appendMessage(m Message, source string) {
	var data map[string]any
	if source != "" {
		data = map[string]any{DataSource: source}
	}
	c.appendMessageData(m, data)
}

// appendMessageData is appendMessage with the event's data, data, which
// the log keeps.
func (c *Context) appendMessageData(m Message, data map[string]any) {
	c.ready()
	r := record{typ: messageEventType(m.Role), at: now(), data: data}
	m = m.clone()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = r.at
	} else {
		m.CreatedAt = m.CreatedAt.UTC()
	}
	c.mustAdd(&r, &m, nil, slot{})
	switch m.Role {
	case RoleUser, RoleTool:
		c.NeedsResponse = true
	case RoleAssistant:
		c.NeedsResponse = m.HasToolCalls()
	}
}

// LogEvent appends a bookkeeping event (turn and step boundaries, tool calls,
// request headers) to the log. Data is copied. Bookkeeping events project to
// no message: the view is unchanged.
//
// A surface type is refused with an error wrapping [ErrSurfaceEvent], and an
// unknown type with one wrapping [ErrUnknownEventType]; nothing is logged.
func (c *Context) LogEvent(t EventType, data map[string]any) error {
	switch t {
	case EventDepsUpdate:
		return fmt.Errorf("nous: log event %q (the deps' changes are recorded by ContextUpdate.Apply and Save): %w", t, ErrUnknownEventType)
	case EventBatch:
		return fmt.Errorf("nous: log event %q (Save ends each batch with one): %w", t, ErrUnknownEventType)
	case EventToolStart, EventApprovalRequest, EventApprovalDecision:
		return fmt.Errorf("nous: log event %q (StartToolCall, RequestApproval and Decide log them): %w", t, ErrUnknownEventType)
	}
	if t.IsSurface() {
		return fmt.Errorf("nous: log event %q (messages are added with AddMessage): %w", t, ErrSurfaceEvent)
	}
	if !t.IsBookkeeping() {
		return fmt.Errorf("nous: log event %q: %w", t, ErrUnknownEventType)
	}
	r := record{typ: t, at: now(), data: jsonx.CloneMap(data)}
	c.mustAdd(&r, nil, nil, slot{})
	return nil
}

// mustAdd appends the event r, with its message m (a surface event) or
// the call tc it records, to c's log, folds it into the view (through
// [eventLog.slotOf], the fold's one step, near the slot near) and passes
// it to the Observer: every event a context appends goes through it. Its
// callers make the event from the view it folds into, so it folds by
// construction: an error is a bug of this package, and panics. m and tc
// are the log's afterwards.
func (c *Context) mustAdd(r *record, m *Message, tc *ToolCall, near slot) {
	c.ready()
	s, mi, err := c.log.add(c.view.entries, r, m, tc, near)
	if err != nil {
		panic("nous: an event made from the view does not fold into it: " + err.Error())
	}
	if s.ok {
		c.view.put(s, mi)
		if s.at == 0 && c.view.overlay != "" {
			c.refreshLead()
		}
	}
	c.observe()
}

// addQuiet appends the bookkeeping event r to c's log without passing it
// to the Observer: an event of a batch Save is making, which
// [Context.observeFrom] passes on once the store may hold it.
func (c *Context) addQuiet(r *record) {
	if _, _, err := c.log.add(c.view.entries, r, nil, nil, slot{}); err != nil {
		panic("nous: a bookkeeping event does not fold: " + err.Error())
	}
}

// observe passes the event last appended to the Observer, if one is set.
func (c *Context) observe() {
	if c.Observer != nil {
		c.Observer(c.log.shared(c.log.len()))
	}
}

// Log returns a handle on the context's session log. Reading through it
// always sees the log as it is now, later events included; nothing can change
// the context through it. The handle is for the owner's goroutine: hand
// another goroutine (a store, say) its [SessionLog.Snapshot], which costs the
// same for any length of log.
func (c *Context) Log() *SessionLog {
	c.ready()
	return &SessionLog{l: &c.log} // inlined: it allocates only when the handle escapes
}

// Len returns the number of messages in the view, the overlay's own system
// message included.
func (c *Context) Len() int { return c.view.len() }

// at returns the message at index i of the view, 0 <= i < Len. It must not
// be modified.
func (c *Context) at(i int) *Message { return c.view.at(&c.log, i) }

// Messages returns the view: the fold of the log with the system-prompt
// overlay applied. The slice and every message in it, maps and slices
// included, are a copy the caller owns. It costs one allocation when the
// messages carry no maps or slices; use [Context.All] to read without
// copying.
func (c *Context) Messages() []Message {
	out := make([]Message, c.Len())
	for i, m := range c.All() {
		if m.needsDeepCopy() {
			m = m.clone()
		}
		out[i] = m
	}
	return out
}

// All returns an iterator over the view, index and message, without copying
// it. The messages share their maps and slices (Parts, ToolCalls, Metadata)
// with the log: read them, never modify them. The context must not change
// while the iteration runs.
func (c *Context) All() iter.Seq2[int, Message] { return c.view.all(&c.log) }

// LastMessage returns the last message of the view, a copy the caller owns,
// and false when the view is empty.
func (c *Context) LastMessage() (Message, bool) {
	n := c.Len()
	if n == 0 {
		return Message{}, false
	}
	return c.at(n - 1).clone(), true
}

// AssistantMessages returns the assistant messages of the view, in order, a
// copy the caller owns.
func (c *Context) AssistantMessages() []Message {
	var out []Message
	for _, m := range c.All() {
		if m.Role == RoleAssistant {
			out = append(out, m.clone())
		}
	}
	return out
}

// AddUsage adds u to the context's usage, field by field.
func (c *Context) AddUsage(u Usage) { c.Usage = c.Usage.Add(u) }

// MergeDeps sets every key of deps in the context's deps (a shallow merge: new
// keys win). The values are copied: changing deps afterwards does not change
// the context.
func (c *Context) MergeDeps(deps map[string]any) {
	if c.Deps == nil {
		c.Deps = make(map[string]any, len(deps))
	}
	for k, v := range deps {
		c.Deps[k] = jsonx.CloneValue(v)
	}
}

// IncrementIteration adds one to the iteration counter.
func (c *Context) IncrementIteration() { c.Iteration++ }

// MaxIterationsReached reports whether Iteration >= MaxIterations.
func (c *Context) MaxIterationsReached() bool { return c.Iteration >= c.MaxIterations }

// Canceled returns the error of the CancellationCheck, or nil when there is
// none.
func (c *Context) Canceled() error {
	if c.CancellationCheck == nil {
		return nil
	}
	return c.CancellationCheck()
}

// ReplaceMessage replaces the message at index of the view with m; it is
// ReplaceMessageRange(index, index, m).
func (c *Context) ReplaceMessage(index int, m Message) error {
	return c.ReplaceMessageRange(index, index, m)
}

// ReplaceMessageRange replaces the inclusive range first..last of the view,
// as [Context.Messages] numbers it, with the single message m. This is how
// compaction works without destroying anything: a replace event naming the
// first and last shadowed entries is appended, the originals stay in the
// log, and m takes the position of the first, inheriting its CreatedAt.
// Every entry whose position falls in the range is shadowed. Replacing a
// replacement works the same way. NeedsResponse is unchanged.
//
// A range outside the view is an error wrapping [ErrOutOfRange], so is one
// that covers the overlay's own system message, which is not in the log; an
// invalid m is an error wrapping [ErrInvalidMessage]; a replacement that
// would break the tool-call pairing (see [Context.CheckToolPairing]) in a way
// the view does not already break it, such as replacing an assistant message
// with calls but not their results, or a range that ends between a call and
// its result, is an error wrapping [ErrUnpaired]. A range that covers whole
// groups of calls and results is fine, and calls still open at the end of
// the view are a turn in progress, not a break. Either way nothing changes.
// (The reference library does not check the pairing; a view it let through
// would be refused by every provider.) The check reads only the groups the
// range touches.
func (c *Context) ReplaceMessageRange(first, last int, m Message) error {
	off := c.view.offset()
	if first < 0 || last < first || last >= len(c.view.entries)+off {
		return fmt.Errorf("nous: replace %d..%d of %d messages: %w", first, last, len(c.view.entries)+off, ErrOutOfRange)
	}
	if first < off {
		return fmt.Errorf("nous: replace %d..%d: message 0 is the system-prompt overlay, which is not in the log: %w", first, last, ErrOutOfRange)
	}
	if err := m.validate(); err != nil {
		return fmt.Errorf("nous: replace %d..%d: %w", first, last, err)
	}
	if err := c.checkReplace(first, last, &m); err != nil {
		return fmt.Errorf("nous: replace %d..%d would break the tool-call pairing: in the view after it, %w", first, last, err)
	}
	first, last = first-off, last-off
	f := c.log.msg(c.view.entries[first])
	r := record{typ: EventReplace, at: now(), first: f.seq, last: c.log.msg(c.view.entries[last]).seq}
	m = m.clone()
	m.CreatedAt = f.msg.CreatedAt
	c.mustAdd(&r, &m, nil, slot{at: first, n: last - first + 1})
	return nil
}

// PatchDanglingToolCalls answers every tool call of the view that nothing
// answers, so that a conversation interrupted mid-tool (and perhaps restored
// from storage) is one a provider accepts again. It returns how many results
// it added.
//
// Results are matched to calls by position: a call's group is the tool
// messages right after its assistant message, and a result there answers the
// call with its ID, once, so a server that reuses "call_0" every turn still
// gets a dangling call patched. Each missing result is put right after its
// call's group, in the order of the calls, as a tool message carrying the
// call's name, the content [DanglingToolCallText] and
// Metadata[MetadataSynthesized] = true. The log stays append-only: each is a
// tool_result event whose After names the entry it follows. It is
// idempotent, and leaves NeedsResponse as it is, as the reference library
// does. It only adds: a result without its call, or one that comes after
// another message, stays where it is, and [Context.CheckToolPairing] still
// reports it.
func (c *Context) PatchDanglingToolCalls() int {
	type patch struct {
		last  int // the view index (in c.view.entries) of the group's last entry
		calls []ToolCall
	}
	var patches []patch
	for i := 0; i < len(c.view.entries); i++ {
		m := &c.log.msg(c.view.entries[i]).msg
		if len(m.ToolCalls) == 0 {
			continue
		}
		var answered []string
		j := i + 1
		for ; j < len(c.view.entries) && c.log.msg(c.view.entries[j]).msg.Role == RoleTool; j++ {
			answered = append(answered, c.log.msg(c.view.entries[j]).msg.ToolCallID)
		}
		var dangling []ToolCall
		for k, tc := range m.ToolCalls {
			if slices.ContainsFunc(m.ToolCalls[:k], func(o ToolCall) bool { return o.ID == tc.ID }) {
				continue // a second use of an ID opens no call (see CheckToolPairing): nothing answers it
			}
			if k := slices.Index(answered, tc.ID); k >= 0 {
				answered = slices.Delete(answered, k, k+1)
			} else {
				dangling = append(dangling, tc)
			}
		}
		if len(dangling) > 0 {
			patches = append(patches, patch{j - 1, dangling})
		}
		i = j - 1
	}
	if len(patches) == 0 {
		return 0
	}
	added := 0
	for _, p := range patches {
		at := p.last + added // the view grew by what was inserted before
		after := c.log.msg(c.view.entries[at]).seq
		for _, tc := range p.calls {
			r := record{typ: EventToolResult, at: now(), after: after}
			m := Message{Role: RoleTool, Content: DanglingToolCallText, ToolCallID: tc.ID, Name: tc.Name,
				Metadata: map[string]any{MetadataSynthesized: true}, CreatedAt: r.at}
			c.mustAdd(&r, &m, nil, slot{at: at + 1})
			after = c.log.len()
			at++
		}
		added += len(p.calls)
	}
	return added
}

// ToRunContext returns the snapshot a tool receives: a deep copy of the deps
// (every map and slice in them, down to 1,000 levels), the usage and the logger,
// changed by opts.
// Neither the context nor the snapshot sees the other's later writes, so the
// snapshot may be read on another goroutine while the owner goes on.
func (c *Context) ToRunContext(opts ...RunContextOption) RunContext {
	return newRunContext(c.Deps, c.Usage, c.Logger, opts)
}

// Clone returns an independent copy of c: changing one never changes the
// other. The copy's log is a fork with a new ID that remembers c's log ID and
// the seq it forked at. Clone does not copy the log or the view: the two
// share the events and view entries they have in common, which are never
// written in place, so it costs the same for a long conversation as for a
// short one. Deps are copied deeply; the runtime fields are shared.
func (c *Context) Clone() *Context {
	c.ready()
	edited := c.recordToolCalls(false) != nil // calls appended directly are c's first
	d := *c
	d.Deps = jsonx.CloneMap(c.Deps)
	d.ToolCalls = cloneToolCalls(c.ToolCalls)
	d.calls = d.ToolCalls
	if edited {
		d.calls = nil // d's saves refuse its list, as c's do
	}
	d.Callbacks = maps.Clone(c.Callbacks)
	d.Observer = nil // another log: its owner observes it
	d.log = c.log.fork()
	d.view = c.view.fork()
	d.persist = newPersistence() // a fork was never saved
	d.tokens = tokenCache{}      // its own: the counts are appended to
	d.rederive()                 // d.Deps is a deep copy: no list of c's is in it
	return &d
}

// rederive drops what c derives from its state and keeps beside it (the
// lists ContextUpdate.Apply keeps for Deps and the deps record keeps for
// its fold, found again when next needed)
// and derives again how the overlay shows at the head of the view: Clone,
// Refresh and Load call it once they set the state or the view.
func (c *Context) rederive() {
	c.lists, c.depsRec.lists = nil, nil
	c.refreshLead()
}

// SetSystemPromptOverlay sets the system-prompt fragment applied when the
// view is read: appended to the leading system message, or a leading system
// message of its own when the view starts otherwise. Setting it again
// replaces it; "" clears it. The overlay is not an event and is never
// serialized: it is derived from configuration on every run.
func (c *Context) SetSystemPromptOverlay(text string) {
	c.view.overlay = text
	c.refreshLead()
}

// SystemPromptOverlay returns the overlay set by SetSystemPromptOverlay.
func (c *Context) SystemPromptOverlay() string { return c.view.overlay }

// refreshLead recomputes how the overlay shows in the view, after the overlay
// or the first entry of the view changed.
func (c *Context) refreshLead() { c.view.refreshLead(&c.log, c.StartedAt) }

// EndStep records the end of one model call: s.Usage is added to the
// context's Usage, as [Context.AddUsage] does, and a step_end event is
// logged whose Data holds s (under [DataUsage], and [DataProvider],
// [DataModel] and [DataError] for those that are not ""), after the
// reply's message when there is one. So the log keeps what each call
// cost, which a trace of the session reads ([StepOf]); Usage alone holds
// only the sum. The provider adapters' Send and Stream functions call it;
// a runtime with a loop of its own calls it in place of AddUsage.
func (c *Context) EndStep(s Step) {
	c.AddUsage(s.Usage)
	data := make(map[string]any, 4)
	data[DataUsage] = usageData(s.Usage)
	if s.Provider != "" {
		data[DataProvider] = s.Provider
	}
	if s.Model != "" {
		data[DataModel] = s.Model
	}
	if s.Error != "" {
		data[DataError] = s.Error
	}
	r := record{typ: EventStepEnd, at: now(), data: data}
	c.mustAdd(&r, nil, nil, slot{})
}
