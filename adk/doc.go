// Package nousadk keeps the sessions of Google's Agent Development Kit for
// Go (google.golang.org/adk/v2) in any nous store: [NewSessionService]
// returns a session.Service that ADK's runner takes as it takes its own,
// over the embedded file store, PostgreSQL (pgstore) or any other
// [nous.Store], with their guarantees: an append is stored whole or not at
// all, and once; two replicas of a service never overwrite each other; a
// session the service holds costs a turn only what is new.
//
// # Where a session lives
//
// Each ADK session is a nous log named by its app, user and session ID
// (its labels say them too, so List selects by them). Each event is a
// runtime_event of that log, whose data holds the event's JSON as ADK
// encodes it, so that every field comes back as it was appended: content
// with its bytes, function calls and responses, usage, grounding and
// citations, actions with their deltas, branch, author, invocation ID and
// the timestamp to the nanosecond. The session's own state (the keys
// without a prefix) is the log's deps. An append is one batch of the log:
// the event, a deps_update when it changes the session's state, and the
// batch event every save ends with, which names the batch "adk " and the
// event's ID.
//
// State is scoped as ADK defines it. A key of "app:" is the app's, shared
// by all its sessions, and a key of "user:" the user's within the app,
// shared by the user's sessions: each scope is a log of its own that holds
// only state. A key of "temp:" lives for the invocation: the Session the
// runner holds has it, and no store does (the stored event's delta lacks
// it). Deps are saved as nous saves them: a key a secret's name would
// have ([nous.IsSecretKey], or the rule of [WithRedaction]), at any depth
// of a value of any type (a typed map, a struct by its JSON names), stays
// in this process's sessions and is never written, neither in the state
// nor in the stored event's delta. That holds for the app's and the
// user's keys too: this process's Gets of any of the scope's sessions
// have them, also once it has read the scope or the session again when
// another writer's save beat its own; a service of another process never
// has them.
//
// State values come back as ADK's database service gives them: as
// encoding/json decodes their JSON, every number a float64, whether this
// process set them or read them from the store.
//
// # What is atomic
//
// An event and the session state it changes are one save of the session's
// log: both or neither. Its app and user deltas are saved to their scopes
// after it, each in one save that is retried on a conflict with another
// session's update (a delta sets keys, so applying it again is harmless):
// an append whose scope save fails has stored its event without that
// delta, says so, and appending the event again saves the delta without
// storing the event twice. Create saves its app and user state first, then
// the session: one that fails stores no session, though it may have set
// shared keys, which the same Create made again sets again.
//
// # Two writers
//
// A session two processes (or two services) append to is kept as a
// database keeps a row two replicas update: AppendEvent of a Session read
// before another writer's append fails with an error wrapping
// [ErrStaleSession] (and [nous.ErrConflict]), and stores nothing. The
// caller Gets the session again and appends its event to that: nothing is
// overwritten, nothing is lost. A loop that appends itself calls Get and
// appends again.
//
// ADK's runner returns the error from its run, which appended the user's
// message at its start. A server that runs again must not send the
// message again: the session has it (another server's reply may answer
// it already), and a second copy would stay unanswered. Run with
// runner.WithYieldUserMessage, whose first event is the message once it
// is stored, and on [ErrStaleSession] run again with no message once it
// is, with it while it is not (the message's own append was stale):
//
//	stored := false
//	for {
//		m := msg
//		if stored {
//			m = nil // the agent answers the session as it is now
//		}
//		var err error
//		for ev, e := range r.Run(ctx, userID, sessionID, m, cfg, runner.WithYieldUserMessage()) {
//			if e != nil {
//				err = e
//				break
//			}
//			if m != nil && !stored {
//				stored = true // the user's message, stored
//				continue
//			}
//			send(ev) // to the client
//		}
//		if !errors.Is(err, nousadk.ErrStaleSession) {
//			return err
//		}
//	}
//
// Each message is then stored once and answered, as two processes that
// run ADK's runner on one session of a file store show in this package's
// tests. Another error ends the request as any failure does: the
// message may be stored, unanswered, as with ADK's own services. ADK
// v2.2.0 honours WithYieldUserMessage when the root agent is an LlmAgent;
// a server whose root is another agent must learn otherwise that the
// message is stored (there, a plugin's BeforeRunCallback runs right
// after it is).
//
// An append whose reply was lost is found by the event's ID, which its
// batch event names, and is not stored twice: its retry puts the event in the
// Session (stale for the next append when another writer appended since).
// A Session of a session deleted and created again is stale too.
//
// # Cost
//
// The service keeps the sessions it served last (see [WithCacheLimit]): a
// Get of one brings it up to date with what other writers appended since
// ([nous.Context.Refresh]), and an append writes only its event, so a
// turn's cost does not grow with the session. A session it does not hold
// is read once, whole.
package nousadk
