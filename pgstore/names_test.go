package pgstore_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// namedBatch returns the creating batch of a log with n events, a name
// and labels.
func namedBatch(name string, labels map[string]string, n int) nous.Batch {
	b := firstBatch(uuid.Must(uuid.NewV7()), uuid.New(), n)
	b.Info.Name, b.Info.Labels = name, labels
	return b
}

// rowsOf returns how many rows of nous_logs and of nous_events dsn's
// schema holds of log id.
func rowsOf(t *testing.T, dsn string, id uuid.UUID) (logs, events int) {
	t.Helper()
	must(t, connect(t, dsn).QueryRow(bg, `SELECT (SELECT count(*) FROM nous_logs WHERE id = $1),
		(SELECT count(*) FROM nous_events WHERE log_id = $1)`, id).Scan(&logs, &events))
	return logs, events
}

// A first batch under a name another log holds is refused with
// ErrConflict naming the name and that log, and stores nothing: no row of
// the log, none of its events. A name is the log's byte for byte: one
// that differs only in case, in Unicode normalization or in trailing
// space is another name.
func TestTakenNameStoresNothing(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	const name = "Café"
	first := namedBatch(name, map[string]string{"app": "a"}, 2)
	must(t, s.Append(bg, first))
	dup := namedBatch(name, map[string]string{"app": "b"}, 3)
	err := s.Append(bg, dup)
	if !errors.Is(err, nous.ErrConflict) || !strings.Contains(err.Error(), first.Info.ID.String()) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
		t.Fatalf("Append of a taken name: %v, want ErrConflict naming %q and log %s", err, name, first.Info.ID)
	}
	if logs, events := rowsOf(t, dsn, dup.Info.ID); logs != 0 || events != 0 {
		t.Fatalf("the refused log left %d rows and %d events", logs, events)
	}
	for _, other := range []string{"café", "Cafe\u0301", "Café ", " Café"} {
		b := namedBatch(other, nil, 1)
		must(t, s.Append(bg, b))
		if info, err := s.Lookup(bg, other); err != nil || info.ID != b.Info.ID {
			t.Fatalf("Lookup(%q): %v %v, want %s", other, info.ID, err, b.Info.ID)
		}
	}
	if info, err := s.Lookup(bg, name); err != nil || info.ID != first.Info.ID {
		t.Fatalf("Lookup(%q): %v %v, want %s", name, info.ID, err, first.Info.ID)
	}
	// Unnamed logs are any number.
	for range 3 {
		must(t, s.Append(bg, namedBatch("", nil, 1)))
	}
	var nulls int
	must(t, connect(t, dsn).QueryRow(bg, `SELECT count(*) FROM nous_logs WHERE name IS NULL`).Scan(&nulls))
	if nulls != 3 {
		t.Fatalf("%d logs without a name have a NULL name, want 3", nulls)
	}
}

// Looking up a name no log can hold, or listing by labels no log can
// hold, finds nothing and is no error.
func TestLookupAndListOfWhatNoLogHolds(t *testing.T) {
	s := open(t, freshSchema(t))
	must(t, s.Append(bg, namedBatch("x", map[string]string{"k": "v"}, 1)))
	for _, name := range []string{"nul \x00", "bad \xff", strings.Repeat("x", nous.MaxNameBytes+1)} {
		if _, err := s.Lookup(bg, name); !errors.Is(err, nous.ErrNotFound) {
			t.Errorf("Lookup(%.20q): %v, want ErrNotFound", name, err)
		}
	}
	for _, labels := range []map[string]string{{"k": "v\x00"}, {"k": "\xff"}, {"": "v"}, {"k\x00": "v"}} {
		for info, err := range s.List(bg, nous.ListOptions{Labels: labels}) {
			t.Errorf("List(%q) yields %v %v, want nothing", labels, info.ID, err)
		}
	}
}

// Names and labels round-trip under the other query modes a caller's pool
// may use, quotes, backslashes and JSON's escapes in them.
func TestNamesInEveryQueryMode(t *testing.T) {
	for _, mode := range []string{"simple_protocol", "exec", "describe_exec", "cache_describe", "cache_statement"} {
		t.Run(mode, func(t *testing.T) {
			s := open(t, freshSchema(t)+"&default_query_exec_mode="+mode)
			name := `it's "a" \name\ ` + "\u2028 é <&>"
			labels := map[string]string{`k'"\`: `v'"\` + "\t\n", "app": "x", "é": ""}
			b := namedBatch(name, labels, 2)
			must(t, s.Append(bg, b))
			info, err := s.Lookup(bg, name)
			must(t, err)
			if info.ID != b.Info.ID || info.Name != name || !maps.Equal(info.Labels, labels) {
				t.Fatalf("Lookup: %s %q %q, want %s %q %q", info.ID, info.Name, info.Labels, b.Info.ID, name, labels)
			}
			if st := readAll(t, s, b.Info.ID); st.Info.Name != name || !maps.Equal(st.Info.Labels, labels) {
				t.Fatalf("Read: %q %q", st.Info.Name, st.Info.Labels)
			}
			must(t, s.Append(bg, namedBatch("other", map[string]string{"app": "x"}, 1)))
			n := 0
			for got, err := range s.List(bg, nous.ListOptions{Labels: map[string]string{`k'"\`: `v'"\` + "\t\n"}}) {
				must(t, err)
				if got.ID != b.Info.ID {
					t.Fatalf("List by labels yields %s", got.ID)
				}
				n++
			}
			if n != 1 {
				t.Fatalf("List by labels yields %d logs, want 1", n)
			}
			if err := s.Append(bg, namedBatch(name, nil, 1)); !errors.Is(err, nous.ErrConflict) {
				t.Fatalf("Append of a taken name: %v, want ErrConflict", err)
			}
		})
	}
}

// Replicas racing to create one name, each through a pool of its own,
// under every isolation level a database may default to: one wins, every
// other gets ErrConflict, and no loser leaves a row or an event.
func TestNamesRaceUnderEveryIsolation(t *testing.T) {
	for name, params := range isolations {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			var stores []*pgstore.Store
			for range 6 {
				stores = append(stores, open(t, dsn))
			}
			for round := range 10 {
				name := fmt.Sprint("session ", round)
				batches := make([]nous.Batch, len(stores))
				errs := make([]error, len(stores))
				var wg sync.WaitGroup
				for i, s := range stores {
					batches[i] = namedBatch(name, map[string]string{"racer": fmt.Sprint(i)}, 3)
					wg.Go(func() { errs[i] = s.Append(bg, batches[i]) })
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("round %d: racers %d and %d both created %q", round, winner, i, name)
					case err == nil:
						winner = i
					case !errors.Is(err, nous.ErrConflict):
						t.Fatalf("round %d: racer %d: %v, want nil or ErrConflict", round, i, err)
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: no racer created %q", round, name)
				}
				for i, b := range batches {
					logs, events := rowsOf(t, dsn, b.Info.ID)
					if i == winner && (logs != 1 || events != 3) || i != winner && (logs != 0 || events != 0) {
						t.Fatalf("round %d: racer %d (winner %d) left %d rows and %d events", round, i, winner, logs, events)
					}
				}
				if info, err := stores[len(stores)-1].Lookup(bg, name); err != nil || info.ID != batches[winner].Info.ID {
					t.Fatalf("round %d: Lookup: %v %v, want the winner %s", round, info.ID, err, batches[winner].Info.ID)
				}
			}
		})
	}
}

// A log created under a name while another replica deletes the log that
// held it: the new log is stored once the old one is gone, and conflicts
// before; never both are stored under it.
func TestNameRacingItsDelete(t *testing.T) {
	dsn := freshSchema(t)
	a, b := open(t, dsn), open(t, dsn)
	for round := range 20 {
		name := fmt.Sprint("reused ", round)
		old := namedBatch(name, nil, 1)
		must(t, a.Append(bg, old))
		next := namedBatch(name, nil, 2)
		var wg sync.WaitGroup
		var delErr, appendErr error
		wg.Go(func() { delErr = a.Delete(bg, old.Info.ID) })
		wg.Go(func() { appendErr = b.Append(bg, next) })
		wg.Wait()
		must(t, delErr)
		if appendErr != nil && !errors.Is(appendErr, nous.ErrConflict) {
			t.Fatalf("round %d: %v, want nil or ErrConflict", round, appendErr)
		}
		info, err := a.Lookup(bg, name)
		switch {
		case appendErr == nil && (err != nil || info.ID != next.Info.ID):
			t.Fatalf("round %d: the new log was stored, and Lookup finds %v %v", round, info.ID, err)
		case appendErr != nil && !errors.Is(err, nous.ErrNotFound):
			t.Fatalf("round %d: the new log conflicted, and Lookup finds %v %v", round, info.ID, err)
		}
		if logs, events := rowsOf(t, dsn, next.Info.ID); appendErr != nil && (logs != 0 || events != 0) {
			t.Fatalf("round %d: the refused log left %d rows and %d events", round, logs, events)
		}
	}
}

// plan returns the plan the server makes of query, prepared with
// parameters of types, run with args (SQL literals), as EXPLAIN writes it:
// a custom plan of the values, or the generic plan a prepared statement
// may come to use whatever its values.
func plan(t *testing.T, dsn string, generic bool, query, types, args string) string {
	t.Helper()
	conn := connect(t, dsn)
	mode := "force_custom_plan"
	if generic {
		mode = "force_generic_plan"
	}
	_, err := conn.Exec(bg, `SET plan_cache_mode = `+mode+`; PREPARE q(`+types+`) AS `+query)
	must(t, err)
	rows, err := conn.Query(bg, `EXPLAIN EXECUTE q(`+args+`)`, pgx.QueryExecModeSimpleProtocol)
	must(t, err)
	defer rows.Close()
	var out strings.Builder
	for rows.Next() {
		var line string
		must(t, rows.Scan(&line))
		out.WriteString(line + "\n")
	}
	must(t, rows.Err())
	return out.String()
}

// manyLogs inserts n logs into dsn's schema, named "log i" with labels
// app "app i%3" and user i, and has the server analyze the table.
func manyLogs(t *testing.T, dsn string, n int) {
	t.Helper()
	_, err := connect(t, dsn).Exec(bg, `INSERT INTO nous_logs (id, fork_seq, incarnation, head, state, created_at, updated_at, name, labels)
		SELECT gen_random_uuid(), 0, gen_random_uuid(), 0, '\x7b7d', now(), now(), 'log ' || i,
			jsonb_build_object('app', 'app ' || (i % 3), 'user', i::text)
		FROM generate_series(1, $1::int) i`, n)
	must(t, err)
	_, err = connect(t, dsn).Exec(bg, `ANALYZE nous_logs`)
	must(t, err)
}

// Lookup reads the unique index of the names, in the server's custom and
// generic plans alike, and List by labels the GIN index of the labels in
// the plan of its values, which is the one it runs with (see
// TestListByLabelsIsPlannedWithItsValues): a query of one log among many
// does not scan them.
func TestNamesAndLabelsUseTheirIndexes(t *testing.T) {
	dsn := freshSchema(t)
	open(t, dsn)
	manyLogs(t, dsn, 20000)
	for _, generic := range []bool{false, true} {
		if p := plan(t, dsn, generic, pgstore.LookupQuery, "text", "'log 77'"); !strings.Contains(p, "nous_logs_name") {
			t.Errorf("Lookup (generic plan %v) does not use the index of the names:\n%s", generic, p)
		}
	}
	p := plan(t, dsn, false, pgstore.ListLabeledQuery, "uuid, bigint, jsonb", `'`+uuid.Nil.String()+`', 100, '{"user":"77","app":"app 2"}'`)
	if !strings.Contains(p, "nous_logs_labels") {
		t.Errorf("List by labels does not use the index of the labels:\n%s", p)
	}
}

// List by labels is planned with its values every time, under every query
// mode of the caller's pool: a statement the server keeps prepared (pgx's
// default mode) would come to run with the generic plan, which walks every
// ID in order and filters the labels of each row.
func TestListByLabelsIsPlannedWithItsValues(t *testing.T) {
	dsn := freshSchema(t)
	open(t, dsn)
	manyLogs(t, dsn, 20000)
	for name, params := range map[string]string{
		"cache_statement":                       "default_query_exec_mode=cache_statement",
		"cache_statement, no description cache": "default_query_exec_mode=cache_statement&description_cache_capacity=0",
		"cache_describe":                        "default_query_exec_mode=cache_describe",
		"describe_exec":                         "default_query_exec_mode=describe_exec",
		"exec":                                  "default_query_exec_mode=exec",
		"simple_protocol":                       "default_query_exec_mode=simple_protocol",
	} {
		t.Run(name, func(t *testing.T) {
			pool, err := pgxpool.New(bg, dsn+"&pool_max_conns=1&"+params)
			must(t, err)
			defer pool.Close()
			s, err := pgstore.New(bg, pool)
			must(t, err)
			defer s.Close()
			for i := range 12 {
				user := fmt.Sprint(3*i + 2)
				n := 0
				for info, err := range s.List(bg, nous.ListOptions{Labels: map[string]string{"app": "app 2", "user": user}}) {
					must(t, err)
					if info.Name != "log "+user {
						t.Fatalf("List of user %s yields %q", user, info.Name)
					}
					n++
				}
				if n != 1 {
					t.Fatalf("List of user %s yields %d logs, want 1", user, n)
				}
			}
			var generic int
			must(t, pool.QueryRow(bg, `SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements WHERE statement LIKE '%labels @>%'
				AND statement NOT LIKE '%pg_prepared_statements%'`).Scan(&generic))
			if generic != 0 {
				t.Fatalf("List by labels ran %d times with a generic plan", generic)
			}
		})
	}
}
