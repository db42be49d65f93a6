package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the tables this package reads and writes.
// Open and New bring tables of an earlier version to it (see the package
// doc).
const SchemaVersion = 5

// ErrSchema reports a database whose nous tables this package cannot use:
// of a version it does not know (written by a newer one), of version 1
// with logs that cannot be brought to version 2, which the error counts
// and names the first of, or of version 4 with a key of a batch that no
// batch event can hold, which the error names the log of; the database is
// left as it was.
var ErrSchema = errors.New("pgstore: unusable schema")

// ErrClosed reports a call on a closed Store: every method after Close
// returns an error wrapping it, and Close ends every Watch with one.
var ErrClosed = errors.New("pgstore: store closed")

// Store keeps logs in PostgreSQL. It is safe for concurrent use, by
// several goroutines and by several processes on one database.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	closed  atomic.Bool
	hub     hub
	notes   notifier
	// custom is the query mode of List by labels, one in which the
	// server plans it with its values each time. A statement the server
	// keeps prepared (pgx's default mode) is run, after a few runs, with a
	// generic plan made for any labels, which walks the logs in ID order
	// and filters each row's labels rather than read the GIN index of the
	// labels; the unnamed statement, prepared anew each time, is not.
	custom pgx.QueryExecMode
	// pollEvery is how often the watchers' logs are read, whether they
	// were notified or not.
	pollEvery time.Duration
}

// usable returns an error wrapping [ErrClosed] after Close, and ctx's error
// once it is done.
func (s *Store) usable(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// failed returns the error of a call that failed with err: one wrapping
// [ErrClosed] when the Store was closed meanwhile (the pool's closing
// cancels what was in flight, which is not the caller's cancellation), or
// err wrapping ctx's error when ctx is done.
func (s *Store) failed(ctx context.Context, err error) error {
	if s.closed.Load() && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w (%v)", ErrClosed, err)
	}
	return ctxErr(ctx, err)
}

// Open connects to the database dsn names (a URL or key=value DSN, as
// pgxpool.ParseConfig reads it) with a pool of its own, which Close
// closes, and creates the schema when it is absent or brings one of an
// earlier version to [SchemaVersion], as New does. The pool pings a
// connection before use only as [ShouldPing] says, so that a save after a
// pause is one round trip.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	cfg.ShouldPing = ShouldPing
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// New returns a Store on the caller's pool, which Close leaves open, and
// creates the schema when it is absent or brings one of an earlier version
// to [SchemaVersion] (see the package's Schema section); several processes
// may do either at once, and it happens once. A pool with pgx's default
// ShouldPing pings every connection idle for more than a second before
// use: set the pool's config's ShouldPing to [ShouldPing] for saves of
// one round trip after a pause, as Open's pool does.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New with a nil pool")
	}
	if err := migrate(ctx, pool); err != nil {
		return nil, err
	}
	cfg := pool.Config().ConnConfig
	s := &Store{pool: pool, custom: cfg.DefaultQueryExecMode, pollEvery: pollEvery}
	if s.custom == pgx.QueryExecModeCacheStatement { // the other modes use no named statement
		s.custom = pgx.QueryExecModeCacheDescribe
		if cfg.DescriptionCacheCapacity <= 0 { // which that mode needs
			s.custom = pgx.QueryExecModeExec
		}
	}
	s.hub.init()
	s.notes.init()
	return s, nil
}

// Close ends every Watch (with an error wrapping [ErrClosed]), closes the
// connection it listens on, sends the notifications of the last saves
// (see the package's Watch section), and closes the pool if Open made
// it. It never closes a pool given to New.
func (s *Store) Close() {
	s.closed.Store(true)
	s.hub.close()
	s.notes.close()
	if s.ownPool {
		s.pool.Close()
	}
}

// schema creates the tables of the current version, but for what
// addNames adds, which a table of an earlier version lacks too. Every
// statement may run again.
const schema = `
CREATE TABLE IF NOT EXISTS nous_schema (
	version integer NOT NULL
);
CREATE TABLE IF NOT EXISTS nous_logs (
	id          uuid PRIMARY KEY,
	parent      uuid,
	fork_seq    bigint NOT NULL,
	incarnation uuid NOT NULL,
	head        bigint NOT NULL,
	state       bytea NOT NULL,
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS nous_events (
	log_id     uuid NOT NULL,
	seq        bigint NOT NULL,
	type       text NOT NULL,
	created_at timestamptz NOT NULL,
	body       bytea NOT NULL,
	PRIMARY KEY (log_id, seq)
);
`

// addNames gives nous_logs the names and labels of version 3, and their
// indexes: a name (NULL for none) that a unique index keeps to one log,
// compared byte for byte, and the labels, a JSON object of strings that a
// GIN index serves labels @> queries from. A log of an earlier version
// gets no name and no labels; adding the columns rewrites no row. Every
// statement may run again.
const addNames = `
ALTER TABLE nous_logs
	ADD COLUMN IF NOT EXISTS name   text COLLATE "C",
	ADD COLUMN IF NOT EXISTS labels jsonb NOT NULL DEFAULT '{}';
CREATE UNIQUE INDEX IF NOT EXISTS nous_logs_name ON nous_logs (name) WHERE name IS NOT NULL;
CREATE INDEX IF NOT EXISTS nous_logs_labels ON nous_logs USING gin (labels jsonb_path_ops);
`

// nameIndex is the unique index of the names: a save that violates it
// creates a log under a name another log holds.
const nameIndex = "nous_logs_name"

// migrateV1 brings tables of version 1, which kept each log's tool calls
// in a table of their own, to version 2, in the transaction that holds the
// schema's lock: each log's calls go into its state document, as its
// tool_calls (a JSON array of the calls' bodies, in order), where Load
// records them as events of the log and the next save stores them so;
// then the table and its columns go. The rows of a log at or beyond the
// count its row keeps were calls a later save had replaced: they are not
// the log's. Every state of version 1 is a JSON object this package wrote,
// starting with '{"' and ending in '}'; checkV1 makes sure, and that every
// call the log counts is there.
const migrateV1 = `
UPDATE nous_logs l
SET state = substring(l.state FROM 1 FOR length(l.state) - 1)
	|| convert_to(',"tool_calls":[', 'UTF8') || c.calls || convert_to(']}', 'UTF8')
FROM (SELECT t.log_id, string_agg(t.body, convert_to(',', 'UTF8') ORDER BY t.idx) AS calls
	FROM nous_tool_calls t JOIN nous_logs x ON x.id = t.log_id AND t.idx >= 0 AND t.idx < x.tool_calls
	GROUP BY t.log_id) c
WHERE l.id = c.log_id;
DROP TABLE nous_tool_calls;
ALTER TABLE nous_logs DROP COLUMN tool_calls, DROP COLUMN calls_rewritten;
UPDATE nous_schema SET version = 2;
`

// checkV1 counts the logs of version 1 with tool calls that migrateV1
// cannot carry, and returns the first one's ID: a state it could not
// extend, or calls missing of those the row counts (which version 1 read
// as corrupt, and a migration must not turn into a shorter list).
const checkV1 = `SELECT count(*), min(l.id::text) FROM nous_logs l
WHERE l.tool_calls > 0 AND (length(l.state) < 3
	OR substring(l.state FROM 1 FOR 2) <> convert_to('{"', 'UTF8')
	OR get_byte(l.state, length(l.state) - 1) <> 125
	OR l.tool_calls <> (SELECT count(*) FROM nous_tool_calls t WHERE t.log_id = l.id AND t.idx >= 0 AND t.idx < l.tool_calls))`

// migrate creates the schema when it is absent, or brings one of an
// earlier version to this one (version 1 to 2, 2 to 3, 3 or 4 to 5),
// under an advisory lock so that processes opening at once do not race,
// and checks its version.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if current, err := schemaCurrent(ctx, pool); err != nil || current {
		return err
	}
	// READ COMMITTED whatever the database's default: each statement after
	// the lock sees what the opener that held it committed.
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		return migrateLocked(ctx, tx)
	})
	switch {
	case errors.Is(err, ErrSchema):
		return err
	case err != nil:
		return fmt.Errorf("pgstore: create the schema: %w", ctxErr(ctx, err))
	}
	return nil
}

// schemaCurrent reports whether the database holds the schema at this
// package's version, reading it only: it changes nothing, takes no lock,
// and needs no right to create tables. A schema absent or of an earlier
// version is false, for migrate to create or bring up to date; one of a
// later version is an error wrapping [ErrSchema].
func schemaCurrent(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	// A schema already there is only read: a role without the right to
	// create tables can open it. The tables are those of the first schema
	// of the search_path, as CREATE TABLE makes them, not of a later one
	// (another store's).
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass(quote_ident(current_schema()) || '.nous_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return false, fmt.Errorf("pgstore: read the schema: %w", ctxErr(ctx, err))
	}
	if !exists {
		return false, nil
	}
	var version int
	err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM nous_schema`).Scan(&version)
	switch {
	case err != nil:
		return false, fmt.Errorf("pgstore: read the schema: %w", ctxErr(ctx, err))
	case version == SchemaVersion:
		return true, nil
	case version > SchemaVersion:
		return false, fmt.Errorf("%w: the database has version %d, this package knows %d", ErrSchema, version, SchemaVersion)
	}
	return false, nil
}

// migrateLocked takes the advisory lock of the schema for the rest of
// tx, then creates the schema's tables when they are absent and brings
// them to this version: a new schema gets every table and index at once
// and this version's row, one of an earlier version is upgraded. The
// schema's version is read under the lock, so another opener's work is
// seen and not done again. A version this package does not know is an
// error wrapping [ErrSchema]; on any error tx is rolled back by its
// caller, and nothing is changed.
func migrateLocked(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('nous-go/pgstore ' || coalesce(current_schema(), '')))`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, schema); err != nil {
		return err
	}
	var version int
	err := tx.QueryRow(ctx, `SELECT max(version) FROM nous_schema HAVING count(*) > 0`).Scan(&version)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // a new schema
		if _, err := tx.Exec(ctx, addNames); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO nous_schema (version) VALUES ($1)`, SchemaVersion)
		return err
	case err != nil:
		return err
	case version < 1 || version > SchemaVersion:
		return fmt.Errorf("%w: the database has version %d, this package knows %d", ErrSchema, version, SchemaVersion)
	}
	return upgrade(ctx, tx, version)
}

// upgrade brings a schema of version (1 to SchemaVersion) to this one in
// tx, one version at a time, and records the new version; at this
// version it does nothing. A version 1 schema with logs that version 2
// cannot carry, or a version 4 schema with keys of batches that no batch
// event can hold, is an error wrapping [ErrSchema] that names the first
// of them, and changes nothing.
func upgrade(ctx context.Context, tx pgx.Tx, version int) error {
	if version == 1 {
		var bad int
		var first *string
		if err := tx.QueryRow(ctx, checkV1).Scan(&bad, &first); err != nil {
			return err
		}
		if bad > 0 {
			return fmt.Errorf("%w: the database has version 1, and %d of its logs cannot be brought to version 2 (log %s the first): "+
				"they count tool calls that nous_tool_calls does not all hold, or their state is not a JSON object; "+
				"nothing was changed: repair or delete those logs, then open again", ErrSchema, bad, *first)
		}
		if _, err := tx.Exec(ctx, migrateV1); err != nil {
			return err
		}
		version = 2
	}
	if version == 2 {
		if _, err := tx.Exec(ctx, addNames); err != nil {
			return err
		}
		version = 3
	}
	if version == 4 { // version 3 kept no keys of batches
		if err := carryKeys(ctx, tx); err != nil {
			return err
		}
	}
	if version < SchemaVersion {
		_, err := tx.Exec(ctx, dropRevisions)
		return err
	}
	return nil
}

// ctxErr returns err, wrapping ctx's error too when ctx is done, so that a
// call cut short by its context says so to errors.Is.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	return err
}

// hub fans the notifications of the one listening connection out to the
// watchers of each log.
type hub struct {
	mu      sync.Mutex
	subs    map[[16]byte]map[*sub]struct{}
	running bool
	closed  bool
	stop    context.CancelFunc
	done    chan struct{}
	gone    chan struct{} // closed by close: every watcher ends
}

// sub is one watcher: a hint to read again is a value in ch. It has
// yielded the events up to seq seen of the log's incarnation (uuid.Nil
// before its first read), which the hub's mutex guards.
type sub struct {
	ch          chan struct{}
	seen        int64
	incarnation uuid.UUID
}

// hint makes w read again, unless a hint is already waiting.
func (w *sub) hint() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func (h *hub) init() {
	h.subs = map[[16]byte]map[*sub]struct{}{}
	h.gone = make(chan struct{})
}

func (h *hub) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.gone)
	}
	stop, done := h.stop, h.done
	h.mu.Unlock()
	if stop != nil { // also for a second Close: it returns once the listener is gone
		stop()
		<-done
	}
}

// wake hints every watcher of log id, or every watcher when all is set.
func (h *hub) wake(id [16]byte, all bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, subs := range h.subs {
		if !all && key != id {
			continue
		}
		for w := range subs {
			w.hint()
		}
	}
}
