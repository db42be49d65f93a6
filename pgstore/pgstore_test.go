package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/storetest"
)

// serverDSN returns the DSN of the test server, or skips t without one.
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("NOUS_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("NOUS_TEST_POSTGRES_DSN is not set: run these tests against a PostgreSQL server with " +
			"NOUS_TEST_POSTGRES_DSN=postgres://user@host:port/db go test ./..., or with .ci/with-postgres go test ./... " +
			"from the repository's root, which starts a throwaway server")
	}
	return dsn
}

// freshSchema creates a schema of its own for t, dropped when t ends, and
// returns a DSN whose search_path is it.
func freshSchema(t testing.TB) string {
	t.Helper()
	dsn := serverDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := "nous_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return withSearchPath(t, dsn, name)
}

// withSearchPath returns dsn, a URL, with its search_path set to schema.
func withSearchPath(t testing.TB, dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("NOUS_TEST_POSTGRES_DSN must be a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// open opens a store on dsn, closed when t ends.
func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	serverDSN(t)
	dsns := map[nous.Store]string{}
	storetest.Run(t, func(t *testing.T) nous.Store {
		dsn := freshSchema(t)
		s := open(t, dsn)
		dsns[s] = dsn
		return s
	}, storetest.WithReopen(func(t *testing.T, s nous.Store) nous.Store {
		s.(*pgstore.Store).Close()
		again := open(t, dsns[s])
		dsns[again] = dsns[s]
		return again
	}))
}

var quiet = slog.New(slog.DiscardHandler)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// same fails unless a and b serialize to the same bytes.
func same(t testing.TB, a, b *nous.Context) {
	t.Helper()
	x, err := a.Serialize()
	must(t, err)
	y, err := b.Serialize()
	must(t, err)
	if !bytes.Equal(x, y) {
		t.Fatalf("contexts differ:\n%s\n%s", x, y)
	}
}

// turn adds one turn to c: a user message, an assistant message with a
// tool call, a state change and the tool's result.
func turn(t testing.TB, c *nous.Context, i int) {
	t.Helper()
	call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "lookup", Arguments: json.RawMessage(`{"q":1}`)}
	must(t, c.AddMessages(nous.UserMessage(fmt.Sprint("question ", i)), nous.AssistantMessage("", call)))
	c.Iteration++
	must(t, c.AddMessage(nous.ToolMessage(call.ID, call.Name, fmt.Sprint("result ", i))))
}

// counter counts the statements a pool sends.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A save, a load and a refresh are one statement each: one round trip.
func TestOneStatementEach(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(freshSchema(t))
	must(t, err)
	var n counter
	cfg.ConnConfig.Tracer = &n
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	must(t, err)
	defer pool.Close()
	s, err := pgstore.New(ctx, pool)
	must(t, err)
	defer s.Close()
	c := nous.NewContext(nous.WithLogger(quiet))
	turn(t, c, 0)
	count := func(what string, op func() error) {
		t.Helper()
		before := n.n.Load()
		must(t, op())
		if got := n.n.Load() - before; got != 1 {
			t.Errorf("%s sent %d statements, want 1", what, got)
		}
	}
	count("the first save", func() error { return c.Save(ctx, s) })
	turn(t, c, 1)
	count("a save", func() error { return c.Save(ctx, s) })
	var loaded *nous.Context
	count("a load", func() (err error) { loaded, err = nous.Load(ctx, s, c.Log().ID()); return err })
	turn(t, c, 2)
	count("a save", func() error { return c.Save(ctx, s) })
	count("a refresh", func() error { return loaded.Refresh(ctx, s) })
	same(t, c, loaded)
}

// Event bodies come back byte for byte: a NUL, keys in an order no writer
// of this package would choose, spacing, a number too large for a float.
func TestExactBytes(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	s := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	events := []json.RawMessage{
		json.RawMessage(`{"message":{"content":"a\u0000b","role":"user"},  "type":"message","seq":1,"created_at":"2026-11-30T12:00:00.123456789Z"}`),
		json.RawMessage(`{"seq":2,"type":"turn_start","created_at":"2026-11-30T12:00:01Z","data":{"z":1,"a":123456789012345678901234567890}}`),
	}
	state := []byte(`{"version":2,  "deps":{"b":"\u0000","a":1.50}}`)
	calls := []json.RawMessage{json.RawMessage(`{"name":"f","id":"x","arguments":"not an object"}`)}
	b := nous.Batch{
		Info:  nous.LogInfo{ID: id, Head: 2, Revision: 1, Incarnation: uuid.New(), UpdatedAt: time.Now()},
		State: state, ToolCalls: calls, Events: events,
	}
	must(t, s.Append(ctx, b))
	st, err := s.Read(ctx, id, nous.Position{})
	must(t, err)
	if !bytes.Equal(st.State, state) || len(st.Events) != 2 || len(st.ToolCalls) != 1 || !bytes.Equal(st.ToolCalls[0], calls[0]) {
		t.Fatalf("read %s %q %q", st.State, st.Events, st.ToolCalls)
	}
	for i := range events {
		if !bytes.Equal(st.Events[i], events[i]) {
			t.Errorf("event %d: read %s, stored %s", i+1, st.Events[i], events[i])
		}
	}
	var typ string
	var at time.Time
	pool, err := pgxpool.New(ctx, dsn)
	must(t, err)
	defer pool.Close()
	must(t, pool.QueryRow(ctx, `SELECT type, created_at FROM nous_events WHERE log_id = $1 AND seq = 1`, id).Scan(&typ, &at))
	if typ != "message" || !at.Equal(time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC)) {
		t.Errorf("columns type %q, created_at %v", typ, at)
	}
}

// Processes opening a new database at once all succeed, and the schema is
// created once; a schema of a version this package does not know is
// refused.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	errs := openAtOnce(dsn, 8)
	for _, err := range errs {
		must(t, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	must(t, err)
	defer conn.Close(ctx)
	var rows int
	must(t, conn.QueryRow(ctx, `SELECT count(*) FROM nous_schema`).Scan(&rows))
	if rows != 1 {
		t.Fatalf("nous_schema has %d rows, want 1", rows)
	}
	_, err = conn.Exec(ctx, `UPDATE nous_schema SET version = $1`, pgstore.SchemaVersion+1)
	must(t, err)
	if _, err := pgstore.Open(ctx, dsn); !errors.Is(err, pgstore.ErrSchema) {
		t.Fatalf("Open of a newer schema: %v, want ErrSchema", err)
	}
}

// New uses the caller's pool, which Close leaves open.
func TestNewLeavesThePool(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, freshSchema(t))
	must(t, err)
	defer pool.Close()
	s, err := pgstore.New(ctx, pool)
	must(t, err)
	s.Close()
	must(t, pool.Ping(ctx))
}

// Two replicas, each with its own pool, serve turns of one session: each
// brings its context up to date with Refresh, adds a turn and saves, and
// retries on a conflict. Every turn is stored once, in some order, with no
// gap; the watcher of a third replica sees each event once.
func TestReplicas(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	a, b, watcher := open(t, dsn), open(t, dsn), open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.Save(ctx, a))
	id := c.Log().ID()
	const turns = 20
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	seen := make(chan int64, 1000)
	go func() {
		defer close(seen)
		for e, err := range watcher.Watch(watchCtx, id, 0) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	var next atomic.Int64
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for _, s := range []*pgstore.Store{a, b, a, b} {
		wg.Go(func() {
			mine, err := nous.Load(ctx, s, id)
			if err != nil {
				t.Error(err)
				return
			}
			for {
				n := next.Add(1)
				if n > turns {
					return
				}
				for {
					if err := mine.Refresh(ctx, s); err != nil {
						t.Error(err)
						return
					}
					turn(t, mine, int(n))
					err := mine.Save(ctx, s)
					if err == nil {
						break
					}
					if !errors.Is(err, nous.ErrConflict) {
						t.Error(err)
						return
					}
					conflicts.Add(1)
					if mine, err = nous.Load(ctx, s, id); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	final, err := nous.Load(ctx, b, id)
	must(t, err)
	got := map[string]int{}
	for _, m := range final.All() {
		got[m.Content]++
	}
	for i := 1; i <= turns; i++ {
		if q := fmt.Sprint("question ", i); got[q] != 1 {
			t.Errorf("%q stored %d times", q, got[q])
		}
	}
	want := int64(final.Log().Len())
	for seq := int64(1); seq <= want; seq++ {
		select {
		case s := <-seen:
			if s != seq {
				t.Fatalf("watched seq %d, want %d", s, seq)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("watched up to seq %d of %d", seq-1, want)
		}
	}
	t.Logf("%d turns, %d conflicts", turns, conflicts.Load())
}

// A save racing a delete of its log leaves no events behind: the log is
// gone whole, or the save came after it and conflicts.
func TestDeleteRacingSaves(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	s := open(t, dsn)
	for round := range 20 {
		c := nous.NewContext(nous.WithLogger(quiet))
		turn(t, c, 0)
		must(t, c.Save(ctx, s))
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 1; i < 10; i++ {
				turn(t, c, i)
				if err := c.Save(ctx, s); err != nil {
					if !errors.Is(err, nous.ErrNotFound) {
						t.Errorf("round %d: save: %v", round, err)
					}
					return
				}
			}
		})
		time.Sleep(time.Duration(round) * time.Millisecond)
		must(t, s.Delete(ctx, c.Log().ID()))
		wg.Wait()
	}
	conn, err := pgx.Connect(ctx, dsn)
	must(t, err)
	defer conn.Close(ctx)
	var orphans int
	must(t, conn.QueryRow(ctx, `SELECT count(*) FROM nous_events e WHERE NOT EXISTS (SELECT 1 FROM nous_logs l WHERE l.id = e.log_id)`).Scan(&orphans))
	if orphans != 0 {
		t.Fatalf("%d events of deleted logs are left", orphans)
	}
}

// Close ends a Watch with ErrClosed; a log deleted, or deleted and saved
// again, ends it with ErrNotFound.
func TestWatchEnds(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	s := open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	turn(t, c, 0)
	data, err := c.Serialize()
	must(t, err)
	must(t, c.Save(ctx, s))
	ended := func(s *pgstore.Store, act func()) error {
		errc := make(chan error, 1)
		go func() {
			for _, err := range s.Watch(ctx, c.Log().ID(), 0) {
				if err != nil {
					errc <- err
					return
				}
			}
		}()
		time.Sleep(100 * time.Millisecond)
		act()
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not end")
			return nil
		}
	}
	other, err := pgstore.Open(ctx, dsn)
	must(t, err)
	if err := ended(other, other.Close); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Close: the watch ended with %v, want ErrClosed", err)
	}
	recreate := func() {
		must(t, s.Delete(ctx, c.Log().ID()))
		again, err := nous.DeserializeWithLogger(data, quiet)
		must(t, err)
		turn(t, again, 1)
		must(t, again.Save(ctx, s))
	}
	if err := ended(s, recreate); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("deleted and saved again: the watch ended with %v, want ErrNotFound", err)
	}
	if err := ended(s, func() { must(t, s.Delete(ctx, c.Log().ID())) }); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("deleted: the watch ended with %v, want ErrNotFound", err)
	}
}

// The server restarts in the middle of a save loop: saves fail with an
// error and store nothing partial; once it is back they go on, through
// the same Store, and retrying a failed save stores nothing twice. A
// watcher through another Store follows the whole run, missing nothing.
func TestServerRestart(t *testing.T) {
	ctl := os.Getenv("NOUS_TEST_POSTGRES_CTL")
	if ctl == "" {
		t.Skip("NOUS_TEST_POSTGRES_CTL is not set: it names a command that restarts the test server (.ci/with-postgres sets it)")
	}
	ctx := context.Background()
	dsn := freshSchema(t)
	s, watcher := open(t, dsn), open(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.Save(ctx, s))
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	seen := make(chan int64, 10000)
	go func() {
		defer close(seen)
		for e, err := range watcher.Watch(watchCtx, c.Log().ID(), 0) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	restarted := make(chan error, 1)
	failures := 0
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < 400 || restarted != nil; i++ {
		if i == 50 {
			go func() {
				out, err := exec.Command(ctl, "restart", "-m", "fast").CombinedOutput()
				if err != nil {
					err = fmt.Errorf("%v: %s", err, out)
				}
				restarted <- err
			}()
		}
		select {
		case err := <-restarted:
			must(t, err)
			restarted = nil
		default:
		}
		turn(t, c, i)
		for {
			err := c.Save(ctx, s)
			if err == nil {
				break
			}
			if failures++; time.Now().After(deadline) {
				t.Fatalf("saves still fail: %v", err)
			}
			if errors.Is(err, nous.ErrConflict) {
				t.Fatalf("a retried save conflicts: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if failures == 0 {
		t.Fatal("no save failed: the server did not restart during the loop")
	}
	loaded, err := nous.Load(ctx, s, c.Log().ID())
	must(t, err)
	same(t, c, loaded)
	want := int64(c.Log().Len())
	for seq := int64(1); seq <= want; seq++ {
		select {
		case got := <-seen:
			if got != seq {
				t.Fatalf("watched seq %d, want %d", got, seq)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("watched up to seq %d of %d", seq-1, want)
		}
	}
	t.Logf("%d saves failed while the server restarted", failures)
}
