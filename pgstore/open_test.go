package pgstore_test

import (
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// isolations are the default isolation levels a database may have, as
// parameters to add to a DSN.
var isolations = map[string]string{
	"read committed":  "",
	"repeatable read": "&default_transaction_isolation=repeatable%20read",
	"serializable":    "&default_transaction_isolation=serializable",
}

// Processes opening a new database at once all succeed and create the
// schema once, whatever the database's default isolation: the schema is
// made at READ COMMITTED, so the opener that waited for the lock sees the
// winner's version row.
func TestConcurrentOpensCreateTheSchemaOnce(t *testing.T) {
	for name, params := range isolations {
		t.Run(name, func(t *testing.T) {
			dsn := freshSchema(t) + params
			for i, err := range openAtOnce(dsn, 8) {
				if err != nil {
					t.Errorf("open %d of 8: %v", i, err)
				}
			}
			var rows, version int
			must(t, connect(t, dsn).QueryRow(bg, `SELECT count(*), max(version) FROM nous_schema`).Scan(&rows, &version))
			if rows != 1 || version != pgstore.SchemaVersion {
				t.Errorf("nous_schema has %d rows, version %d; want 1 row, version %d", rows, version, pgstore.SchemaVersion)
			}
			checkSchema(t, dsn)
		})
	}
}

// Opens in many new schemas at once, and two in each, all succeed.
func TestOpensInManySchemasAtOnce(t *testing.T) {
	var dsns []string
	for range 12 {
		d := freshSchema(t)
		dsns = append(dsns, d, d)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(dsns))
	for i, d := range dsns {
		wg.Go(func() {
			s, err := pgstore.Open(bg, d)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
}

// A schema of a version this package does not know is refused.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := freshSchema(t)
	open(t, dsn)
	_, err := connect(t, dsn).Exec(bg, `UPDATE nous_schema SET version = $1`, pgstore.SchemaVersion+1)
	must(t, err)
	if s, err := pgstore.Open(bg, dsn); !errors.Is(err, pgstore.ErrSchema) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open of a newer schema: %v, want ErrSchema", err)
	}
}

// An application role with DML rights on existing tables, but no CREATE
// on the schema, opens a store whose schema is already there.
func TestOpenWithoutDDLRights(t *testing.T) {
	dsn := freshSchema(t)
	open(t, dsn)
	conn := connect(t, dsn)
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
		c, err := pgx.Connect(bg, dsn)
		if err != nil {
			t.Error(err)
			return
		}
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

// The tables are those of the first schema of the search_path: with
// search_path=tenant,shared where shared holds another store's tables, the
// tenant's store makes and uses its own.
func TestTablesOfTheFirstSchemaInSearchPath(t *testing.T) {
	shared := freshSchema(t)
	other := open(t, shared) // a store whose tables are in "shared"
	sharedName := schemaOf(t, shared)
	tenant := freshSchema(t)
	tenantName := schemaOf(t, tenant)
	s := open(t, withSearchPath(t, serverDSN(t), tenantName+","+sharedName))
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 1)))
	if _, err := other.Read(bg, id, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("a log saved through search_path=%s,%s is in the tables of %s, another store's (%v)", tenantName, sharedName, sharedName, err)
	}
	var there bool
	must(t, connect(t, tenant).QueryRow(bg, `SELECT to_regclass($1) IS NOT NULL`, tenantName+".nous_logs").Scan(&there))
	if !there {
		t.Errorf("no nous_logs in %s, the first schema of the search_path", tenantName)
	}
}

// New with a nil pool is an error, not a panic.
func TestNewNilPoolIsError(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("New(ctx, nil) panicked: %v", r)
		}
	}()
	s, err := pgstore.New(bg, nil)
	if err == nil {
		s.Close()
		t.Fatal("New(ctx, nil) returned no error")
	}
}

// New uses the caller's pool, which Close leaves open.
func TestNewLeavesThePool(t *testing.T) {
	pool, err := pgxpool.New(bg, freshSchema(t))
	must(t, err)
	defer pool.Close()
	s, err := pgstore.New(bg, pool)
	must(t, err)
	s.Close()
	must(t, pool.Ping(bg))
}
