package nousadk_test

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/storetest"
)

// The stores the service runs over: each call gives a new, empty one.
var stores = map[string]func(t *testing.T) nous.Store{
	"memory": func(t *testing.T) nous.Store { return storetest.NewMemory() },
	"filestore": func(t *testing.T) nous.Store {
		s, err := filestore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
	"pgstore": func(t *testing.T) nous.Store {
		s, err := pgstore.Open(context.Background(), freshSchema(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	},
}

// ADK's own conformance suite of session services, over each store.
func TestADKSuite(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
				func(t *testing.T) session.Service { return nousadk.NewSessionService(open(t)) })
		})
	}
}

// freshSchema returns the DSN of a schema of the test server of its own,
// dropped when t ends, or skips t without a server.
func freshSchema(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("NOUS_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("NOUS_TEST_POSTGRES_DSN is not set: run these tests against a PostgreSQL server with " +
			"NOUS_TEST_POSTGRES_DSN=postgres://user@host:port/db go test ./..., or with ../.ci/with-postgres go test ./..., " +
			"which starts a throwaway server")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := "nousadk_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("NOUS_TEST_POSTGRES_DSN must be a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
