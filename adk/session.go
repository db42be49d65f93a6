package nousadk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/adk/v2/session"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/jsonx"
)

// The labels of a session's log, by which List selects, and the key of a
// runtime event's data that holds the ADK event's JSON.
const (
	labelKind    = "adk"
	labelApp     = "adk_app"
	labelUser    = "adk_user"
	labelSession = "adk_session"
	kindSession  = "session"
	kindScope    = "state"
	dataEvent    = "adk_event"
)

// key names a session.
type key struct{ app, user, id string }

// name returns the name of the session's log: each part after its length,
// so that no two sessions share one.
func (k key) name() string {
	return fmt.Sprintf("adk session %d:%s %d:%s %s", len(k.app), k.app, len(k.user), k.user, k.id)
}

func (k key) labels() map[string]string {
	return map[string]string{labelKind: kindSession, labelApp: k.app, labelUser: k.user, labelSession: k.id}
}

func (k key) String() string {
	return fmt.Sprintf("session %q of app %q, user %q", k.id, k.app, k.user)
}

// entry is what the service holds of one session: its context, nil until
// it is read, and its events decoded. mu guards it, and is held through a
// call on the session.
type entry struct {
	mu      sync.Mutex
	c       *nous.Context
	events  []*session.Event
	decoded int64 // the events of c's log decoded into events
	used    uint64
	// held is the deps of the context e held before [entry.drop], and
	// heldLog its log's ID: the secrets the context read next of that
	// log is given.
	held    map[string]any
	heldLog uuid.UUID
}

// reset forgets what e holds, so that the next call reads the session.
func (e *entry) reset() { e.c, e.events, e.decoded, e.held = nil, nil, 0, nil }

// drop forgets the context e holds, so that the next call reads the
// session, and keeps its deps, whose secrets that read is given.
func (e *entry) drop() {
	if e.c != nil {
		e.held, e.heldLog = e.c.Deps, e.c.Log().ID()
	}
	e.c, e.events, e.decoded = nil, nil, 0
}

// entry returns the service's entry of the session whose log is name, made
// if it has none, evicting the least used one over the cache limit.
func (s *SessionService) entry(name string) *entry {
	if s.opts.cacheLimit <= 0 {
		return &entry{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	e, ok := s.sessions[name]
	if !ok {
		e = &entry{}
		s.sessions[name] = e
		s.evict(name)
	}
	e.used = s.clock
	return e
}

// evict drops the least used entries but the one of name while there are
// more than the cache limit. An entry in use is dropped all the same: its
// user holds it, and the next call reads the session afresh.
func (s *SessionService) evict(name string) {
	for len(s.sessions) > s.opts.cacheLimit {
		oldest, stamp := "", ^uint64(0)
		for n, e := range s.sessions {
			if n != name && e.used < stamp {
				oldest, stamp = n, e.used
			}
		}
		delete(s.sessions, oldest)
	}
}

// bring makes e's context the session's as the store holds it: read whole
// when e holds none, else brought up to date with what is new; the events
// new to e are decoded. A session read whole is given the secrets of the
// context e held of its log before ([carrySecrets]). A session the store
// does not hold is an error wrapping [nous.ErrNotFound].
func (s *SessionService) bring(ctx context.Context, k key, e *entry) error {
	if e.c != nil {
		if err := e.c.Refresh(ctx, s.store); err != nil {
			e.drop()
		}
	}
	if e.c == nil {
		c, err := nous.LoadByName(ctx, s.store, k.name(), nous.WithRedaction(s.opts.logRedact), nous.WithLogger(s.opts.logger))
		if err != nil {
			return err
		}
		if e.held != nil && e.heldLog == c.Log().ID() {
			carrySecrets(c.Deps, e.held, s.opts.logRedact)
		}
		e.c, e.held = c, nil
	}
	var raws []string
	var seqs []int64
	for ev := range e.c.Log().Since(e.decoded) {
		if ev.Type == nous.EventRuntime {
			raw, _ := ev.Data[dataEvent].(string)
			raws, seqs = append(raws, raw), append(seqs, ev.Seq)
		}
		e.decoded = ev.Seq
	}
	decoded, err := decodeEvents(raws)
	if err != nil {
		var bad badEvent
		errors.As(err, &bad)
		id := e.c.Log().ID()
		e.reset()
		return fmt.Errorf("event %d of log %s does not read back as an ADK event: %w: %w", seqs[bad.i], id, nous.ErrCorrupt, bad.err)
	}
	e.events = append(e.events, decoded...)
	return nil
}

// badEvent is the error of the i-th of events decoded.
type badEvent struct {
	i   int
	err error
}

func (b badEvent) Error() string { return fmt.Sprintf("event %d: %v", b.i, b.err) }

// decodeEvents decodes the JSON of ADK events, many of them (a session
// read whole) on goroutines of their own, a share each.
func decodeEvents(raws []string) ([]*session.Event, error) {
	out := make([]*session.Event, len(raws))
	decode := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			out[i] = new(session.Event)
			if err := json.Unmarshal([]byte(raws[i]), out[i]); err != nil {
				return badEvent{i, err}
			}
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(raws)/256)
	if workers <= 1 {
		return out, decode(0, len(raws))
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs[w] = decode(w*len(raws)/workers, (w+1)*len(raws)/workers) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// session returns a Session of what e holds, with the shared states.
func (e *entry) session(k key, app, user map[string]any) *adkSession {
	updated := e.c.StartedAt
	if n := len(e.events); n > 0 {
		updated = e.events[n-1].Timestamp
	}
	return &adkSession{
		key:     k,
		state:   merge(jsonState(e.c.Deps), app, user),
		events:  e.events[:len(e.events):len(e.events)], // shared, and an append to it copies
		updated: updated,
		log:     e.c.Log().ID(),
		head:    int64(e.c.Log().Len()),
	}
}

// stateDeps returns the deps of a stored state document, and the start of
// its run (the zero time for none).
func stateDeps(doc []byte) (map[string]any, time.Time, error) {
	m, err := jsonx.DecodeMap(doc)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("the state document does not read: %w: %w", nous.ErrCorrupt, err)
	}
	deps, _ := m["deps"].(map[string]any)
	if deps == nil {
		deps = map[string]any{}
	}
	var started time.Time
	if at, ok := m["started_at"].(string); ok {
		if started, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, time.Time{}, fmt.Errorf("the state document's started_at does not read: %w: %w", nous.ErrCorrupt, err)
		}
	}
	return deps, started, nil
}

// adkSession is a session as this service returns it: a copy the runner
// owns, which AppendEvent updates.
type adkSession struct {
	key
	mu      sync.RWMutex
	state   map[string]any
	events  []*session.Event
	skipped int // the session's events before events, which a filtered Get left out
	updated time.Time
	log     uuid.UUID // the ID of the log this copy was read from
	head    int64     // the length of the log this copy reflects
}

var _ session.Session = (*adkSession)(nil)

func (s *adkSession) ID() string      { return s.id }
func (s *adkSession) AppName() string { return s.app }
func (s *adkSession) UserID() string  { return s.user }

func (s *adkSession) State() session.State { return (*sessionState)(s) }

func (s *adkSession) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events(s.events)
}

func (s *adkSession) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// seen returns the ID of the log s was read from and the length of it s
// reflects.
func (s *adkSession) seen() (uuid.UUID, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.log, s.head
}

// holds returns the length of the log s reflects, how many of the
// session's events s reflects (those a filtered Get left out included),
// and whether it reflects the session's i-th event, of ID id: one it
// left out, or one it has.
func (s *adkSession) holds(i int, id string) (head int64, n int, has bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j := i - s.skipped
	return s.head, s.skipped + len(s.events), j < 0 || (j < len(s.events) && s.events[j].ID == id)
}

// applied records in s an event stored as the last of a log of head
// events: its whole delta in the state, the event without its temporary
// keys in the events.
func (s *adkSession) applied(event *session.Event, head int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		s.state = map[string]any{}
	}
	maps.Copy(s.state, event.Actions.StateDelta)
	kept := event
	for k := range event.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			copied := *event
			copied.Actions.StateDelta = maps.Clone(event.Actions.StateDelta)
			maps.DeleteFunc(copied.Actions.StateDelta, func(k string, _ any) bool { return strings.HasPrefix(k, session.KeyPrefixTemp) })
			kept = &copied
			break
		}
	}
	s.events = append(s.events, kept)
	s.updated, s.head = event.Timestamp, head
}

// sessionState is the State of an adkSession.
type sessionState adkSession

func (s *sessionState) Get(key string) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.state[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (s *sessionState) Set(key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		s.state = map[string]any{}
	}
	s.state[key] = v
	return nil
}

func (s *sessionState) All() iter.Seq2[string, any] {
	s.mu.RLock()
	state := maps.Clone(s.state)
	s.mu.RUnlock()
	return maps.All(state)
}

// events is the Events of a session.
type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e events) Len() int { return len(e) }

func (e events) At(i int) *session.Event {
	if i < 0 || i >= len(e) {
		return nil
	}
	return e[i]
}
