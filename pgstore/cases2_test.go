package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// A call on a closed Store reports ErrClosed, as its doc says.
func TestCaseCallAfterClose(t *testing.T) {
	dsn := freshSchema(t)
	s, err := pgstore.Open(bg, dsn)
	must(t, err)
	s.Close()
	id := uuid.Must(uuid.NewV7())
	if err := s.Append(bg, firstBatch(id, uuid.New(), 1, nil)); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Append after Close (Open): %v, want ErrClosed", err)
	}
	pool, err := pgxpool.New(bg, dsn)
	must(t, err)
	defer pool.Close()
	s2, err := pgstore.New(bg, pool)
	must(t, err)
	s2.Close()
	if err := s2.Append(bg, firstBatch(id, uuid.New(), 1, nil)); !errors.Is(err, pgstore.ErrClosed) {
		t.Errorf("Append after Close (New): %v, want ErrClosed", err)
	}
}

// An application role with DML rights on existing tables, but no CREATE
// on the schema, opens a store whose schema is already there.
func TestCaseOpenWithoutDDLRights(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	_ = s
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	defer conn.Close(bg)
	var schema string
	must(t, conn.QueryRow(bg, `SELECT current_schema()`).Scan(&schema))
	role := "nous_app_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role,
	} {
		_, err := conn.Exec(bg, q)
		must(t, err)
	}
	t.Cleanup(func() {
		c, _ := pgx.Connect(bg, dsn)
		defer c.Close(bg)
		c.Exec(bg, `DROP OWNED BY `+role)
		c.Exec(bg, `DROP ROLE `+role)
	})
	u, _ := url.Parse(dsn)
	u.User = url.User(role)
	app, err := pgstore.Open(bg, u.String())
	if err != nil {
		t.Fatalf("Open as a DML-only role of an existing schema: %v", err)
	}
	defer app.Close()
}

// A Store from New that watched keeps a server connection beyond the
// pool's MaxConns after its last watch ended, and after the caller closed
// the pool when the Store was never closed.
func TestCaseListenerOutlivesWatches(t *testing.T) {
	dsn := freshSchema(t)
	pool, err := pgxpool.New(bg, dsn+"&pool_max_conns=1&application_name=revlisten")
	must(t, err)
	s, err := pgstore.New(bg, pool)
	must(t, err)
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1, nil)))
	for _, err := range s.Watch(bg, id, 0) {
		must(t, err)
		break
	}
	pool.Close() // the caller is done; s is never closed
	time.Sleep(300 * time.Millisecond)
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	defer conn.Close(bg)
	var n int
	must(t, conn.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'revlisten'`).Scan(&n))
	if n != 0 {
		t.Fatalf("%d connections of the closed pool left open (a watch ended, the pool closed)", n)
	}
}

// Many watchers on several logs, through two Stores, follow a writer
// across a server restart, each seeing every seq once, promptly.
func TestCaseManyWatchersRestart(t *testing.T) {
	ctl := os.Getenv("NOUS_TEST_POSTGRES_CTL")
	if ctl == "" {
		t.Skip("no ctl")
	}
	dsn := freshSchema(t)
	w1, w2, wr := open(t, dsn), open(t, dsn), open(t, dsn)
	const logs, watchers = 3, 10
	ids := make([]uuid.UUID, logs)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
		must(t, wr.Append(bg, firstBatch(ids[i], uuid.New(), 1, nil)))
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	type seen struct {
		mu   sync.Mutex
		seqs []int64
		err  error
	}
	all := make([]*seen, logs*watchers)
	for i := range all {
		all[i] = &seen{}
		s := w1
		if i%2 == 1 {
			s = w2
		}
		go func(sn *seen, id uuid.UUID) {
			for e, err := range s.Watch(ctx, id, 0) {
				sn.mu.Lock()
				if err != nil {
					sn.err = err
					sn.mu.Unlock()
					return
				}
				sn.seqs = append(sn.seqs, e.Seq)
				sn.mu.Unlock()
			}
		}(all[i], ids[i%logs])
	}
	heads := make([]int64, logs)
	done := make(chan error, 1)
	for i := 0; i < 300; i++ {
		if i == 30 {
			go func() { done <- exec.Command(ctl, "restart", "-m", "fast").Run() }()
		}
		k := i % logs
		for {
			st, err := wr.Read(bg, ids[k], nous.Position{})
			if err == nil {
				err = wr.Append(bg, nextBatch(st, 1, 0, nil))
				if err == nil || errors.Is(err, nous.ErrConflict) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	must(t, <-done)
	for k := range heads {
		heads[k] = readAll(t, wr, ids[k]).Info.Head
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, sn := range all {
		want := heads[i%logs]
		for {
			sn.mu.Lock()
			n, err := len(sn.seqs), sn.err
			var bad bool
			for j, q := range sn.seqs {
				bad = bad || q != int64(j+1)
			}
			sn.mu.Unlock()
			if bad || err != nil {
				t.Fatalf("watcher %d: %v seqs %v", i, err, sn.seqs)
			}
			if int64(n) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("watcher %d saw %d of %d", i, n, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
