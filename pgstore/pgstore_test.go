package pgstore_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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

var _ = fmt.Sprint
