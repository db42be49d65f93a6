package pgstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/storetest"
)

// schemaV1 creates the tables of version 1, as this package made them
// before tool calls were events.
const schemaV1 = `
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
	tool_calls  integer NOT NULL,
	calls_rewritten bigint NOT NULL DEFAULT 0,
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
CREATE TABLE nous_tool_calls (
	log_id uuid NOT NULL,
	idx    integer NOT NULL,
	body   bytea NOT NULL,
	PRIMARY KEY (log_id, idx)
);
INSERT INTO nous_schema (version) VALUES (1);
`

// v1Log is a log as a database of version 1 kept it.
type v1Log struct {
	nous.Stored                 // its row and its events, as this package writes them
	count       int             // its row's tool_calls: how many of calls are the log's
	calls       []nous.ToolCall // its rows of nous_tool_calls, idx 0, 1, ...
}

// want returns the tool calls of l.
func (l *v1Log) want() []nous.ToolCall { return l.calls[:l.count] }

// v1Turns adds n turns to c, numbered from first, and returns the calls
// its assistant messages make, as Context.ToolCalls held them under
// version 1, apart from the log: c records none.
func v1Turns(t *testing.T, c *nous.Context, first, n int) []nous.ToolCall {
	t.Helper()
	var calls []nous.ToolCall
	for i := first; i < first+n; i++ {
		call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "lookup", Arguments: json.RawMessage(fmt.Sprintf(`{"q":%d}`, i)),
			Metadata: map[string]any{"signature": fmt.Sprint("sig", i)}}
		must(t, c.AddMessages(nous.UserMessage(fmt.Sprint("question ", i)), nous.AssistantMessage("", call)))
		c.Iteration++
		must(t, c.AddMessage(nous.ToolMessage(call.ID, call.Name, fmt.Sprint("result ", i))))
		calls = append(calls, call)
	}
	return calls
}

// v1Context returns a context of n turns with state to keep, and the
// calls of its turns.
func v1Context(t *testing.T, n int) (*nous.Context, []nous.ToolCall) {
	c := nous.NewContext(nous.WithLogger(quiet), nous.WithSystemPrompt("be brief"), nous.WithDeps(map[string]any{"tenant": "a", "n": 1.5}),
		nous.WithAgentName("agent"), nous.WithMaxIterations(10))
	return c, v1Turns(t, c, 0, n)
}

// v1Of returns c's log as this package stored it (its state and events,
// written by a save), with calls rows of nous_tool_calls of which the row
// counts count.
func v1Of(t *testing.T, c *nous.Context, calls []nous.ToolCall, count int) v1Log {
	t.Helper()
	st, _ := earlier(t, c)
	return v1Log{Stored: st, count: count, calls: calls}
}

// earlier returns c's log as this package's earlier versions stored it,
// after one save, and c as Load gives that log back: the state and the
// events a save writes, without the batch event that this version's saves
// end their batches with, which no earlier one wrote.
func earlier(t *testing.T, c *nous.Context) (nous.Stored, *nous.Context) {
	t.Helper()
	m := storetest.NewMemory()
	must(t, c.Save(bg, m))
	st, err := m.Read(bg, c.Log().ID(), 0)
	must(t, err)
	var last nous.Event
	must(t, json.Unmarshal(st.Events[len(st.Events)-1], &last))
	if last.Type != nous.EventBatch {
		t.Fatalf("a save ended its batch with a %s event", last.Type)
	}
	st.Events = st.Events[:len(st.Events)-1]
	st.Info.Head--
	back := storetest.NewMemory()
	must(t, back.Append(bg, nous.Batch{Info: st.Info, State: st.State, Events: st.Events}))
	loaded, err := nous.Load(bg, back, st.Info.ID)
	must(t, err)
	return st, loaded
}

// createV1 makes dsn's schema one of version 1 that holds logs.
func createV1(t *testing.T, dsn string, logs ...v1Log) {
	t.Helper()
	conn := connect(t, dsn)
	_, err := conn.Exec(bg, schemaV1)
	must(t, err)
	for _, l := range logs {
		i := &l.Info
		var parent any
		if i.Parent != uuid.Nil {
			parent = i.Parent
		}
		_, err := conn.Exec(bg, `INSERT INTO nous_logs (id, parent, fork_seq, incarnation, head, revision, tool_calls, calls_rewritten, state, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, 1, $6, 0, $7, $8, $9)`,
			i.ID, parent, i.ForkSeq, i.Incarnation, i.Head, l.count, l.State, i.CreatedAt, i.UpdatedAt)
		must(t, err)
		insertEvents(t, conn, l.Stored)
		for idx, call := range l.calls {
			body, err := json.Marshal(call)
			must(t, err)
			_, err = conn.Exec(bg, `INSERT INTO nous_tool_calls (log_id, idx, body) VALUES ($1, $2, $3)`, i.ID, idx, body)
			must(t, err)
		}
	}
}

// dump returns the columns and rows of every table of dsn's schema, as
// text: equal dumps, an unchanged database.
func dump(t *testing.T, dsn string) string {
	t.Helper()
	conn := connect(t, dsn)
	rows, err := conn.Query(bg, `SELECT table_name::text, string_agg(column_name::text, ',' ORDER BY ordinal_position)
		FROM information_schema.columns WHERE table_schema = current_schema() GROUP BY table_name ORDER BY table_name`)
	must(t, err)
	type table struct{ Name, Columns string }
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[table])
	must(t, err)
	var out strings.Builder
	for _, tb := range tables {
		var data string
		must(t, conn.QueryRow(bg, `SELECT coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '') FROM `+pgx.Identifier{tb.Name}.Sanitize()+` x`).Scan(&data))
		fmt.Fprintf(&out, "%s(%s)\n%s\n", tb.Name, tb.Columns, data)
	}
	return out.String()
}

// checkSchema fails unless dsn's tables are of the current version: one
// version row, no table of tool calls, no columns of them; a name column
// under a unique index, a labels column under a GIN index; no table of the
// keys of batches, no column of the revisions.
func checkSchema(t *testing.T, dsn string) {
	t.Helper()
	conn := connect(t, dsn)
	var rows, version int
	var calls, batches bool
	var columns string
	must(t, conn.QueryRow(bg, `SELECT (SELECT count(*) FROM nous_schema), (SELECT max(version) FROM nous_schema),
		to_regclass(quote_ident(current_schema()) || '.nous_tool_calls') IS NOT NULL,
		to_regclass(quote_ident(current_schema()) || '.nous_batches') IS NOT NULL,
		(SELECT string_agg(column_name::text || ' ' || data_type::text || ' ' || is_nullable::text || ' ' || coalesce(collation_name::text, '-'), ',' ORDER BY ordinal_position)
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'nous_logs')`).Scan(&rows, &version, &calls, &batches, &columns))
	if rows != 1 || version != pgstore.SchemaVersion || calls || batches || strings.Contains(columns, "tool_calls") ||
		strings.Contains(columns, "calls_rewritten") || strings.Contains(columns, "revision") {
		t.Fatalf("after the migration: %d version rows, version %d, nous_tool_calls there: %v, nous_batches there: %v, columns of nous_logs %s",
			rows, version, calls, batches, columns)
	}
	for _, want := range []string{"name text YES C", "labels jsonb NO -"} {
		if !slices.Contains(strings.Split(columns, ","), want) {
			t.Fatalf("nous_logs has no column %q: %s", want, columns)
		}
	}
	indexes := map[string]string{}
	rs, err := conn.Query(bg, `SELECT indexname::text, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'nous_logs'`)
	must(t, err)
	for rs.Next() {
		var name, def string
		must(t, rs.Scan(&name, &def))
		indexes[name] = def
	}
	must(t, rs.Err())
	if def := indexes["nous_logs_name"]; !strings.Contains(def, "CREATE UNIQUE INDEX") || !strings.Contains(def, "(name)") {
		t.Fatalf("the index of the names is %q", def)
	}
	if def := indexes["nous_logs_labels"]; !strings.Contains(def, "USING gin (labels jsonb_path_ops)") {
		t.Fatalf("the index of the labels is %q", def)
	}
}

// callsJSON returns calls as JSON, as this package writes them: two lists
// of the same calls give the same text.
func callsJSON(t *testing.T, calls []nous.ToolCall) string {
	t.Helper()
	if len(calls) == 0 {
		return "[]"
	}
	b, err := json.Marshal(calls)
	must(t, err)
	return string(b)
}

// checkMigrated checks log l of a database migrated from version 1,
// through s: Load gives its stored events, byte for byte, then l's calls
// recorded as tool_call events, with the state version 1 kept; a Save
// stores those events and that state, with no calls in it; and the log
// loads again as the same context, with nothing left to record.
func checkMigrated(t *testing.T, s *pgstore.Store, l v1Log) {
	t.Helper()
	id, head, want := l.Info.ID, int(l.Info.Head), l.want()
	c, err := nous.Load(bg, s, id)
	must(t, err)
	if got, want := callsJSON(t, c.ToolCalls), callsJSON(t, want); got != want {
		t.Fatalf("log %s: ToolCalls %s, version 1 kept %s", id, got, want)
	}
	if c.Log().Len() != head+len(want) {
		t.Fatalf("log %s: %d events, want the %d stored and %d tool calls", id, c.Log().Len(), head, len(want))
	}
	for seq := 1; seq <= head; seq++ {
		e, err := c.AppendEventJSON(nil, int64(seq))
		must(t, err)
		if !bytes.Equal(e, l.Events[seq-1]) {
			t.Fatalf("log %s: event %d is %s, was %s", id, seq, e, l.Events[seq-1])
		}
	}
	var recorded []nous.ToolCall
	for e := range c.Log().Since(int64(head)) {
		if e.Type != nous.EventToolCall || e.Call == nil {
			t.Fatalf("log %s: event %d after the stored ones: %+v, want a tool call", id, e.Seq, e)
		}
		recorded = append(recorded, *e.Call)
	}
	if got, want := callsJSON(t, recorded), callsJSON(t, want); got != want {
		t.Fatalf("log %s: tool_call events %s, want %s", id, got, want)
	}
	if p, seq, ok := c.Log().Parent(); p != l.Info.Parent || seq != l.Info.ForkSeq || ok != (l.Info.Parent != uuid.Nil) {
		t.Fatalf("log %s: parent %s at %d, was %s at %d", id, p, seq, l.Info.Parent, l.Info.ForkSeq)
	}

	must(t, c.Save(bg, s))
	st := readAll(t, s, id)
	wantHead := int64(head) // a log with no calls to record is unchanged, and its save sends nothing
	if len(want) > 0 {
		wantHead += int64(len(want)) + 1 // the calls, and the batch event
	}
	if st.Info.Head != wantHead || st.Info.Incarnation != l.Info.Incarnation {
		t.Fatalf("log %s after a save: %+v, want head %d, incarnation %s", id, st.Info, wantHead, l.Info.Incarnation)
	}
	if !bytes.Equal(st.State, l.State) {
		t.Fatalf("log %s: state %s after a save, version 1 kept %s", id, st.State, l.State)
	}
	for i, e := range st.Events {
		w, err := c.AppendEventJSON(nil, int64(i+1))
		must(t, err)
		if !bytes.Equal(e, w) {
			t.Fatalf("log %s: stored event %d is %s, the context's %s", id, i+1, e, w)
		}
	}
	again, err := nous.Load(bg, s, id)
	must(t, err)
	same(t, c, again)
	if again.Log().Len() != c.Log().Len() {
		t.Fatalf("log %s: loaded again with %d events, saved with %d", id, again.Log().Len(), c.Log().Len())
	}
}

// A database of version 1 is brought to version 2, and on to the current
// one, on Open: its tool calls
// become tool_call events of their logs (the calls a row counts, in order;
// rows beyond the count are not the log's), and a log without calls is
// left as it was, byte for byte.
func TestMigrateV1(t *testing.T) {
	dsn := freshSchema(t)
	a, aCalls := v1Context(t, 3)
	fork := a.Clone()
	forkCalls := slices.Concat(aCalls, v1Turns(t, fork, 3, 2))
	none, _ := v1Context(t, 2)
	beyond, beyondCalls := v1Context(t, 1)
	logs := []v1Log{
		v1Of(t, a, aCalls, 3),
		v1Of(t, fork, forkCalls, 2), // rows 2..4 beyond the count
		v1Of(t, none, nil, 0),
		v1Of(t, beyond, beyondCalls, 0), // its one row beyond the count
	}
	if logs[1].Info.Parent != logs[0].Info.ID {
		t.Fatalf("the fork's log has parent %s", logs[1].Info.Parent)
	}
	createV1(t, dsn, logs...)
	s := open(t, dsn)
	checkSchema(t, dsn)
	conn := connect(t, dsn)
	for _, l := range logs[2:] {
		var state []byte
		must(t, conn.QueryRow(bg, `SELECT state FROM nous_logs WHERE id = $1`, l.Info.ID).Scan(&state))
		if !bytes.Equal(state, l.State) {
			t.Fatalf("log %s without calls: the migration changed its state to %s from %s", l.Info.ID, state, l.State)
		}
	}
	for _, l := range logs {
		checkMigrated(t, s, l)
	}
}

// Openers of a database of version 1 at once all succeed, whatever the
// database's default isolation, and it is migrated once, to the current
// version: one version row, each call once.
func TestMigrateV1OnceUnderConcurrentOpens(t *testing.T) {
	for name, params := range isolations {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			c, calls := v1Context(t, 4)
			l := v1Of(t, c, calls, len(calls))
			createV1(t, dsn, l)
			for i, err := range openAtOnce(dsn, 8) {
				if err != nil {
					t.Errorf("open %d of 8: %v", i, err)
				}
			}
			checkSchema(t, dsn)
			checkMigrated(t, open(t, dsn), l)
		})
	}
}

// A database of version 1 that holds a log whose calls cannot be carried
// to version 2 (its state does not end in '}', so nothing can be added to
// it, or a call the row counts is missing, which version 1 read as
// corrupt) is refused with ErrSchema naming the log, and nothing changes,
// the other logs' included; once the log is gone the migration goes on.
func TestMigrateV1RefusesWhatItCannotCarry(t *testing.T) {
	for name, tc := range map[string]struct {
		spoil func(l *v1Log)
		sql   string // run on the database of version 1, $1 the log's ID
	}{
		"a state not ending in '}'":    {spoil: func(l *v1Log) { l.State = bytes.TrimSuffix(l.State, []byte("}")) }},
		"the last call row missing":    {spoil: func(l *v1Log) { l.calls = l.calls[:2] }},
		"a call row missing before it": {sql: `DELETE FROM nous_tool_calls WHERE log_id = $1 AND idx = 1`},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t)
			good, goodCalls := v1Context(t, 2)
			bad, badCalls := v1Context(t, 4)
			badLog := v1Of(t, bad, badCalls, 3) // and one row beyond
			if tc.spoil != nil {
				tc.spoil(&badLog)
			}
			goodLog := v1Of(t, good, goodCalls, 2)
			createV1(t, dsn, goodLog, badLog)
			conn := connect(t, dsn)
			if tc.sql != "" {
				_, err := conn.Exec(bg, tc.sql, badLog.Info.ID)
				must(t, err)
			}
			before := dump(t, dsn)
			s, err := pgstore.Open(bg, dsn)
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, pgstore.ErrSchema) || !strings.Contains(fmt.Sprint(err), badLog.Info.ID.String()) {
				t.Fatalf("Open: %v, want ErrSchema naming log %s", err, badLog.Info.ID)
			}
			if after := dump(t, dsn); after != before {
				t.Fatalf("a refused migration changed the database:\n%s\nwas\n%s", after, before)
			}
			for _, table := range []string{"nous_tool_calls", "nous_events", "nous_logs"} {
				col := "log_id"
				if table == "nous_logs" {
					col = "id"
				}
				_, err := conn.Exec(bg, `DELETE FROM `+table+` WHERE `+col+` = $1`, badLog.Info.ID)
				must(t, err)
			}
			s = open(t, dsn)
			checkSchema(t, dsn)
			checkMigrated(t, s, goodLog)
		})
	}
}

// schemaV2 creates the tables of version 2, as this package made them
// before logs had names and labels.
const schemaV2 = `
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
INSERT INTO nous_schema (version) VALUES (2);
`

// appendFirstV2 is the statement of version 2 that created a log, as a
// replica not yet upgraded would still run it: $1 id, $2 incarnation, $3
// the head, $4 the revision, $5 the state, $6 the time, $7 the parent, $8
// the fork seq, $9 the creation time.
const appendFirstV2 = `INSERT INTO nous_logs (id, incarnation, head, revision, state, updated_at, parent, fork_seq, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// insertV2 stores log st as version 2 did, through conn, after one batch.
func insertV2(t *testing.T, conn *pgx.Conn, st nous.Stored) {
	t.Helper()
	must(t, createV2(conn, st))
	insertEvents(t, conn, st)
}

// createV2 creates log st's row, as version 2 did its first batch.
func createV2(conn *pgx.Conn, st nous.Stored) error {
	i := &st.Info
	var parent any
	if i.Parent != uuid.Nil {
		parent = i.Parent
	}
	_, err := conn.Exec(bg, appendFirstV2, i.ID, i.Incarnation, i.Head, 1, st.State, i.UpdatedAt, parent, i.ForkSeq, i.CreatedAt)
	return err
}

// insertEvents inserts the events of log st, through conn, in one
// statement, each row as every version of this package writes it.
func insertEvents(t *testing.T, conn *pgx.Conn, st nous.Stored) {
	t.Helper()
	seqs := make([]int64, len(st.Events))
	types := make([]string, len(st.Events))
	times := make([]time.Time, len(st.Events))
	bodies := make([][]byte, len(st.Events))
	for i, body := range st.Events {
		var e nous.Event
		must(t, json.Unmarshal(body, &e))
		seqs[i], types[i], times[i], bodies[i] = e.Seq, string(e.Type), e.CreatedAt, body
	}
	_, err := conn.Exec(bg, `INSERT INTO nous_events (log_id, seq, type, created_at, body)
		SELECT $1, x.seq, x.type, x.at, x.body FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::bytea[]) AS x(seq, type, at, body)`,
		st.Info.ID, seqs, types, times, bodies)
	must(t, err)
}

// v2Logs returns a few logs, a fork among them, as this package stored
// them before version 5, and the contexts they load as.
func v2Logs(t *testing.T) ([]*nous.Context, []nous.Stored) {
	t.Helper()
	a := conversation(t, 3)
	fork := a.Clone()
	turn(t, fork, 3)
	b := conversation(t, 1)
	var contexts []*nous.Context
	var logs []nous.Stored
	for _, c := range []*nous.Context{a, fork, b} {
		st, loaded := earlier(t, c)
		contexts, logs = append(contexts, loaded), append(logs, st)
	}
	return contexts, logs
}

// conversation returns a context of n turns with state to keep.
func conversation(t *testing.T, n int) *nous.Context {
	c := nous.NewContext(nous.WithLogger(quiet), nous.WithSystemPrompt("be brief"), nous.WithDeps(map[string]any{"tenant": "a"}))
	for i := range n {
		turn(t, c, i)
	}
	return c
}

// checkMigratedV2 checks that s reads the logs of version 2 as they were
// stored, each without a name or labels, and loads them as contexts.
func checkMigratedV2(t *testing.T, s *pgstore.Store, contexts []*nous.Context, logs []nous.Stored) {
	t.Helper()
	for i, want := range logs {
		got := readAll(t, s, want.Info.ID)
		w, g := want.Info, got.Info
		if g.ID != w.ID || g.Parent != w.Parent || g.ForkSeq != w.ForkSeq || g.Head != w.Head ||
			g.Incarnation != w.Incarnation || !g.CreatedAt.Equal(w.CreatedAt.Truncate(time.Microsecond)) ||
			!g.UpdatedAt.Equal(w.UpdatedAt.Truncate(time.Microsecond)) || g.Name != "" || g.Labels != nil {
			t.Fatalf("log %s reads as %+v after the migration, was %+v", w.ID, g, w)
		}
		if !bytes.Equal(got.State, want.State) || len(got.Events) != len(want.Events) {
			t.Fatalf("log %s: state or events changed by the migration", w.ID)
		}
		for j := range want.Events {
			if !bytes.Equal(got.Events[j], want.Events[j]) {
				t.Fatalf("log %s: event %d is %s, was %s", w.ID, j+1, got.Events[j], want.Events[j])
			}
		}
		c, err := nous.Load(bg, s, w.ID)
		must(t, err)
		same(t, contexts[i], c)
		if c.Log().Name() != "" || c.Log().Labels() != nil {
			t.Fatalf("log %s loads with name %q, labels %v", w.ID, c.Log().Name(), c.Log().Labels())
		}
	}
}

// A database of version 2 is brought to the current version on Open: its
// logs read and load as they were, without a name or labels, and save on;
// new logs take names and labels; a replica not yet upgraded, which
// creates logs as version 2 did, stores nothing: the column of the
// revisions it writes is gone.
func TestMigrateV2(t *testing.T) {
	dsn := freshSchema(t)
	contexts, logs := v2Logs(t)
	conn := connect(t, dsn)
	_, err := conn.Exec(bg, schemaV2)
	must(t, err)
	for _, st := range logs {
		insertV2(t, conn, st)
	}
	s := open(t, dsn)
	checkSchema(t, dsn)
	checkMigratedV2(t, s, contexts, logs)
	for info, err := range s.List(bg, nous.ListOptions{}) {
		must(t, err)
		if info.Name != "" || info.Labels != nil {
			t.Fatalf("log %s is listed with name %q labels %v", info.ID, info.Name, info.Labels)
		}
	}

	c, err := nous.Load(bg, s, logs[0].Info.ID)
	must(t, err)
	turn(t, c, 9)
	must(t, c.Save(bg, s))
	again, err := nous.Load(bg, s, c.Log().ID())
	must(t, err)
	same(t, c, again)

	named := nous.NewContext(nous.WithLogger(quiet), nous.WithLogName("after the migration"), nous.WithLogLabels(map[string]string{"app": "x"}))
	turn(t, named, 0)
	must(t, named.Save(bg, s))
	if info, err := s.Lookup(bg, "after the migration"); err != nil || info.ID != named.Log().ID() {
		t.Fatalf("Lookup of a log named after the migration: %v, %v", info.ID, err)
	}
	var listed []uuid.UUID
	for info, err := range s.List(bg, nous.ListOptions{Labels: map[string]string{"app": "x"}}) {
		must(t, err)
		listed = append(listed, info.ID)
	}
	if !slices.Equal(listed, []uuid.UUID{named.Log().ID()}) {
		t.Fatalf("List by labels after the migration: %v, want %v", listed, named.Log().ID())
	}

	st, _ := earlier(t, conversation(t, 1))
	if err := createV2(conn, st); err == nil { // by a replica of version 2
		t.Fatal("a replica of version 2 created a log after the migration")
	}
	if _, err := s.Read(bg, st.Info.ID, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a replica of version 2 that failed left its log: %v", err)
	}
}

// Openers of a database of version 2 at once all succeed, whatever the
// database's default isolation, and it is migrated once: one version row,
// one index of each.
func TestMigrateV2OnceUnderConcurrentOpens(t *testing.T) {
	for name, params := range isolations {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			contexts, logs := v2Logs(t)
			conn := connect(t, dsn)
			_, err := conn.Exec(bg, schemaV2)
			must(t, err)
			for _, st := range logs {
				insertV2(t, conn, st)
			}
			for i, err := range openAtOnce(dsn, 8) {
				if err != nil {
					t.Errorf("open %d of 8: %v", i, err)
				}
			}
			checkSchema(t, dsn)
			var indexes int
			must(t, conn.QueryRow(bg, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'nous_logs'`).Scan(&indexes))
			if indexes != 3 {
				t.Fatalf("nous_logs has %d indexes, want 3: its key, the names', the labels'", indexes)
			}
			checkMigratedV2(t, open(t, dsn), contexts, logs)
		})
	}
}

// schemaV3 creates the tables of version 3, as this package made them
// before batches had keys.
const schemaV3 = `
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
	updated_at  timestamptz NOT NULL,
	name        text COLLATE "C",
	labels      jsonb NOT NULL DEFAULT '{}'
);
CREATE TABLE nous_events (
	log_id     uuid NOT NULL,
	seq        bigint NOT NULL,
	type       text NOT NULL,
	created_at timestamptz NOT NULL,
	body       bytea NOT NULL,
	PRIMARY KEY (log_id, seq)
);
CREATE UNIQUE INDEX nous_logs_name ON nous_logs (name) WHERE name IS NOT NULL;
CREATE INDEX nous_logs_labels ON nous_logs USING gin (labels jsonb_path_ops);
INSERT INTO nous_schema (version) VALUES (3);
`

// A database of version 3 is brought to the current version on Open, by
// every opener at once: its logs read and load as they were, with no keys
// of their batches, and save on, each batch with a key, one stored twice
// refused; a replica not yet upgraded, which saves as version 3 did,
// stores nothing: the column of the revisions it writes is gone.
func TestMigrateV3(t *testing.T) {
	dsn := freshSchema(t)
	contexts, logs := v2Logs(t)
	conn := connect(t, dsn)
	_, err := conn.Exec(bg, schemaV3)
	must(t, err)
	for _, st := range logs {
		insertV2(t, conn, st) // a log of version 3 without a name is stored as version 2 stored it
	}
	for i, err := range openAtOnce(dsn, 4) {
		if err != nil {
			t.Errorf("open %d of 4: %v", i, err)
		}
	}
	s := open(t, dsn)
	checkSchema(t, dsn)
	checkMigratedV2(t, s, contexts, logs)
	for _, st := range logs {
		if got := readAll(t, s, st.Info.ID); got.Info.Head != st.Info.Head || len(batchEvents(t, got.Events)) != 0 {
			t.Fatalf("log %s has head %d and batch events %v after the migration, had head %d and none",
				st.Info.ID, got.Info.Head, batchEvents(t, got.Events), st.Info.Head)
		}
	}
	c, err := nous.Load(bg, s, logs[0].Info.ID)
	must(t, err)
	turn(t, c, 9)
	c.SetBatchKey("turn 9")
	must(t, c.Save(bg, s))
	again, err := nous.Load(bg, s, c.Log().ID())
	must(t, err)
	same(t, c, again)
	if !again.HasBatch("turn 9") {
		t.Fatal("a batch saved after the migration has no key")
	}
	turn(t, again, 10)
	again.SetBatchKey("turn 9")
	if err := again.Save(bg, s); !errors.Is(err, nous.ErrLanded) {
		t.Fatalf("a key saved twice after the migration: %v, want ErrLanded", err)
	}
	before := readAll(t, s, c.Log().ID())
	// A replica of version 3 saves a state-only batch, without a key.
	if _, err := conn.Exec(bg, `UPDATE nous_logs SET head = head, revision = revision + 1, updated_at = now() WHERE id = $1`, c.Log().ID()); err == nil {
		t.Fatal("a replica of version 3 saved after the migration")
	}
	if after := readAll(t, s, c.Log().ID()); !after.Info.UpdatedAt.Equal(before.Info.UpdatedAt) || after.Info.Head != before.Info.Head {
		t.Fatalf("a replica of version 3 that failed changed the log: %+v, was %+v", after.Info, before.Info)
	}
}
