package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/nous-go/nous"
)

// Version 4 kept the key of each batch in a table of its own,
// nous_batches (log_id, key, revision, head), and counted each log's
// batches in its row's revision. Version 5 keeps the keys in the logs
// themselves, as the batch events ([nous.EventBatch]) Save ends each batch
// with, and a log's head alone tells whether it moved on: carryKeys moves
// the keys into the logs, then dropRevisions drops the table and the
// column.

// lockV4 keeps every other writer off the tables of version 4 until the
// migration's transaction ends, so that no batch lands, and no key is
// stored, between the read of a log's keys and the event that carries
// them; readers go on until the schema changes. It takes the tables in
// the order version 4's saves and deletes write them.
const lockV4 = `LOCK TABLE nous_logs, nous_events, nous_batches IN EXCLUSIVE MODE`

// keysPage reads, of the logs after ID $1 whose batches have keys, $2 at
// most, in ID order: each one's ID, its head, and its keys in the order
// of the batches that stored them.
const keysPage = `SELECT l.id, l.head,
	ARRAY(SELECT b.key FROM nous_batches b WHERE b.log_id = l.id ORDER BY b.revision, b.key)
FROM nous_logs l
WHERE l.id > $1 AND EXISTS (SELECT 1 FROM nous_batches b WHERE b.log_id = l.id)
ORDER BY l.id
LIMIT $2`

// carryPage appends to each log $1 the event $3 at seq $2, its head plus
// one, of type $4 and time $5, and moves the log's head to it, where its
// head is still the one read; the log's watchers are notified when the
// transaction commits. It returns the number of logs it moved.
const carryPage = `WITH m AS (
	SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bytea[]) AS m(id, seq, body)
),
e AS (
	INSERT INTO nous_events (log_id, seq, type, created_at, body)
	SELECT m.id, m.seq, $4::text, $5::timestamptz, m.body FROM m
),
u AS (
	UPDATE nous_logs l SET head = m.seq FROM m WHERE l.id = m.id AND l.head = m.seq - 1
	RETURNING l.id
)
SELECT count(pg_notify('nous_log', u.id::text)) FROM u`

// dropRevisions brings tables of version 3 or 4, whose keys (if any) are
// in their logs already, to version 5.
const dropRevisions = `
ALTER TABLE nous_logs DROP COLUMN IF EXISTS revision;
DROP TABLE IF EXISTS nous_batches;
UPDATE nous_schema SET version = 5;
`

// carryPageSize is how many logs carryKeys reads and moves at a time.
var carryPageSize = 500

// carryKeys moves the keys of version 4's batches into their logs, in tx,
// which holds the schema's lock: every log with keys in nous_batches gets
// one batch event, at its head plus one, that lists them in the order of
// their batches, and its head moves to it; [nous.Context.HasBatch] finds
// them there, as it finds the keys of the batches saved after. The event
// is the JSON nous writes of an [nous.Event], with the time of the
// migration. A log without keys is left as it was. A key no batch event
// may hold (one [nous.CheckKey] refuses, or "") is an error wrapping
// [ErrSchema] that names its log: tx is rolled back, and nothing changes.
func carryKeys(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, lockV4); err != nil {
		return err
	}
	now := time.Now().UTC()
	after := pgtype.UUID{Valid: true} // before every ID
	for {
		ids, seqs, bodies, err := readKeysPage(ctx, tx, after, now)
		if err != nil || len(ids) == 0 {
			return err
		}
		var moved int
		if err := tx.QueryRow(ctx, carryPage, ids, seqs, bodies, string(nous.EventBatch), now).Scan(&moved); err != nil {
			return err
		}
		if moved != len(ids) {
			return fmt.Errorf("carrying the keys of batches into their logs moved %d logs of %d", moved, len(ids))
		}
		if len(ids) < carryPageSize {
			return nil
		}
		after = ids[len(ids)-1]
	}
}

// readKeysPage reads the page of keysPage after ID after, and returns, of
// each of its logs, the ID, the seq of the event that is to carry its
// keys, and that event's JSON, made at time at.
func readKeysPage(ctx context.Context, tx pgx.Tx, after pgtype.UUID, at time.Time) ([]pgtype.UUID, []int64, [][]byte, error) {
	rows, err := tx.Query(ctx, keysPage, after, carryPageSize)
	if err != nil {
		return nil, nil, nil, err
	}
	var ids []pgtype.UUID
	var seqs []int64
	var bodies [][]byte
	var id pgtype.UUID
	var head int64
	var keys []string
	_, err = pgx.ForEachRow(rows, []any{&id, &head, &keys}, func() error {
		body, err := batchEvent(head+1, keys, at)
		if err != nil {
			return fmt.Errorf("%w: the database has version 4, and log %s has a key of a batch that version 5 cannot carry: %v; "+
				"nothing was changed: repair or delete that key, then open again", ErrSchema, uuid.UUID(id.Bytes), err)
		}
		ids, seqs, bodies = append(ids, id), append(seqs, head+1), append(bodies, body)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return ids, seqs, bodies, nil
}

// batchEvent returns the JSON of the batch event of seq seq and time at
// that lists keys, in their order.
func batchEvent(seq int64, keys []string, at time.Time) ([]byte, error) {
	list := make([]any, len(keys))
	for i, k := range keys {
		if k == "" {
			return nil, errors.New("the key of a batch is empty")
		}
		if err := nous.CheckKey(k); err != nil {
			return nil, err
		}
		list[i] = k
	}
	return json.Marshal(nous.Event{Seq: seq, Type: nous.EventBatch, Data: map[string]any{nous.DataKeys: list}, CreatedAt: at})
}
