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
// Version 2, recorded in nous_schema:
//
//	nous_logs    one row per log: id, parent, fork_seq, incarnation, head,
//	             revision, state (bytea), created_at, updated_at
//	nous_events  one row per event: log_id, seq, type, created_at, and
//	             body (bytea): the event's JSON, the bytes Save wrote
//
// A recorded tool call is an event like any other (a tool_call event
// whose body holds the call), so a log is its events and its state,
// nothing else.
//
// Version 1 kept the tool calls apart, in a table nous_tool_calls, with a
// count of them in each log's row. Open and New bring a database of
// version 1 to version 2 in place, once, in one transaction, whoever opens
// it first: each log's calls go into its state document (as the
// "tool_calls" a context document has), the table and the columns go, and
// [nous.Load] records those calls as tool_call events at the end of the
// log, which the next save stores; a log never loaded keeps them in its
// state. A log of version 1 whose calls are not all there, or whose state
// is not a JSON object, is not migrated into a shorter list: the opener
// gets [ErrSchema] naming it, and the database is left as it was.
//
// Bodies are bytea, not jsonb: jsonb rejects \u0000 and reorders keys, and
// a store must give back the bytes it was given. To query them as JSON,
// convert_from(body, 'UTF8')::jsonb. A fork's log holds its own copy of
// the events it shares with its parent, so it loads whatever later happens
// to the parent (deletion included).
//
// # Concurrency
//
// A save is one SQL statement: one round trip, one transaction. It updates
// the log's row only where the head, revision and incarnation are the ones
// the saver saw, and inserts the events only when that update matched: a
// stale writer changes nothing and gets [nous.ErrConflict], without an
// aborted transaction. The primary key of nous_events is the backstop.
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
// right to create tables in the schema, and migrating one of version 1
// the ownership of its tables.
//
// # Watch
//
// Every save notifies the channel nous_log with the log's ID. [Store.Watch]
// listens on one dedicated connection per Store, held while a watch runs
// and closed after the last; a notification is only a hint to read the log
// after the last seq a watcher yielded, so nothing is missed or yielded
// twice, and after the connection is lost and made again every watcher
// reads again. A lost connection is retried; any other error ends the
// watch (a pool given to [New] that its owner closed, too).
package pgstore
