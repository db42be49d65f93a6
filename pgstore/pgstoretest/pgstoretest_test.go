package pgstoretest_test

import (
	"context"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/pgstore/pgstoretest"
)

// Each test gets a schema of its own, whose store starts empty.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	seen := map[string]bool{}
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			dsn := pgstoretest.Schema(t)
			if seen[dsn] {
				t.Fatalf("two tests got one schema: %s", dsn)
			}
			seen[dsn] = true
			s, err := pgstore.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := nous.NewContext(nous.WithLogName("only here"))
			if err := c.AddMessage(nous.UserMessage("hi")); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(ctx, s); err != nil {
				t.Fatal(err) // the name is free in a new schema
			}
			n := 0
			for _, err := range s.List(ctx, nous.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 1 {
				t.Fatalf("the schema's store holds %d logs, want 1", n)
			}
		})
	}
}
