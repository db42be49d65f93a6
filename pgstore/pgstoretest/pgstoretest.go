// Package pgstoretest gives tests a PostgreSQL of their own to run a
// pgstore on: the server NOUS_TEST_POSTGRES_DSN names, a schema made for
// each test and dropped when it ends, so that tests run side by side on
// one server and each starts empty.
//
//	store, err := pgstore.Open(ctx, pgstoretest.Schema(t)) // skips t without a server
package pgstoretest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Env is the variable that names the test server: a postgres:// URL.
const Env = "NOUS_TEST_POSTGRES_DSN"

// DSN returns the test server's DSN, or skips tb, saying how to run the
// tests, when Env is not set.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		tb.Skip(Env + " is not set: run these tests against a PostgreSQL server with " +
			Env + "=postgres://user@host:port/db go test ./..., or with .ci/with-postgres go test ./... " +
			"(from the repository's root, ../.ci/with-postgres from a module), which starts a throwaway server")
	}
	return dsn
}

// Schema creates a schema of its own on the test server, dropped with all
// it holds when tb ends, and returns the server's DSN with its search_path
// set to it. Without a server it skips tb, as DSN does.
func Schema(tb testing.TB) string {
	tb.Helper()
	dsn := DSN(tb)
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("%s must be a URL: %v", Env, err)
	}
	ctx := context.Background()
	name := "nous_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if err := exec(ctx, dsn, "CREATE SCHEMA "+name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := exec(ctx, dsn, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			tb.Error(err)
		}
	})
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs sql on a connection of its own to dsn.
func exec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
