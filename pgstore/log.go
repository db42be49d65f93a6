package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/nous-go/nous"
)

// The tail of both append statements: given u, the log's row when the
// guard matched, it inserts the events. Without a row in u it does
// nothing. The log's watchers are notified after it commits (see
// notifier).
const appendTail = `
e AS (
	INSERT INTO nous_events (log_id, seq, type, created_at, body)
	SELECT u.id, $3::bigint + x.n, x.type, x.at, x.body
	FROM u, unnest($5::text[], $6::timestamptz[], $7::bytea[]) WITH ORDINALITY AS x(type, at, body, n)
)
SELECT 1 FROM u`

// appendNext appends to a stored log, a compare-and-set on its head and
// incarnation: $1 id, $2 incarnation, $3 the head expected, $4 the head
// after, $5-$7 the events' types, times and bodies, $8 the state, $9 the
// time.
const appendNext = `WITH u AS (
	UPDATE nous_logs SET head = $4, state = $8, updated_at = $9
	WHERE id = $1 AND incarnation = $2 AND head = $3
	RETURNING id
),` + appendTail

// appendFirst stores a batch after seq 0 ($3): it creates the log, with
// $10 its parent, $11 its fork seq, $12 its creation time, $13 its name
// ("" for none) and $14 its labels (a JSON object), or, when the log
// exists, appends to it only while its head is 0 and its incarnation $2,
// as appendNext would. A name another log holds violates the unique index
// nameIndex: the statement fails, and stores nothing.
const appendFirst = `WITH u AS (
	INSERT INTO nous_logs AS l (id, incarnation, head, state, updated_at, parent, fork_seq, created_at, name, labels)
	VALUES ($1, $2, $4, $8, $9, $10, $11, $12, nullif($13::text, ''), $14::jsonb)
	ON CONFLICT (id) DO UPDATE SET head = excluded.head, state = excluded.state, updated_at = excluded.updated_at
	WHERE l.incarnation = excluded.incarnation AND l.head = 0
	RETURNING l.id
),` + appendTail

// Append implements [nous.Store]: one statement, one round trip; the
// log's watchers are notified after it commits.
func (s *Store) Append(ctx context.Context, b nous.Batch) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	sql, args, err := appendStatement(&b)
	if err != nil {
		return err
	}
	return s.send(ctx, &b, sql, args)
}

// appendStatement checks b and returns the statement that stores it,
// appendFirst for a batch after seq 0 (which creates the log when the
// store does not hold it) and appendNext for any other, with its
// arguments. It sends nothing: an error, of a batch no store may hold (a
// nil ID or incarnation, a head that is not After plus its events, a bad
// name, labels or event), means nothing was sent.
func appendStatement(b *nous.Batch) (string, []any, error) {
	id := b.Info.ID
	switch {
	case id == uuid.Nil || b.Info.Incarnation == uuid.Nil:
		return "", nil, errors.New("pgstore: a batch of the nil log ID or incarnation")
	case b.Info.Head != b.After+int64(len(b.Events)):
		return "", nil, fmt.Errorf("pgstore: log %s: head %d after %d with %d events", id, b.Info.Head, b.After, len(b.Events))
	}
	var labels []byte
	if b.After == 0 {
		if err := nous.CheckName(b.Info.Name, b.Info.Labels); err != nil {
			return "", nil, fmt.Errorf("pgstore: log %s: %w", id, err)
		}
		var err error
		if labels, err = labelsJSON(b.Info.Labels); err != nil {
			return "", nil, fmt.Errorf("pgstore: log %s: %w", id, err)
		}
	}
	types, times, err := eventHeads(b)
	if err != nil {
		return "", nil, err
	}
	// The IDs as pgtype.UUID and the bodies as a FlatArray, which pgx
	// encodes directly: a uuid.UUID goes through its driver.Valuer (a
	// string, then parsed), and a [][]byte through reflection.
	args := []any{nullable(id), nullable(b.Info.Incarnation), b.After, b.Info.Head, types, times,
		pgtype.FlatArray[[]byte](raw(b.Events)), b.State, b.Info.UpdatedAt}
	sql := appendNext
	if b.After == 0 {
		sql = appendFirst
		args = append(args, nullable(b.Info.Parent), b.Info.ForkSeq, b.Info.CreatedAt, b.Info.Name, string(labels))
	}
	return sql, args, nil
}

// eventHeads returns the type and the creation time of each of b's
// events, the columns nous_events holds beside the body, in the events'
// order. An event that is not a JSON object of them is an error naming
// its seq.
func eventHeads(b *nous.Batch) ([]string, []time.Time, error) {
	types := make([]string, len(b.Events))
	times := make([]time.Time, len(b.Events))
	for i, e := range b.Events {
		var head struct {
			Type      string    `json:"type"`
			CreatedAt time.Time `json:"created_at"`
		}
		if err := json.Unmarshal(e, &head); err != nil {
			return nil, nil, fmt.Errorf("pgstore: log %s: event %d: %w", b.Info.ID, b.After+1+int64(i), err)
		}
		types[i], times[i] = head.Type, head.CreatedAt
	}
	return types, times, nil
}

// send runs sql, the statement that stores b, with args, and notifies
// the log's watchers when it commits. It sends the statement again, on
// another connection, when nothing was sent (at most resends times), and
// runs it again after a serialization failure while the log is still as
// b expects (at most serializationRetries times, waiting longer each
// time); any other failure is returned, as the error of a log not as b
// expects ([nous.ErrConflict], [nous.ErrNotFound]) or of the server.
func (s *Store) send(ctx context.Context, b *nous.Batch, sql string, args []any) error {
	id := b.Info.ID
	for try, resent := 0, 0; ; {
		var one int
		err := s.pool.QueryRow(ctx, sql, args...).Scan(&one)
		switch {
		case err == nil:
			s.notes.add(s, id)
			return nil
		case errors.Is(err, pgx.ErrNoRows): // no row matched the guard
			return s.refusal(ctx, b, nil)
		case nameTaken(err):
			return s.nameConflict(ctx, b)
		case pgconn.SafeToRetry(err) && resent < resends && s.usable(ctx) == nil:
			// Nothing was sent: the connection was found dead (reset by
			// the server's side while it sat idle) at the first write. The
			// pool has dropped it; the statement goes on another.
			resent++
			continue
		case !serialization(err):
			return fmt.Errorf("pgstore: log %s: save after seq %d: %w", id, b.After, s.failed(ctx, err))
		}
		// Under a stricter isolation level than READ COMMITTED, the server
		// may refuse the statement though no writer of this log got in the
		// way (its predicate locks cover pages other logs share): when the
		// log is still as the batch expects, the statement runs again.
		if rerr := s.refusal(ctx, b, err); rerr != nil || try == serializationRetries {
			if rerr == nil {
				rerr = fmt.Errorf("pgstore: log %s: save after seq %d: the server refused it %d times: %w", id, b.After, try+1, err)
			}
			return rerr
		}
		select {
		case <-time.After(time.Duration(try+1) * 5 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("pgstore: log %s: save after seq %d: %w", id, b.After, ctxErr(ctx, err))
		}
		try++
	}
}

// serializationRetries is how many times Append runs its statement again
// after a serialization failure while the log is as the batch expects.
const serializationRetries = 8

// resends is how many times Append sends its statement again after an
// error that pgconn.SafeToRetry says came before anything was sent.
const resends = 2

// serialization reports whether err is a serialization failure or a
// deadlock the server broke: the statement did nothing, and may succeed
// when run again.
func serialization(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// refusal returns the error of a batch whose guard matched no row: the
// log is not there, or not as the saver saw it (its head or incarnation
// another). After a serialization failure (failure not nil), it returns
// nil when the log is still as the batch expects: nothing refused the
// batch but the server's caution.
func (s *Store) refusal(ctx context.Context, b *nous.Batch, failure error) error {
	id := b.Info.ID
	var head int64
	var incarnation uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT head, incarnation FROM nous_logs WHERE id = $1`, id).Scan(&head, &incarnation)
	expected := err == nil && head == b.After && incarnation == b.Info.Incarnation
	missing := errors.Is(err, pgx.ErrNoRows)
	switch {
	case failure != nil && (expected || missing && b.After == 0):
		return nil
	case missing && b.After != 0:
		return fmt.Errorf("pgstore: log %s: %w", id, nous.ErrNotFound)
	case missing: // created and deleted again meanwhile
		return fmt.Errorf("pgstore: log %s: another writer created it first: %w", id, nous.ErrConflict)
	case err != nil:
		return fmt.Errorf("pgstore: log %s: %w", id, s.failed(ctx, err))
	}
	return fmt.Errorf("pgstore: log %s: expected head %d incarnation %s, stored head %d incarnation %s: %w",
		id, b.After, b.Info.Incarnation, head, incarnation, nous.ErrConflict)
}

// nameTaken reports whether err is the violation of the unique index of
// the names: a first batch of a name another log holds.
func nameTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == nameIndex
}

// nameConflict returns the error of a first batch refused for its name,
// naming the log that holds it when that log is still there. Racing
// another save of the same log, the log itself may hold it: that is the
// conflict of a log that exists.
func (s *Store) nameConflict(ctx context.Context, b *nous.Batch) error {
	id, name := b.Info.ID, b.Info.Name
	var other uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT id FROM nous_logs WHERE name = $1`, name).Scan(&other)
	switch {
	case err == nil && other == id:
		return s.refusal(ctx, b, nil)
	case err == nil:
		return fmt.Errorf("pgstore: log %s: the name %q is log %s's: %w", id, name, other, nous.ErrConflict)
	case errors.Is(err, pgx.ErrNoRows): // deleted since
		return fmt.Errorf("pgstore: log %s: the name %q was another log's: %w", id, name, nous.ErrConflict)
	}
	return fmt.Errorf("pgstore: log %s: the name %q is another log's: %w (finding which: %w)", id, name, nous.ErrConflict, s.failed(ctx, err))
}

// labelsJSON returns labels as the JSON object the labels column holds:
// {} for none.
func labelsJSON(labels map[string]string) ([]byte, error) {
	if len(labels) == 0 {
		return []byte("{}"), nil
	}
	return json.Marshal(labels)
}

// raw returns the bytes of each message: bytea, not json.
func raw(msgs []json.RawMessage) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}

// nullable returns id as a uuid that is NULL when id is uuid.Nil.
func nullable(id uuid.UUID) pgtype.UUID {
	return pgtype.UUID{Bytes: id, Valid: id != uuid.Nil}
}

// infoColumns are the columns of a log's row that make its LogInfo, in
// the order row.dest scans them, of nous_logs as l.
const infoColumns = `l.id, l.parent, l.fork_seq, l.incarnation, l.head, l.created_at, l.updated_at,
	coalesce(l.name, ''), l.labels`

// row receives infoColumns.
type row struct {
	info   nous.LogInfo
	parent pgtype.UUID
	labels []byte
}

// dest returns the destinations of infoColumns, then more.
func (r *row) dest(more ...any) []any {
	i := &r.info
	return append([]any{&i.ID, &r.parent, &i.ForkSeq, &i.Incarnation, &i.Head, &i.CreatedAt, &i.UpdatedAt,
		&i.Name, &r.labels}, more...)
}

// logInfo returns the info scanned: the labels decoded, nil for none; a
// labels column that is not a JSON object of strings is an error wrapping
// [nous.ErrCorrupt].
func (r *row) logInfo() (nous.LogInfo, error) {
	i := r.info
	if r.parent.Valid {
		i.Parent = r.parent.Bytes
	}
	if err := json.Unmarshal(r.labels, &i.Labels); err != nil {
		return nous.LogInfo{}, fmt.Errorf("pgstore: log %s: labels: %v: %w", i.ID, err, nous.ErrCorrupt)
	}
	if len(i.Labels) == 0 {
		i.Labels = nil
	}
	return i, nil
}

// readLog reads a log's row and its events after $2 in one statement,
// and so one snapshot.
const readLog = `SELECT ` + infoColumns + `, l.state,
	ARRAY(SELECT e.body FROM nous_events e WHERE e.log_id = l.id AND e.seq > $2 ORDER BY e.seq)
FROM nous_logs l
WHERE l.id = $1`

// Read implements [nous.Store].
func (s *Store) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	if err := s.usable(ctx); err != nil {
		return nous.Stored{}, err
	}
	var r row
	var st nous.Stored
	var events [][]byte
	err := s.pool.QueryRow(ctx, readLog, id, after).Scan(r.dest(&st.State, &events)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nous.Stored{}, fmt.Errorf("pgstore: log %s: %w", id, nous.ErrNotFound)
	}
	if err != nil {
		return nous.Stored{}, fmt.Errorf("pgstore: log %s: %w", id, s.failed(ctx, err))
	}
	if st.Info, err = r.logInfo(); err != nil {
		return nous.Stored{}, err
	}
	st.Events = rawMessages(events)
	return st, nil
}

// Lookup implements [nous.Store]: one query, of the unique index of the
// names. A name no log can hold (one [nous.CheckName] refuses) is looked
// up in none.
func (s *Store) Lookup(ctx context.Context, name string) (nous.LogInfo, error) {
	if err := s.usable(ctx); err != nil {
		return nous.LogInfo{}, err
	}
	if name == "" || nous.CheckName(name, nil) != nil {
		return nous.LogInfo{}, fmt.Errorf("pgstore: no log is named %q: %w", name, nous.ErrNotFound)
	}
	var r row
	err := s.pool.QueryRow(ctx, lookupLog, name).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nous.LogInfo{}, fmt.Errorf("pgstore: no log is named %q: %w", name, nous.ErrNotFound)
	}
	if err != nil {
		return nous.LogInfo{}, fmt.Errorf("pgstore: look up the log named %q: %w", name, s.failed(ctx, err))
	}
	return r.logInfo()
}

// lookupLog reads the row of the log named $1.
const lookupLog = `SELECT ` + infoColumns + ` FROM nous_logs l WHERE l.name = $1`

// rawMessages returns each body as a JSON value.
func rawMessages(bodies [][]byte) []json.RawMessage {
	out := make([]json.RawMessage, len(bodies))
	for i, b := range bodies {
		out[i] = b
	}
	return out
}

// listPage is how many logs List reads with one query.
const listPage = 100

// The queries of a page of List: $1 the ID to list after, $2 how many;
// listLabeled's $3 the labels (a JSON object) a log's must contain, which
// the GIN index of the labels serves.
const (
	listAll     = `SELECT ` + infoColumns + ` FROM nous_logs l WHERE l.id > $1 ORDER BY l.id LIMIT $2`
	listLabeled = `SELECT ` + infoColumns + ` FROM nous_logs l WHERE l.id > $1 AND l.labels @> $3::jsonb ORDER BY l.id LIMIT $2`
)

// List implements [nous.Store]. It reads the logs a page at a time, so no
// connection is held while the caller's loop body runs. Labels to select
// by are a containment the GIN index of the labels serves; labels no log
// can hold (ones [nous.CheckName] refuses) select none.
func (s *Store) List(ctx context.Context, opts nous.ListOptions) iter.Seq2[nous.LogInfo, error] {
	return func(yield func(nous.LogInfo, error) bool) {
		var want []byte
		if len(opts.Labels) > 0 {
			if err := s.usable(ctx); err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			if nous.CheckName("", opts.Labels) != nil {
				return
			}
			var err error
			if want, err = labelsJSON(opts.Labels); err != nil {
				yield(nous.LogInfo{}, fmt.Errorf("pgstore: list: %w", err))
				return
			}
		}
		after, left := opts.After, opts.Limit
		for {
			if err := s.usable(ctx); err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			n := listPage
			if opts.Limit > 0 {
				n = min(n, left)
			}
			query, args := listAll, []any{after, n}
			if want != nil {
				query, args = listLabeled, []any{s.custom, after, n, string(want)}
			}
			page, err := s.listPage(ctx, query, args)
			if err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			for _, info := range page {
				if !yield(info, nil) {
					return
				}
			}
			if left -= len(page); len(page) < n || (opts.Limit > 0 && left == 0) {
				return
			}
			after = page[len(page)-1].ID
		}
	}
}

// listPage returns the logs of one page of List.
func (s *Store) listPage(ctx context.Context, query string, args []any) ([]nous.LogInfo, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", s.failed(ctx, err))
	}
	page, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (nous.LogInfo, error) {
		var r row
		if err := cr.Scan(r.dest()...); err != nil {
			return nous.LogInfo{}, err
		}
		return r.logInfo()
	})
	if errors.Is(err, nous.ErrCorrupt) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", s.failed(ctx, err))
	}
	return page, nil
}

// Delete implements [nous.Store]. It deletes the log's row first, which
// waits for a save of it in progress; then, with a snapshot taken after,
// its events, that save's included. Once that commits, it notifies the
// log's watchers, which end.
func (s *Store) Delete(ctx context.Context, id uuid.UUID) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM nous_logs WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nous.ErrNotFound
		}
		_, err = tx.Exec(ctx, `DELETE FROM nous_events WHERE log_id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: delete log %s: %w", id, s.failed(ctx, err))
	}
	s.notes.add(s, id) // its watchers end
	return nil
}
