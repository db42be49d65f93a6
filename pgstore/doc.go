// Package pgstore keeps nous contexts in PostgreSQL, so that several
// processes, on several machines, can share sessions: a turn may be served
// by any replica, another can follow the run as it grows, and two replicas
// never both store turn 12.
//
// A [*Store] implements [nous.Store] and [nous.Watcher]. [Open] connects
// with a DSN and a pool of its own; [New] uses the caller's pool. Either
// creates the schema when the database does not have it yet, and brings
// one of an earlier version to this one (see Schema); several processes
// may open at once, whatever the database's default isolation level. The
// tables live in the first schema of the connection's search_path (the
// tables of a later schema in it are another store's): to keep several
// stores apart in one database, give each a schema of its own, e.g. with
// search_path=tenant_a in a URL DSN
// (postgres://app@db/agents?search_path=tenant_a). Times are stored as
// timestamptz, to the microsecond: a LogInfo's UpdatedAt reads back so; an
// event's own time is in its body, to the nanosecond.
//
// # Schema
//
// Version 5, recorded in nous_schema:
//
//	nous_logs     one row per log: id, parent, fork_seq, incarnation, head,
//	              state (bytea), created_at, updated_at, name (text, NULL
//	              for none), labels (jsonb, {} for none)
//	nous_events   one row per event: log_id, seq, type, created_at, and
//	              body (bytea): the event's JSON, the bytes Save wrote
//
// A log is its events and its state, nothing else. A recorded tool call
// is an event like any other (a tool_call event whose body holds the
// call), and so is the key of a batch ([nous.Context.SetBatchKey]): every
// batch Save sends ends with a batch event ([nous.EventBatch]) that names
// it, so that the head alone tells whether a log moved on, and a save
// whose reply was lost finds its batch among the events read after the
// seq it last saw. The store checks no key: [nous.Context.HasBatch] reads
// the keys from the log, and Save refuses a key the log holds
// ([nous.ErrLanded]).
//
// A log's name ([nous.WithLogName]) and labels ([nous.WithLogLabels]) are
// those of its first save, kept in its row. The partial unique index
// nous_logs_name (on name, WHERE name IS NOT NULL) holds each name to one
// log, in whichever process or replica it is saved: a first save under a
// name another log holds violates it, its one statement fails whole, and
// the save is an [nous.ErrConflict] that names the name and the log that
// holds it; nothing of it is stored. Names compare byte for byte (the
// column's collation is "C"): "Café" and "café" are two names. Lookup is
// one read of that index; deleting a log deletes its row, and so frees
// its name. The labels are a JSON object of strings under the GIN index
// nous_logs_labels (jsonb_path_ops): List with Labels selects labels @>
// the pairs asked for, which reads that index. So that the server never
// runs it with a plan made for any labels, which walks every log in ID
// order instead, List by labels is sent as a statement the server plans
// each time: on a pool in pgx's default mode (QueryExecModeCacheStatement)
// it uses QueryExecModeCacheDescribe (QueryExecModeExec when the pool has
// no description cache); the other modes plan each time already.
//
// Open and New bring a database of an earlier version to version 5 in
// place, once, in one transaction that holds an advisory lock, whoever
// opens it first; processes that open at once wait for it, then find it
// done. A process of an earlier version started after is refused with
// [ErrSchema]; one still running stores nothing once it is done: its
// saves, reads, lookups, lists and deletes name the column revision (or
// the table nous_batches), which are gone, and fail, changing nothing
// (its watches go on). Stop such processes before, or expect their
// errors.
//
// Version 4 kept the key of each batch in a table of its own,
// nous_batches (log_id, key, and the revision and head the batch made),
// and counted each log's batches in a column revision of its row, which a
// save compared as it did the head. The migration locks the three tables
// against writers (EXCLUSIVE mode, so reads go on until the schema
// changes), then appends to each log with keys one batch event at its
// head plus one, which lists them in the order of their batches,
//
//	{"seq":<head+1>,"type":"batch","data":{"keys":["<key>",...]},"created_at":"<the migration's time>"}
//
// (the JSON nous writes of such an [nous.Event]), in a row of nous_events
// like any other, and moves the log's head to it; its state and update
// time stay as they were. [nous.Load] reads the keys from that event, so
// [nous.Context.HasBatch] knows every key a batch was stored with, and a
// save of one is refused as of a key stored after. A log without keys is
// left as it was. Then nous_batches and the column revision go. The logs
// are read and moved 500 at a time, all in the one transaction, and their
// watchers are notified when it commits (only processes of version 4 can
// be watching then). A key that no batch event can hold (empty, or one
// [nous.CheckKey] refuses, neither of which version 4 stored) is refused
// with [ErrSchema] naming its log, and nothing is changed.
//
// Version 3 kept no keys of batches: the migration drops the column
// revision, and the logs' earlier batches have no key.
//
// Version 2 had no names or labels: the migration adds the two columns
// (which rewrites no row: every log of version 2 has no name and the
// labels {}) and builds the two indexes; the table is locked, to reads
// too, until that is done, which on a large table takes a while.
//
// Version 1 kept the tool calls apart, in a table nous_tool_calls, with a
// count of them in each log's row. A database of version 1 is brought to
// version 2, and then to 3 and 5, in the same transaction: each log's calls go
// into its state document (as the "tool_calls" a context document has),
// the table and the columns go, and [nous.Load] records those calls as
// tool_call events at the end of the log, which the next save stores; a
// log never loaded keeps them in its state. A log of version 1 whose
// calls are not all there, or whose state is not a JSON object, is not
// migrated into a shorter list: the opener gets [ErrSchema] naming it,
// and the database is left as it was.
//
// Bodies are bytea, not jsonb: jsonb rejects \u0000 and reorders keys, and
// a store must give back the bytes it was given. To query them as JSON,
// convert_from(body, 'UTF8')::jsonb. A fork's log holds its own copy of
// the events it shares with its parent, so it loads whatever later happens
// to the parent (deletion included).
//
// # Concurrency
//
// A save is one SQL statement: one round trip, one transaction (its
// watchers are notified after it, see Watch; the pool Open makes sends it
// without a ping, see Connections). It is a compare-and-set on the head:
// it updates the log's row only where the head and incarnation are the
// ones the saver saw, and inserts the events only when that update
// matched: a stale writer changes nothing and gets [nous.ErrConflict],
// without an aborted transaction. The primary key of nous_events is the
// backstop. A batch after seq 0 creates the log's row when no row has its
// ID (where one does, it appends only while that log's head is 0 and its
// incarnation the saver's), and the unique index of the names refuses it
// when another log holds its name: of replicas racing to create one name,
// one wins, and the others store nothing.
//
// A save under an isolation level stricter than READ COMMITTED (a database
// whose default is REPEATABLE READ, say) that a racing writer's commit
// fails is an [nous.ErrConflict] too, as under READ COMMITTED. A
// serialization failure with no writer of the log in the way (SERIALIZABLE
// locks pages that other logs' rows share) is retried while the log is as
// the save expects, and is an error that is not a conflict if it persists.
// The state and the events of a log are read in one statement, so a log
// whose events read after a seq exceed 1 GB (PostgreSQL's limit of one
// value) cannot be read from there: a Refresh, or a Watch, reads what is
// new.
//
// An application role that may only read and write the tables opens a
// database whose schema is there, of this version; creating it takes the
// right to create tables in the schema, and migrating one of an earlier
// version the ownership of its tables.
//
// # Watch
//
// [Store.Watch] follows a log as any process saves it. A Store with
// watchers listens on the channel nous_log, on one connection of its own,
// held while a watch runs and closed after the last. A save does not
// notify in its own transaction: from the commit of a transaction that
// notifies until that commit is flushed to disk, PostgreSQL holds a lock of
// its notification queue, one for the whole cluster, so saves that
// notified would commit one after another, whatever logs they saved (16
// goroutines saving 100 sessions on 16 connections did so at 0.36–0.41×
// the rate of the same writes without a notification; see BENCHMARKS.md).
// Once a save, or a delete, has committed, its Store notifies the log's ID
// in a transaction of its own, one for every log the Store saved since its
// last: at once after a quiet spell, and then at most one every 2 ms (some
// twenty logs each while 16 goroutines save). That transaction does not
// wait for its commit to be flushed, so it holds the lock only briefly; a
// crash of the server that loses it ends the listeners' connections too,
// and they read again when they are back.
//
// A notification is only a hint to read the log after the last seq the
// watcher yielded: one that comes late, or once for several saves, loses
// nothing, and nothing is yielded twice. A watcher subscribes before its
// first read, so a save committed after that read is notified to it; the
// listener hints every watcher once it listens, and again each time it has
// connected after losing its connection, so that a save notified while it
// did not listen is read then.
//
// A watcher in another process sees a save a round trip or two after it
// commits, up to 2 ms more while the saver's Store saves others. A
// notification that never comes (the saving process ended between a
// save's commit and its notification, or closed its Store in between, or
// the listening connection died without an error yet) is made up for by a
// poll: every second, a Store with watchers reads the heads of the logs
// they follow, in one statement, and each watcher whose log moved past the
// last seq it yielded reads it. Such a save is seen within that second, or
// at the next save of the log, whichever comes first. A lost connection is
// retried; any other error ends the watch (a pool given to [New] that its
// owner closed, too).
//
// # Connections
//
// pgx's pool pings a connection that sat idle for more than a second
// before it hands it out: one round trip more for each save that follows
// a model's call. The pool Open makes pings one only when the server ended
// it, or sent it something, while it sat idle ([ShouldPing], which sees
// that without a round trip), so a save is one round trip after a pause
// too, and a connection the server ended (a restart, pg_terminate_backend,
// idle_session_timeout) is still replaced before a save uses it. Give
// [New] a pool whose config's ShouldPing is [ShouldPing] for the same.
//
// A save whose connection turns out dead at its first write, before
// anything was sent (pgconn.SafeToRetry), is sent again on another, up to
// twice. One whose connection dies after it was sent fails with an error
// and stores nothing partial, as one that a restart of the server
// interrupts does; the next save takes another connection, with no new
// Open. A connection whose server went without a word (a host or a network
// that failed silently) looks alive: a save on it fails when the system
// gives up on the connection or when the save's context is done, as it
// would after a ping that passed, so give saves a deadline.
package pgstore
