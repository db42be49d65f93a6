package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// ErrMaxIterations reports a turn that reached the context's
// MaxIterations model calls before the model stopped calling tools: what
// is stored stays, and a Run with more iterations goes on from there.
var ErrMaxIterations = errors.New("agent: the turn reached its maximum iterations")

// Runner runs turns of agent sessions: it calls the model, runs the tools
// it calls, and records every step in the session's log, saved to Store
// after each step, so that a turn stopped anywhere (a crash, a deploy, a
// decision awaited) is resumed by any process from the log alone, without
// calling the model for a reply the log holds or running a call that has
// a result again. A Runner is safe for concurrent use: it runs one turn of
// a session at a time, and across processes the log decides (a save that
// conflicts loads the session again and goes on from what it holds).
//
// The zero Runner is not ready: set Model, and Tools for a model that
// calls tools.
type Runner struct {
	Model nous.Model
	Tools []Tool
	// Store keeps the sessions Run names. Nil, only [Runner.Continue] on a
	// context in memory works.
	Store nous.Store
	// Options make a session that Store does not hold yet
	// ([nous.Resume]): its system prompt, deps, max iterations...
	Options []nous.Option
	// Setup, when set, readies every context the runner loads before it
	// runs anything on it: the runtime fields a store never keeps
	// (Observer, Callbacks, Notify, Logger, Redact, ApprovalHandler,
	// CancellationCheck). A context the runner loads again mid-turn (after
	// a conflict) takes them from the one it replaces.
	Setup func(c *nous.Context)
	// Stream makes every model call stream (so does a context's Stream);
	// OnDelta, when set, receives its deltas, as the context's callbacks
	// do ([nous.Context.EmitDelta]).
	Stream  bool
	OnDelta func(nous.Delta)
	// Compact, when set, runs before each model call: a compaction of the
	// view ([nous.Context.Compact]) saved with the model's reply.
	Compact func(ctx context.Context, c *nous.Context) error
	// Lease is how long a call this runner starts is taken as running
	// here by other runners ([nous.Lease]): one that finds the call
	// without a result meanwhile leaves it to this one and waits; once
	// the lease is over (this runner died), the call is in doubt, for
	// whoever resumes the turn. Set it above the longest tool's run. 0 is
	// a minute; a negative Lease is none, for a session only one process
	// ever drives: a call in doubt is then recovered at once.
	Lease time.Duration
	// Backoff spaces the tries after a conflict or a failed save.
	Backoff Backoff
	// Keep is how many sessions the runner keeps in memory between turns,
	// the most recently run: the next Run of one of them refreshes it,
	// at the cost of what was saved since, instead of loading it whole. 0
	// keeps 64; a negative Keep keeps none.
	Keep int

	once  sync.Once
	owner string
	mu    sync.Mutex
	turns map[string]*turnLock
	kept  []keptSession // the sessions kept, the most recently run last
}

// keptSession is a session a runner keeps between turns.
type keptSession struct {
	name string
	c    *nous.Context
}

// Backoff spaces a runner's tries of a save: after a conflict, a random
// wait up to Min (a race lost to another writer, which a wait that grew
// with each loss would make the slower writer lose again and again); after
// the n-th save whose outcome is unknown (a store in trouble), up to
// min(Max, Min·2ⁿ); at most Tries tries in all. Its zero value is 1 ms,
// 1 s and 64 tries.
type Backoff struct {
	Min, Max time.Duration
	Tries    int
}

// Input is what a turn starts with: the user's messages, and the key that
// makes them a turn stored once.
type Input struct {
	Messages []nous.Message
	// Key names the save of the messages ([nous.Context.SetBatchKey]): a
	// Run again with the same key (a retried request, a restarted job)
	// finds them stored and does not add them again. "" for none.
	Key string
}

// Turn is where a turn stands when Run returns.
type Turn struct {
	// Context is the session as the runner left it, saved. The runner
	// keeps it for the session's next Run ([Runner.Keep]): read it, or
	// Clone it; a change made to it is saved by the next Run.
	Context *nous.Context
	// Reply is the model's last reply in the view; zero for none.
	Reply nous.Message
	// Waiting are the calls the turn stopped for: they wait for a
	// decision ([Runner.Decide]), after which a Run goes on. None when
	// the turn ended.
	Waiting []nous.PendingCall
}

// Run runs a turn of the session Store keeps under session, created with
// Options when Store holds none: it adds in's messages (unless a save of
// in.Key is stored already), then calls the model and runs the tools it
// calls, saving after each step, until the model replies without calling
// a tool, a call waits for a decision, or ctx is done. A Run with no
// messages resumes what the log says remains (a crashed turn, a decided
// approval). A reply cut short by ctx is saved all the same, with ctx's
// error returned.
func (r *Runner) Run(ctx context.Context, session string, in Input) (*Turn, error) {
	if r.Store == nil {
		return nil, errors.New("agent: Run needs a Store; Continue runs a context in memory")
	}
	unlock, err := r.lock(ctx, session)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := r.resume(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("agent: run %q: %w", session, err)
	}
	s := &turnState{name: session, store: r.Store, c: c}
	err = r.input(ctx, s, in)
	var t *Turn
	if err == nil {
		t, err = r.drive(ctx, s)
	}
	r.keep(session, s.c, err == nil)
	return t, err
}

// resume returns the session Store keeps under name, up to date: the one
// the runner kept, refreshed, or the one Store holds, loaded (or made
// anew, when it holds none) and readied by Setup.
func (r *Runner) resume(ctx context.Context, name string) (*nous.Context, error) {
	if c := r.take(name); c != nil {
		if err := c.Refresh(ctx, r.Store); err == nil {
			return c, nil
		}
	}
	c, held, err := nous.Resume(ctx, r.Store, name, r.Options...)
	if err == nil && held {
		err = c.Refresh(ctx, r.Store) // what was saved as it loaded: see load
	}
	if err != nil {
		return nil, err
	}
	if r.Setup != nil {
		r.Setup(c)
	}
	return c, nil
}

// take returns the session named name the runner kept, which it keeps no
// more; nil for none.
func (r *Runner) take(name string) *nous.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range r.kept {
		if k.name == name {
			r.kept = append(r.kept[:i], r.kept[i+1:]...)
			return k.c
		}
	}
	return nil
}

// keep keeps c, the session named name as a turn left it, for the next
// turn, when ok (the turn ended without an error: c is as stored), within
// Keep sessions.
func (r *Runner) keep(name string, c *nous.Context, ok bool) {
	limit := r.Keep
	if limit == 0 {
		limit = 64
	}
	if !ok || limit < 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = append(r.kept, keptSession{name: name, c: c})
	if len(r.kept) > limit {
		r.kept = r.kept[len(r.kept)-limit:]
	}
}

// Continue runs a turn on c, a context the caller holds, as Run does,
// without a store: nothing is saved.
func (r *Runner) Continue(ctx context.Context, c *nous.Context, in Input) (*Turn, error) {
	s := &turnState{c: c}
	if err := r.input(ctx, s, in); err != nil {
		return nil, err
	}
	return r.drive(ctx, s)
}

// turnState is the context of one turn, and where it is kept.
type turnState struct {
	name  string
	store nous.Store // nil: in memory, never saved
	c     *nous.Context
}

// ErrAwaitingDecision reports a Run with messages on a session whose turn
// waits for a decision on a call: a message then would come between the
// call and its result. Decide ([Runner.Decide]), then Run again.
var ErrAwaitingDecision = errors.New("agent: the session's turn waits for a decision")

// input adds in's messages to s, saved under in.Key, unless a save of
// that key is stored. A turn of the session whose calls have no result
// (another writer's, under way or stopped) is taken on first: a message
// between a call and its result would break their pairing.
func (r *Runner) input(ctx context.Context, s *turnState, in Input) error {
	add := func(c *nous.Context) error {
		switch {
		case c.HasBatch(in.Key):
			return nil
		case len(c.Pending().Calls) > 0:
			return errCallsFirst
		}
		if err := c.AddMessages(in.Messages...); err != nil {
			return fmt.Errorf("agent: run %q: %w", s.name, err)
		}
		c.Iteration = 0 // a new turn: MaxIterations counts its model calls
		c.SetBatchKey(in.Key)
		return nil
	}
	for len(in.Messages) > 0 {
		err := add(s.c)
		if err == nil && s.c.HasBatch(in.Key) {
			return nil
		}
		if err == nil {
			_, err = r.save(ctx, s, add)
		}
		if !errors.Is(err, errCallsFirst) {
			return err
		}
		p := s.c.Pending() // s.c is the session as stored, without the messages
		waiting, err := r.calls(ctx, s, p.Calls)
		if err != nil {
			return err
		}
		if len(waiting) > 0 {
			return fmt.Errorf("agent: run %q: call %q: %w", s.name, waiting[0].Call.ID, ErrAwaitingDecision)
		}
	}
	return nil
}

// errCallsFirst reports a session whose calls without a result come
// before a turn's messages.
var errCallsFirst = errors.New("the session's calls without a result come first")

// Decide records d, a decision on a call of session's turn that waits for
// one ([nous.Context.Decide]), from any process, after any restart: it
// loads the session, decides, and saves, trying again after a conflict or
// a save whose outcome is unknown. A decision that is not what the call
// waits for is refused with an error wrapping [nous.ErrStaleDecision]; one
// stored already (a retry of a Decide whose reply was lost) is nil. The
// turn does not go on here: a Run with no messages, in any process, runs
// it on from the decision.
func (r *Runner) Decide(ctx context.Context, session string, d nous.Decision) error {
	if r.Store == nil {
		return errors.New("agent: Decide needs a Store")
	}
	key := fmt.Sprintf("decide %d", d.Request) // a request's seq names it in its log
	b := r.backoff()
	for try := 0; ; try++ {
		c, err := load(ctx, r.Store, session)
		if err != nil {
			return fmt.Errorf("agent: decide in %q: %w", session, err)
		}
		if c.HasBatch(key) {
			return decidedAs(c, d)
		}
		if err := c.Decide(d); err != nil {
			return fmt.Errorf("agent: decide in %q: %w", session, err)
		}
		c.SetBatchKey(key)
		err = c.Save(ctx, r.Store)
		if err == nil || errors.Is(err, nous.ErrLanded) {
			return nil
		}
		if try+1 >= b.Tries || errors.Is(err, nous.ErrNotFound) {
			return fmt.Errorf("agent: decide in %q: %w", session, err)
		}
		if err := b.wait(ctx, try); err != nil {
			return fmt.Errorf("agent: decide in %q: %w", session, err)
		}
	}
}

// load loads the session s keeps under name, then refreshes it: a load
// costs the log's length, and what another writer saved meanwhile would
// make the save that follows conflict, however often it is tried, while
// that writer saves faster than a load takes. The refresh, which costs
// what is new, leaves only the time of the step itself for another save to
// come between.
func load(ctx context.Context, s nous.Store, name string) (*nous.Context, error) {
	c, err := nous.LoadByName(ctx, s, name)
	if err == nil {
		err = c.Refresh(ctx, s)
	}
	return c, err
}

// decidedAs reports whether the decision c's log holds on d's request is
// d: nil if so (a Decide retried after its reply was lost), else an error
// wrapping [nous.ErrStaleDecision].
func decidedAs(c *nous.Context, d nous.Decision) error {
	for e := range c.Log().All() {
		if e.Type != nous.EventApprovalDecision || e.Data[nous.DataRequest] != int(d.Request) || e.Data[nous.DataCallID] != d.CallID {
			continue
		}
		approve := e.Data[nous.DataDecision] == "approve"
		givenArgs, _ := e.Data[nous.DataArguments].(string)
		if approve == d.Approve && givenArgs == string(d.Arguments) && e.Data[nous.DataReason] == nonEmpty(d.Reason) {
			return nil
		}
	}
	return fmt.Errorf("agent: decide on call %q: request %d was decided otherwise already: %w", d.CallID, d.Request, nous.ErrStaleDecision)
}

// nonEmpty returns s as event data holds it: nil for "".
func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// owner returns the runner's name in the leases of the calls it starts.
func (r *Runner) ownerID() string {
	r.once.Do(func() { r.owner = uuid.NewString() })
	return r.owner
}

// turnLock is the lock of one session's turns in a runner, counted so
// that it goes once no turn holds or waits for it.
type turnLock struct {
	ch    chan struct{}
	users int
}

// lock waits until no other turn of session runs in r, or ctx is done,
// and returns the function that lets the next one run.
func (r *Runner) lock(ctx context.Context, session string) (func(), error) {
	r.mu.Lock()
	if r.turns == nil {
		r.turns = map[string]*turnLock{}
	}
	l := r.turns[session]
	if l == nil {
		l = &turnLock{ch: make(chan struct{}, 1)}
		r.turns[session] = l
	}
	l.users++
	r.mu.Unlock()
	release := func() {
		r.mu.Lock()
		if l.users--; l.users == 0 {
			delete(r.turns, session)
		}
		r.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("agent: run %q: waiting for the session's turn under way: %w", session, ctx.Err())
	}
}

// turn returns where s's turn stands.
func turnOf(s *turnState) *Turn {
	t := &Turn{Context: s.c}
	if m, ok := s.c.LastMessage(); ok && m.Role == nous.RoleAssistant {
		t.Reply = m // a turn that ended, or waits: its reply is last
		return t
	}
	for _, m := range s.c.All() {
		if m.Role == nous.RoleAssistant {
			t.Reply = m
		}
	}
	return t
}
