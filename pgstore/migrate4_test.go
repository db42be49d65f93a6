package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// schemaV4 creates the tables of version 4, as this package made them
// while it kept the keys of batches in a table of their own and counted
// each log's batches in its revision.
const schemaV4 = `
CREATE TABLE nous_schema (
	version integer NOT NULL
);
CREATE TABLE nous_logs (
	id          uuid PRIMARY KEY,
	parent      uuid,
	fork_seq    bigint NOT NULL,
	incarnation uuid NOT NULL,
	head        bigint NOT NULL,
	revision    bigint NOT NULL,
	state       bytea NOT NULL,
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL
);
CREATE TABLE nous_events (
	log_id     uuid NOT NULL,
	seq        bigint NOT NULL,
	type       text NOT NULL,
	created_at timestamptz NOT NULL,
	body       bytea NOT NULL,
	PRIMARY KEY (log_id, seq)
);
ALTER TABLE nous_logs
	ADD COLUMN IF NOT EXISTS name   text COLLATE "C",
	ADD COLUMN IF NOT EXISTS labels jsonb NOT NULL DEFAULT '{}';
CREATE UNIQUE INDEX IF NOT EXISTS nous_logs_name ON nous_logs (name) WHERE name IS NOT NULL;
CREATE INDEX IF NOT EXISTS nous_logs_labels ON nous_logs USING gin (labels jsonb_path_ops);
CREATE TABLE IF NOT EXISTS nous_batches (
	log_id   uuid NOT NULL,
	key      text COLLATE "C" NOT NULL,
	revision bigint NOT NULL,
	head     bigint NOT NULL,
	CONSTRAINT nous_batches_key PRIMARY KEY (log_id, key)
);
CREATE INDEX IF NOT EXISTS nous_batches_head ON nous_batches (log_id, head);
INSERT INTO nous_schema (version) VALUES (4);
`

// v4Batch is a row of nous_batches: a batch's key, and the revision and
// head of its log once it was stored.
type v4Batch struct {
	key            string
	revision, head int64
}

// v4Log is a log as a database of version 4 kept it.
type v4Log struct {
	nous.Stored           // its row and its events, as this package wrote them
	revision    int64     // its row's revision: the number of its batches
	batches     []v4Batch // its batches with a key, in revision order
}

// keys returns the keys of l's batches in the order they were stored.
func (l *v4Log) keys() []string {
	var keys []string
	for _, b := range l.batches {
		keys = append(keys, b.key)
	}
	return keys
}

// keyedTurns adds a turn to c for each of keys, each turn a batch that
// version 4 stored after revision rev, with its key ("" for none, a batch
// of version 3). It returns the batches with a key and the last revision.
func keyedTurns(t *testing.T, c *nous.Context, rev int64, keys ...string) ([]v4Batch, int64) {
	t.Helper()
	var out []v4Batch
	for _, k := range keys {
		turn(t, c, c.Log().Len())
		rev++
		if k != "" {
			out = append(out, v4Batch{key: k, revision: rev, head: int64(c.Log().Len())})
		}
	}
	return out, rev
}

// v4Logs returns logs as version 4 kept them: a named log whose last
// batch changed only the state; a fork of it, with keys of its own; a log
// of many batches, the first two stored by version 3 without a key, some
// keys of bytes JSON escapes; a log of version 3's batches only, without
// keys.
func v4Logs(t *testing.T) []v4Log {
	t.Helper()
	a := nous.NewContext(nous.WithLogger(quiet), nous.WithLogName("job runner"), nous.WithLogLabels(map[string]string{"app": "jobs"}),
		nous.WithDeps(map[string]any{"tenant": "a"}))
	aBatches, aRev := keyedTurns(t, a, 0, "a-1", "a-2")
	fork := a.Clone()
	more, aRev := keyedTurns(t, a, aRev, "a-3")
	a.SystemPrompt = "a state-only batch"
	aRev++
	aBatches = append(aBatches, append(more, v4Batch{key: "a-state", revision: aRev, head: int64(a.Log().Len())})...)
	forkBatches, forkRev := keyedTurns(t, fork, 0, "f-1", "f-2")

	many := nous.NewContext(nous.WithLogger(quiet), nous.WithSystemPrompt("be brief"))
	keys := []string{"", ""}
	for i := range 600 {
		keys = append(keys, fmt.Sprint("m-", i))
		if i == 300 {
			keys = append(keys, `job "7" <&> ü\ `, "Jq3mS0yQ0f2V9pM4cK1r_w", strings.Repeat("é", nous.MaxKeyBytes/2))
		}
	}
	manyBatches, manyRev := keyedTurns(t, many, 0, keys...)
	none := conversation(t, 2)

	var logs []v4Log
	for _, l := range []struct {
		c        *nous.Context
		batches  []v4Batch
		revision int64
	}{{a, aBatches, aRev}, {fork, forkBatches, forkRev}, {many, manyBatches, manyRev}, {none, nil, 2}} {
		st, _ := earlier(t, l.c)
		logs = append(logs, v4Log{Stored: st, revision: l.revision, batches: l.batches})
	}
	if logs[1].Info.Parent != logs[0].Info.ID || logs[0].Info.Name == "" {
		t.Fatalf("the fork's log has parent %s, its parent's name %q", logs[1].Info.Parent, logs[0].Info.Name)
	}
	return logs
}

// createV4 makes dsn's schema one of version 4 that holds logs.
func createV4(t *testing.T, dsn string, logs ...v4Log) {
	t.Helper()
	conn := connect(t, dsn)
	_, err := conn.Exec(bg, schemaV4)
	must(t, err)
	for _, l := range logs {
		i := &l.Info
		labels, err := json.Marshal(i.Labels)
		must(t, err)
		if i.Labels == nil {
			labels = []byte("{}")
		}
		var parent any
		if i.Parent != uuid.Nil {
			parent = i.Parent
		}
		_, err = conn.Exec(bg, `INSERT INTO nous_logs (id, parent, fork_seq, incarnation, head, revision, state, created_at, updated_at, name, labels)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), $11::jsonb)`,
			i.ID, parent, i.ForkSeq, i.Incarnation, i.Head, l.revision, l.State, i.CreatedAt, i.UpdatedAt, i.Name, string(labels))
		must(t, err)
		insertEvents(t, conn, l.Stored)
		var keys []string
		var revisions, heads []int64
		for _, b := range l.batches {
			keys, revisions, heads = append(keys, b.key), append(revisions, b.revision), append(heads, b.head)
		}
		_, err = conn.Exec(bg, `INSERT INTO nous_batches (log_id, key, revision, head)
			SELECT $1, x.key, x.revision, x.head FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS x(key, revision, head)`,
			i.ID, keys, revisions, heads)
		must(t, err)
	}
}

// batchEvents returns the batch events among events.
func batchEvents(t *testing.T, events []json.RawMessage) []nous.Event {
	t.Helper()
	var out []nous.Event
	for _, body := range events {
		var e nous.Event
		must(t, json.Unmarshal(body, &e))
		if e.Type == nous.EventBatch {
			out = append(out, e)
		}
	}
	return out
}

// checkCarried checks log l of a database migrated from version 4 between
// times from and to, through s: a log with keys holds them, in the order
// of their batches, in one batch event after its stored events, made at
// the migration, which moved its head and nothing else; a log without
// keys is as it was. Load gives the log with every key of its own and
// none of another's (others).
func checkCarried(t *testing.T, s *pgstore.Store, dsn string, l v4Log, from, to time.Time, others []string) {
	t.Helper()
	id, head := l.Info.ID, l.Info.Head
	got := readAll(t, s, id)
	g := got.Info
	if g.Incarnation != l.Info.Incarnation || g.Parent != l.Info.Parent || g.ForkSeq != l.Info.ForkSeq || g.Name != l.Info.Name ||
		!maps.Equal(g.Labels, l.Info.Labels) || !g.UpdatedAt.Equal(l.Info.UpdatedAt.Truncate(time.Microsecond)) || !bytes.Equal(got.State, l.State) {
		t.Fatalf("log %s reads as %+v after the migration, was %+v, or its state changed", id, g, l.Info)
	}
	keys, wantHead := l.keys(), head
	if len(keys) > 0 {
		wantHead++
	}
	if g.Head != wantHead || int64(len(got.Events)) != wantHead {
		t.Fatalf("log %s: head %d, %d events after the migration; want %d", id, g.Head, len(got.Events), wantHead)
	}
	for i, e := range l.Events {
		if !bytes.Equal(got.Events[i], e) {
			t.Fatalf("log %s: event %d is %s, was %s", id, i+1, got.Events[i], e)
		}
	}
	batches := batchEvents(t, got.Events)
	if len(keys) == 0 {
		if len(batches) != 0 {
			t.Fatalf("log %s without keys has batch events %v", id, batches)
		}
	} else {
		checkBatchEvent(t, dsn, l, got.Events[head], from, to)
		if len(batches) != 1 {
			t.Fatalf("log %s has %d batch events, want the migration's one", id, len(batches))
		}
	}
	c, err := nous.Load(bg, s, id)
	must(t, err)
	for _, k := range keys {
		if !c.HasBatch(k) {
			t.Fatalf("log %s: HasBatch(%q) is false after the migration", id, k)
		}
	}
	for _, k := range others {
		if c.HasBatch(k) && !slices.Contains(keys, k) {
			t.Fatalf("log %s: HasBatch(%q), another log's key", id, k)
		}
	}
}

// checkBatchEvent checks body, the event a migration from version 4
// between times from and to appended to log l: a batch event at l's head
// plus one that lists l's keys in order, the JSON nous writes of it, in a
// row of its type and time.
func checkBatchEvent(t *testing.T, dsn string, l v4Log, body json.RawMessage, from, to time.Time) {
	t.Helper()
	id, seq := l.Info.ID, l.Info.Head+1
	var e nous.Event
	must(t, json.Unmarshal(body, &e))
	list, _ := e.Data[nous.DataKeys].([]any)
	var keys []string
	for _, k := range list {
		s, _ := k.(string)
		keys = append(keys, s)
	}
	if e.Seq != seq || e.Type != nous.EventBatch || len(e.Data) != 1 || len(keys) != len(l.keys()) {
		t.Fatalf("log %s: the migration's event is %.300s, want a batch event of seq %d with %d keys", id, body, seq, len(l.keys()))
	}
	for i, k := range l.keys() {
		if keys[i] != k {
			t.Fatalf("log %s: the migration's event has the key %q at %d, want %q: the keys in the order of their batches", id, keys[i], i, k)
		}
	}
	if e.CreatedAt.Location() != time.UTC || e.CreatedAt.Before(from) || e.CreatedAt.After(to) {
		t.Fatalf("log %s: the migration's event was made at %v, not between %v and %v in UTC", id, e.CreatedAt, from, to)
	}
	want, err := json.Marshal(nous.Event{Seq: seq, Type: nous.EventBatch, Data: map[string]any{nous.DataKeys: list}, CreatedAt: e.CreatedAt})
	must(t, err)
	if !bytes.Equal(body, want) {
		t.Fatalf("log %s: the migration's event is %s, nous writes %s", id, body, want)
	}
	var typ string
	var at time.Time
	must(t, connect(t, dsn).QueryRow(bg, `SELECT type, created_at FROM nous_events WHERE log_id = $1 AND seq = $2`, id, seq).Scan(&typ, &at))
	if typ != string(nous.EventBatch) || !at.Equal(e.CreatedAt.Truncate(time.Microsecond)) {
		t.Fatalf("log %s: the migration's event's row has type %q and time %v", id, typ, at)
	}
}

// allKeys returns the keys of logs' batches.
func allKeys(logs []v4Log) []string {
	var keys []string
	for _, l := range logs {
		keys = append(keys, l.keys()...)
	}
	return keys
}

// notified returns the IDs conn, listening on nous_log, is notified of
// until it has all of want, or for a while after, or 10 s have passed.
func notified(t *testing.T, conn *pgx.Conn, want []uuid.UUID) map[uuid.UUID]bool {
	t.Helper()
	got := map[uuid.UUID]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		wait := time.Until(deadline)
		if !slices.ContainsFunc(want, func(id uuid.UUID) bool { return !got[id] }) {
			wait = min(wait, 200*time.Millisecond) // the others of the same transaction
		}
		ctx, cancel := context.WithTimeout(bg, wait)
		n, err := conn.WaitForNotification(ctx)
		cancel()
		if err != nil {
			return got
		}
		if id, err := uuid.Parse(n.Payload); err == nil {
			got[id] = true
		}
	}
}

// A database of version 4 is brought to the current version on Open: the
// keys of each log's batches become one batch event at the end of the
// log, which Load reads them from, so that HasBatch knows every key a
// batch was stored with, and the logs' watchers are notified; a log
// without keys is left as it was. The migration spans pages of logs,
// and happens once: opening again, alone or several at once, changes
// nothing. The logs save on; a key stored before the migration is one a
// save may not store again.
func TestMigrateV4(t *testing.T) {
	defer pgstore.SetCarryPageSize(2)() // the logs with keys span two pages
	dsn := freshSchema(t)
	logs := v4Logs(t)
	createV4(t, dsn, logs...)
	listener := connect(t, dsn)
	_, err := listener.Exec(bg, `LISTEN nous_log`)
	must(t, err)
	from := time.Now()
	s := open(t, dsn)
	to := time.Now()
	checkSchema(t, dsn)
	var carried []uuid.UUID
	for _, l := range logs {
		checkCarried(t, s, dsn, l, from, to, allKeys(logs))
		if len(l.batches) > 0 {
			carried = append(carried, l.Info.ID)
		}
	}
	got := notified(t, listener, carried)
	for _, l := range logs {
		if got[l.Info.ID] != (len(l.batches) > 0) {
			t.Errorf("log %s with %d keys: notified %v", l.Info.ID, len(l.batches), got[l.Info.ID])
		}
	}

	migrated := dump(t, dsn)
	open(t, dsn)
	for i, err := range openAtOnce(dsn, 4) {
		if err != nil {
			t.Errorf("open %d of 4: %v", i, err)
		}
	}
	if again := dump(t, dsn); again != migrated {
		t.Fatalf("opening a migrated database again changed it:\n%s\nwas\n%s", again, migrated)
	}

	a, err := nous.Load(bg, s, logs[0].Info.ID)
	must(t, err)
	turn(t, a, 100)
	a.SetBatchKey("a-4")
	must(t, a.Save(bg, s))
	again, err := nous.Load(bg, open(t, dsn), a.Log().ID())
	must(t, err)
	same(t, a, again)
	for _, k := range append(logs[0].keys(), "a-4") {
		if !again.HasBatch(k) {
			t.Fatalf("after a save on the migrated log: HasBatch(%q) is false", k)
		}
	}
	for _, l := range logs[1:] {
		c, err := nous.Load(bg, s, l.Info.ID)
		must(t, err)
		turn(t, c, 100)
		for _, k := range l.keys() {
			c.SetBatchKey(k)
			if err := c.Save(bg, s); !errors.Is(err, nous.ErrLanded) {
				t.Fatalf("log %s: a save of the key %q stored before the migration: %v, want ErrLanded", l.Info.ID, k, err)
			}
		}
		c.SetBatchKey("")
		must(t, c.Save(bg, s))
		if st := readAll(t, s, l.Info.ID); len(batchEvents(t, st.Events)) != min(len(l.batches), 1)+1 {
			t.Fatalf("log %s: %d batch events after a save on top of the migration", l.Info.ID, len(batchEvents(t, st.Events)))
		}
	}
}

// Openers of a database of version 4 at once all succeed, whatever the
// database's default isolation, and it is migrated once: each log with
// keys has one batch event that holds them.
func TestMigrateV4OnceUnderConcurrentOpens(t *testing.T) {
	serverDSN(t)
	logs := v4Logs(t)
	for name, params := range isolations {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			createV4(t, dsn, logs...)
			from := time.Now()
			for i, err := range openAtOnce(dsn, 8) {
				if err != nil {
					t.Errorf("open %d of 8: %v", i, err)
				}
			}
			to := time.Now()
			checkSchema(t, dsn)
			s := open(t, dsn)
			for _, l := range logs {
				checkCarried(t, s, dsn, l, from, to, allKeys(logs))
			}
		})
	}
}

// A database of version 4 that holds a key no batch event can hold (one
// nous.CheckKey refuses, or an empty one) is refused with ErrSchema naming
// its log, and nothing changes, though the migration carried other logs'
// keys before it found it; once the key is gone the migration goes on.
func TestMigrateV4RefusesKeysItCannotCarry(t *testing.T) {
	defer pgstore.SetCarryPageSize(1)()
	for name, key := range map[string]string{
		"a key too long": strings.Repeat("k", nous.MaxKeyBytes+1),
		"an empty key":   "",
	} {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t)
			logs := v4Logs(t)
			bad := &logs[0] // the last with keys in ID order, after others
			for i := range logs {
				if len(logs[i].batches) > 0 && logs[i].Info.ID.String() > bad.Info.ID.String() {
					bad = &logs[i]
				}
			}
			bad.batches = append(bad.batches, v4Batch{key: key, revision: bad.revision + 1, head: bad.Info.Head})
			bad.revision++
			createV4(t, dsn, logs...)
			before := dump(t, dsn)
			s, err := pgstore.Open(bg, dsn)
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, pgstore.ErrSchema) || !strings.Contains(fmt.Sprint(err), bad.Info.ID.String()) {
				t.Fatalf("Open: %v, want ErrSchema naming log %s", err, bad.Info.ID)
			}
			if after := dump(t, dsn); after != before {
				t.Fatalf("a refused migration changed the database:\n%s\nwas\n%s", after, before)
			}
			_, err = connect(t, dsn).Exec(bg, `DELETE FROM nous_batches WHERE log_id = $1 AND key = $2`, bad.Info.ID, key)
			must(t, err)
			bad.batches = bad.batches[:len(bad.batches)-1]
			from := time.Now()
			s = open(t, dsn)
			to := time.Now()
			checkSchema(t, dsn)
			for _, l := range logs {
				checkCarried(t, s, dsn, l, from, to, allKeys(logs))
			}
		})
	}
}
