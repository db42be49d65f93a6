package pgstore_test

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/nous-go/nous/pgstore"
)

var (
	bg    = context.Background()
	quiet = slog.New(slog.DiscardHandler)
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

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
	conn := connect(t, dsn)
	name := "nous_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	_, err := conn.Exec(bg, "CREATE SCHEMA "+name)
	must(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(bg, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(bg)
		if _, err := conn.Exec(bg, "DROP SCHEMA "+name+" CASCADE"); err != nil {
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

// connect opens a connection to dsn of its own, closed when t ends.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(bg, dsn)
	must(t, err)
	t.Cleanup(func() { conn.Close(bg) })
	return conn
}

// schemaOf returns the first schema of dsn's search_path.
func schemaOf(t testing.TB, dsn string) string {
	t.Helper()
	var name string
	must(t, connect(t, dsn).QueryRow(bg, `SELECT current_schema()`).Scan(&name))
	return name
}

// open opens a store on dsn, closed when t ends.
func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(bg, dsn)
	must(t, err)
	t.Cleanup(s.Close)
	return s
}

// openAtOnce opens dsn from n goroutines at once, closing each store
// opened, and returns their errors.
func openAtOnce(dsn string, n int) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.Open(bg, dsn)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}
