package nousadk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/jsonx"
)

// The errors of the service, beside the store's, which it returns wrapped.
var (
	// ErrStaleSession reports an append to a Session read before another
	// writer appended to it, or before the session was deleted and
	// created again: nothing was stored. Get the session again and append
	// the event to that. It wraps [nous.ErrConflict].
	ErrStaleSession = fmt.Errorf("the session was appended to, or deleted and created again, since this Session was read: %w", nous.ErrConflict)
	// ErrInvalidRequest reports a request without what it needs (an app
	// name, a user ID, a session ID, a session or an event).
	ErrInvalidRequest = errors.New("invalid request")
)

// Option configures a [SessionService].
type Option func(*options)

type options struct {
	redact     func(key string) bool
	logRedact  func(key string) bool // redact, as a session's context asks it
	cacheLimit int
	logger     *slog.Logger
}

// WithRedaction sets the rule that names the state keys (without their
// scope's prefix) the service never writes, in place of [nous.IsSecretKey]:
// their values stay in this process's sessions, and are dropped from the
// stored state and from the stored events' deltas. A rule that returns
// false keeps every key; one that names every key but a few (a rule that
// denies by default) keeps those few.
//
// The rule names state keys only: each stored event's JSON, which sits in
// its log event's data under the service's own key, "adk_event", is kept
// whatever the rule says of that key. So is a state key of that name, at
// any depth of the session's state (the scopes' are not concerned): give
// a secret another name.
func WithRedaction(rule func(key string) bool) Option {
	return func(o *options) { o.redact = rule }
}

// WithCacheLimit sets how many sessions the service holds, each brought up
// to date by what is new when it is asked for again (1,024 by default; 0
// or less holds none, so each call reads its session whole).
func WithCacheLimit(sessions int) Option {
	return func(o *options) { o.cacheLimit = sessions }
}

// WithLogger sets the logger of the sessions' contexts, which says what a
// save dropped (a secret's key, never its value).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// SessionService is a session.Service whose sessions a [nous.Store] keeps.
// Its methods may be called from any goroutine.
type SessionService struct {
	store nous.Store
	opts  options

	mu       sync.Mutex
	sessions map[string]*entry // by log name
	scopes   map[string]*scope // app and user state, by log name
	clock    uint64            // the last use stamped on an entry
}

var _ session.Service = (*SessionService)(nil)

// NewSessionService returns a session.Service that keeps every session in
// s. Any number of services, in any number of processes, may share one
// store.
func NewSessionService(s nous.Store, opts ...Option) *SessionService {
	o := options{redact: nous.IsSecretKey, cacheLimit: 1024}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.redact == nil {
		o.redact = nous.IsSecretKey
	}
	rule := o.redact
	o.logRedact = func(key string) bool { return key != dataEvent && rule(key) }
	return &SessionService{store: s, opts: o, sessions: map[string]*entry{}, scopes: map[string]*scope{}}
}

// Create stores a new session: its ID is req.SessionID, or a new UUID. A
// session of that ID the app's user has already is an error wrapping
// [nous.ErrConflict]. req.State is the session's state, its "temp:" keys
// in the Session returned only, which holds its values as they were
// given (the scopes' other keys as Get gives them), as ADK's database
// service's does. Its "app:" and "user:" keys are saved to their scopes
// first, each in one save, then the session: a Create that fails stores
// no session, though it may have set some shared keys, which the same
// Create made again sets again. One whose session's save landed
// with its reply lost is made again as a session that exists: Get it.
func (s *SessionService) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req == nil || req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("nousadk: create: an app name and a user ID are required: %w", ErrInvalidRequest)
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	k := key{app: req.AppName, user: req.UserID, id: id}
	if err := nous.CheckName(k.name(), k.labels()); err != nil {
		return nil, fmt.Errorf("nousadk: create %s: %w", k, err)
	}
	app, user, own, _ := split(req.State)
	if len(app) > 0 || len(user) > 0 {
		// A session that exists changes no scope (unless it is made
		// between this look and the save below).
		_, err := s.store.Lookup(ctx, k.name())
		if err == nil {
			return nil, fmt.Errorf("nousadk: create %s: the session exists already: %w", k, nous.ErrConflict)
		}
		if !errors.Is(err, nous.ErrNotFound) {
			return nil, fmt.Errorf("nousadk: create %s: %w", k, err)
		}
	}
	appState, userState, err := s.shared(ctx, k, app, user)
	if err != nil {
		return nil, fmt.Errorf("nousadk: create %s: no session is stored: %w", k, err)
	}
	c := nous.NewContext(nous.WithLogName(k.name()), nous.WithLogLabels(k.labels()), nous.WithDeps(own),
		nous.WithRedaction(s.opts.logRedact), nous.WithLogger(s.opts.logger))
	if err := c.Save(ctx, s.store); err != nil {
		if errors.Is(err, nous.ErrConflict) {
			return nil, fmt.Errorf("nousadk: create %s: the session exists already: %w", k, err)
		}
		return nil, fmt.Errorf("nousadk: create %s: %w", k, err)
	}
	sess := (&entry{c: c}).session(k, appState, userState)
	// Held from now on, for other calls to share under its lock: one that
	// read the stored session first keeps what it read.
	e := s.entry(k.name())
	e.mu.Lock()
	if e.c == nil || e.c.Log().ID() != c.Log().ID() {
		e.c, e.events, e.decoded, e.held = c, nil, 0, nil
	}
	e.mu.Unlock()
	maps.Copy(sess.state, req.State) // as given, as the caller set them
	return &session.CreateResponse{Session: sess}, nil
}

// Get returns the session, its events filtered as req says (the
// NumRecentEvents last, then those at or after After). A session the
// service holds is brought up to date with what other writers appended
// since, and no more is read. One the store does not hold is an error
// wrapping [nous.ErrNotFound].
//
// The state's values are what ADK's database service gives: each as
// encoding/json decodes its JSON, every number a float64, a typed map or a
// struct a map[string]any, whether this process set the value or read it
// from the store (List's are alike). A Session's own State holds what the
// caller set in it, Create and AppendEvent included, as given.
func (s *SessionService) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil || req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return nil, fmt.Errorf("nousadk: get: an app name, a user ID and a session ID are required: %w", ErrInvalidRequest)
	}
	k := key{app: req.AppName, user: req.UserID, id: req.SessionID}
	e := s.entry(k.name())
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := s.bring(ctx, k, e); err != nil {
		return nil, fmt.Errorf("nousadk: get %s: %w", k, err)
	}
	appState, userState, err := s.shared(ctx, k, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("nousadk: get %s: %w", k, err)
	}
	sess := e.session(k, appState, userState)
	all := len(sess.events)
	sess.events = filter(sess.events, req.NumRecentEvents, req.After)
	sess.skipped = all - len(sess.events)
	return &session.GetResponse{Session: sess}, nil
}

// filter returns the n last of events (all for n of 0 or less), then those
// of them at or after after (all for the zero time): a suffix of events.
func filter(events []*session.Event, n int, after time.Time) []*session.Event {
	if n > 0 && len(events) > n {
		events = events[len(events)-n:]
	}
	if !after.IsZero() {
		i := 0
		for i < len(events) && events[i].Timestamp.Before(after) {
			i++
		}
		events = events[i:]
	}
	return events
}

// List returns the app's sessions, or the user's when req.UserID is set,
// each with its state and without its events, its LastUpdateTime what Get
// gives: the time of its last event, or of its creation.
func (s *SessionService) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req == nil || req.AppName == "" {
		return nil, fmt.Errorf("nousadk: list: an app name is required: %w", ErrInvalidRequest)
	}
	labels := map[string]string{labelKind: kindSession, labelApp: req.AppName}
	if req.UserID != "" {
		labels[labelUser] = req.UserID
	}
	sessions := []session.Session{}
	users := map[string]map[string]any{}
	appState, err := s.scope(appScope(req.AppName)).state(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("nousadk: list the sessions of app %q: %w", req.AppName, err)
	}
	for info, err := range s.store.List(ctx, nous.ListOptions{Labels: labels}) {
		if err != nil {
			return nil, fmt.Errorf("nousadk: list the sessions of app %q: %w", req.AppName, err)
		}
		k := key{app: info.Labels[labelApp], user: info.Labels[labelUser], id: info.Labels[labelSession]}
		own, updated, err := s.stored(ctx, info)
		if errors.Is(err, nous.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("nousadk: list: %s: %w", k, err)
		}
		userState, ok := users[k.user]
		if !ok {
			if userState, err = s.scope(userScope(k.app, k.user)).state(ctx, s); err != nil {
				return nil, fmt.Errorf("nousadk: list: %s: %w", k, err)
			}
			users[k.user] = userState
		}
		sessions = append(sessions, &adkSession{key: k, state: merge(jsonState(own), appState, userState), updated: updated})
	}
	return &session.ListResponse{Sessions: sessions}, nil
}

// appendBatch is the length of the batch an append stores: its ADK event,
// the deps_update of the session state it changes, and the batch event
// every save ends with.
const appendBatch = 3

// stored returns the session state the store holds for the log of info,
// as of its last save, and the session's last update as Get says it: the
// time of its last event, or of its start when it has none. It reads the
// events of the last append's batch only, unless they hold no ADK event.
func (s *SessionService) stored(ctx context.Context, info nous.LogInfo) (map[string]any, time.Time, error) {
	after := max(info.Head-appendBatch, 0)
	for {
		st, err := s.store.Read(ctx, info.ID, after)
		if err != nil {
			return nil, time.Time{}, err
		}
		for i := len(st.Events) - 1; i >= 0; i-- {
			var ev nous.Event
			if err := json.Unmarshal(st.Events[i], &ev); err != nil {
				return nil, time.Time{}, fmt.Errorf("event %d of log %s does not read: %w: %w", after+int64(i)+1, info.ID, nous.ErrCorrupt, err)
			}
			if ev.Type != nous.EventRuntime {
				continue
			}
			raw, _ := ev.Data[dataEvent].(string)
			var last session.Event
			if err := json.Unmarshal([]byte(raw), &last); err != nil {
				return nil, time.Time{}, fmt.Errorf("event %d of log %s does not read back as an ADK event: %w: %w", ev.Seq, info.ID, nous.ErrCorrupt, err)
			}
			deps, _, err := stateDeps(st.State)
			return deps, last.Timestamp, err
		}
		if after == 0 {
			return stateDeps(st.State)
		}
		after = 0 // the last batch is not an append's: look for the ADK event before it
	}
}

// Delete removes the session; one the store does not hold is no error.
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req == nil || req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("nousadk: delete: an app name, a user ID and a session ID are required: %w", ErrInvalidRequest)
	}
	k := key{app: req.AppName, user: req.UserID, id: req.SessionID}
	e := s.entry(k.name())
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reset()
	info, err := s.store.Lookup(ctx, k.name())
	if errors.Is(err, nous.ErrNotFound) {
		return nil
	}
	if err == nil {
		err = s.store.Delete(ctx, info.ID)
	}
	if err != nil && !errors.Is(err, nous.ErrNotFound) {
		return fmt.Errorf("nousadk: delete %s: %w", k, err)
	}
	return nil
}

// AppendEvent stores event as the next of the session, applies its state
// delta to sess and to the scopes, and appends it to sess's events (its
// "temp:" keys trimmed from the stored copy). A partial event is not
// stored. sess must be a Session this service returned: one read before
// another writer's append, or before its session was deleted and created
// again, is an error wrapping [ErrStaleSession], and nothing is stored.
// An event whose ID the session's log holds already (the retry of an
// append whose reply was lost) is not stored again: the append succeeds
// with the event in sess when sess has the events before it, or was read
// after it (a Get's filter, NumRecentEvents or After, may leave it out of
// sess); another writer's appends after it leave sess stale for the next.
// It is an error wrapping [ErrStaleSession] when sess lacks some of the
// events before it.
//
// The event and the session's state are one save, which is all an append
// of a session the service holds, and of an event without "app:" or
// "user:" keys, sends the store. The shared deltas are saved after it:
// when one fails, the error says so, the event is stored, and appending
// the event again saves them.
func (s *SessionService) AppendEvent(ctx context.Context, sess session.Session, event *session.Event) error {
	if sess == nil || event == nil {
		return fmt.Errorf("nousadk: append: a session and an event are required: %w", ErrInvalidRequest)
	}
	if event.Partial {
		return nil
	}
	as, ok := sess.(*adkSession)
	if !ok {
		return fmt.Errorf("nousadk: append to session %q: a %T is not a Session of this service: %w", sess.ID(), sess, ErrInvalidRequest)
	}
	k := as.key
	e := s.entry(k.name())
	e.mu.Lock()
	defer e.mu.Unlock()
	log, head := as.seen()
	if e.c == nil || e.c.Log().ID() != log || int64(e.c.Log().Len()) != head {
		// Not held, or held at another point than sess: read what is new.
		// When the log is where sess saw it, the save below is what finds
		// another writer's append, without a read first.
		if err := s.bring(ctx, k, e); err != nil {
			return fmt.Errorf("nousadk: append to %s: %w", k, err)
		}
	}
	if id := e.c.Log().ID(); id != log {
		return fmt.Errorf("nousadk: append event %q to %s: it was read from log %s, deleted since, and the session is log %s now: %w", event.ID, k, log, id, ErrStaleSession)
	}
	app, user, own, stored := split(event.Actions.StateDelta)
	batch := ""
	if event.ID != "" && nous.CheckKey("adk "+event.ID) == nil {
		batch = "adk " + event.ID
		if e.c.HasBatch(batch) { // stored by an append whose reply was lost
			return s.landed(ctx, k, e, as, event, app, user)
		}
	}
	if int64(e.c.Log().Len()) != head {
		return fmt.Errorf("nousadk: append event %q to %s: it was read at event %d, the log is at %d: %w", event.ID, k, head, e.c.Log().Len(), ErrStaleSession)
	}
	b, back, err := s.encoded(k, event, stored)
	if err != nil {
		return err
	}
	c := e.c
	c.SetBatchKey(batch)
	if err := c.LogEvent(nous.EventRuntime, map[string]any{dataEvent: string(b)}); err != nil {
		return fmt.Errorf("nousadk: append event %q to %s: %w", event.ID, k, err)
	}
	undo := undoMerge(c.Deps, own)
	c.MergeDeps(own)
	if err := c.Save(ctx, s.store); err != nil {
		if errors.Is(err, nous.ErrConflict) && !errors.Is(err, nous.ErrLanded) {
			undo() // refused: the secrets the context keeps are not the delta's
		}
		return s.saveFailed(ctx, k, e, as, event, log, app, user, err)
	}
	e.events = append(e.events, back)
	e.decoded = int64(c.Log().Len())
	as.applied(event, int64(c.Log().Len()))
	return s.sharedDeltas(ctx, k, event, app, user)
}

// encoded returns the copy of event the session's log stores, in JSON and
// as that JSON reads back (the event the service holds once it is saved).
// The copy's state delta is stored, the event's without its "temp:" keys,
// less the keys the redaction rule names; a nil delta stays nil. event is
// not changed, and nothing is stored; the error of an event JSON cannot
// encode, or whose JSON does not read back, says which of the two it is.
func (s *SessionService) encoded(k key, event *session.Event, stored map[string]any) ([]byte, *session.Event, error) {
	copied := *event
	if event.Actions.StateDelta != nil {
		copied.Actions.StateDelta = s.kept(stored)
	}
	b, err := json.Marshal(&copied)
	if err != nil {
		return nil, nil, fmt.Errorf("nousadk: append event %q to %s: encode: %w", event.ID, k, err)
	}
	var back session.Event
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, nil, fmt.Errorf("nousadk: append event %q to %s: its JSON does not read back: %w", event.ID, k, err)
	}
	return b, &back, nil
}

// saveFailed ends the append of event to sess, read from log, when the
// save of the session's context failed with err. It drops what e holds,
// which the store may not, so the next use reads the session again (its
// secrets kept). An append of the event whose reply was lost, stored
// since the log was read (err wraps [nous.ErrLanded]), ends as
// [SessionService.landed] ends it; another writer's append (a conflict)
// and a log deleted and made again since sess was read are errors
// wrapping [ErrStaleSession]; any other failure is err, with the event
// and the session named.
func (s *SessionService) saveFailed(ctx context.Context, k key, e *entry, as *adkSession, event *session.Event, log uuid.UUID, app, user map[string]any, err error) error {
	e.drop() // the context holds what the store may not: read it again
	switch {
	case errors.Is(err, nous.ErrLanded):
		// Another append of the event, whose reply was lost, was
		// stored since the log was read.
		if err := s.bring(ctx, k, e); err != nil {
			return fmt.Errorf("nousadk: append event %q to %s: it is stored already, and the session does not read: %w", event.ID, k, err)
		}
		return s.landed(ctx, k, e, as, event, app, user)
	case errors.Is(err, nous.ErrConflict):
		return fmt.Errorf("nousadk: append event %q to %s: %w: %w", event.ID, k, ErrStaleSession, err)
	case errors.Is(err, nous.ErrNotFound):
		// The log sess was read from is gone: deleted, or deleted and
		// made again, which sess has never seen.
		if info, lerr := s.store.Lookup(ctx, k.name()); lerr == nil && info.ID != log {
			return fmt.Errorf("nousadk: append event %q to %s: it was read from log %s, deleted since, and the session is log %s now: %w", event.ID, k, log, info.ID, ErrStaleSession)
		}
	}
	return fmt.Errorf("nousadk: append event %q to %s: %w", event.ID, k, err)
}

// landed ends the append of event to sess when the session's log, as e
// holds it, has the event already, stored by an append whose reply was
// lost. sess is brought to the event when it is the next of sess's, and
// has it when it is one of them, or one of those a filtered Get left out
// of sess: then the append succeeds. Else sess lacks events before it:
// the error wraps [ErrStaleSession], and sess is as it was. Either way the
// event's shared deltas are saved again.
func (s *SessionService) landed(ctx context.Context, k key, e *entry, as *adkSession, event *session.Event, app, user map[string]any) error {
	i := slices.IndexFunc(e.events, func(ev *session.Event) bool { return ev.ID == event.ID })
	if i < 0 {
		return fmt.Errorf("nousadk: append event %q to %s: the log holds its batch and no event of its ID: %w", event.ID, k, nous.ErrCorrupt)
	}
	if err := s.sharedDeltas(ctx, k, event, app, user); err != nil {
		return err
	}
	head, n, has := as.holds(i, event.ID) // n: the events before sess's next
	at, end := batchOf(e.c, i)
	switch {
	case has:
		return nil
	case i == n && head == at-1:
		// The event is the next of sess's, and sess reflects the log up
		// to it: every event before it, another writer's batch that holds
		// no ADK event included, and none after. What follows it in its
		// batch is the deps' change it made and the batch event.
		as.applied(event, end)
		return nil
	}
	return fmt.Errorf("nousadk: append event %q to %s: it was stored as event %d of the log, and this Session was read up to event %d: %w", event.ID, k, at, head, ErrStaleSession)
}

// batchOf returns the seq of the i-th ADK event of c's log and the seq its
// batch ends at: the first batch event after it ([nous.EventBatch], which
// ends every batch a save stores), or the event before the next ADK event
// when that comes first (a batch the service did not make), or the log's
// last.
func batchOf(c *nous.Context, i int) (at, end int64) {
	n := -1
	for e := range c.Log().All() {
		switch {
		case e.Type == nous.EventRuntime:
			if n++; n == i {
				at = e.Seq
			} else if n == i+1 {
				return at, e.Seq - 1
			}
		case n == i && e.Type == nous.EventBatch:
			return at, e.Seq
		}
	}
	return at, int64(c.Log().Len())
}

// sharedDeltas saves the app and user deltas of a stored event to their
// scopes; none, none is saved.
func (s *SessionService) sharedDeltas(ctx context.Context, k key, event *session.Event, app, user map[string]any) error {
	for _, d := range []struct {
		scope string
		delta map[string]any
	}{{appScope(k.app), app}, {userScope(k.app, k.user), user}} {
		if len(d.delta) == 0 {
			continue
		}
		if _, err := s.scope(d.scope).update(ctx, s, d.delta); err != nil {
			return fmt.Errorf("nousadk: append event %q to %s: the event is stored, its delta of %s is not (append the event again to save it): %w", event.ID, k, d.scope, err)
		}
	}
	return nil
}

// kept returns delta without the keys the redaction rule names, at any
// depth of its values (a top-level key without its scope's prefix); an
// empty delta is returned as it is. A value of another type than the
// generic ones of JSON (a typed map, a struct, a list of them) is kept in
// its JSON form, whose keys the rule is applied to, as nous saves it; one
// JSON cannot hold is kept as it is, for its encoding to refuse.
func (s *SessionService) kept(delta map[string]any) map[string]any {
	if len(delta) == 0 {
		return delta
	}
	out := make(map[string]any, len(delta))
	for k, v := range delta {
		name := k
		for _, p := range []string{session.KeyPrefixApp, session.KeyPrefixUser} {
			name = strings.TrimPrefix(name, p)
		}
		if s.opts.redact(name) {
			continue
		}
		if v, ok := s.keptValue(v, nil); ok {
			out[k] = v
		}
	}
	return out
}

// keptValue returns v, under the maps and lists of path, without the keys
// of its maps, at any depth, that the redaction rule names, and whether to
// keep it at all: a map or a list that holds itself, or is nested deeper
// than JSON is kept, is not.
func (s *SessionService) keptValue(v any, path []uintptr) (any, bool) {
	if len(path) > jsonx.MaxDepth {
		return nil, false
	}
	switch x := v.(type) {
	case nil, bool, string, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return v, true
	case map[string]any:
		if x == nil {
			return v, true
		}
		p := reflect.ValueOf(x).Pointer()
		if slices.Contains(path, p) {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s.opts.redact(k) {
				continue
			}
			if e, ok := s.keptValue(e, append(path, p)); ok {
				out[k] = e
			}
		}
		return out, true
	case []any:
		if len(x) == 0 {
			return v, true
		}
		p := reflect.ValueOf(x).Pointer()
		if slices.Contains(path, p) {
			return nil, false
		}
		out := make([]any, 0, len(x))
		for _, e := range x {
			if e, ok := s.keptValue(e, append(path, p)); ok {
				out = append(out, e)
			}
		}
		return out, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v, true // the event's encoding says what is wrong with it
	}
	g, err := jsonx.Decode(b)
	if err != nil {
		return v, true
	}
	return s.keptValue(g, path)
}

// split divides a state or a delta by scope: the app's and the user's
// keys without their prefixes, the session's own, and all but the
// temporary ones, as they are.
func split(delta map[string]any) (app, user, own, stored map[string]any) {
	app, user, own, stored = map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range delta {
		switch {
		case strings.HasPrefix(k, session.KeyPrefixTemp):
			continue
		case strings.HasPrefix(k, session.KeyPrefixApp):
			app[strings.TrimPrefix(k, session.KeyPrefixApp)] = v
		case strings.HasPrefix(k, session.KeyPrefixUser):
			user[strings.TrimPrefix(k, session.KeyPrefixUser)] = v
		default:
			own[k] = v
		}
		stored[k] = v
	}
	return app, user, own, stored
}

// merge returns the state a Session shows: its own keys, and the app's and
// the user's with their prefixes.
func merge(own, app, user map[string]any) map[string]any {
	out := make(map[string]any, len(own)+len(app)+len(user))
	maps.Copy(out, own)
	for k, v := range app {
		out[session.KeyPrefixApp+k] = v
	}
	for k, v := range user {
		out[session.KeyPrefixUser+k] = v
	}
	return out
}

// shared saves the app and user deltas (nil or empty for none) to the
// scopes of k, and returns their states.
func (s *SessionService) shared(ctx context.Context, k key, app, user map[string]any) (appState, userState map[string]any, err error) {
	if appState, err = s.scope(appScope(k.app)).update(ctx, s, app); err != nil {
		return nil, nil, fmt.Errorf("app state: %w", err)
	}
	if userState, err = s.scope(userScope(k.app, k.user)).update(ctx, s, user); err != nil {
		return nil, nil, fmt.Errorf("user state: %w", err)
	}
	return appState, userState, nil
}
