package nousadk_test

import (
	"context"
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/pgstore/pgstoretest"
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
		s, err := pgstore.Open(context.Background(), pgstoretest.Schema(t))
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
