package nousadk_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"

	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/storetest"
)

// The retry of an append whose reply was lost ends on a Session read with
// NumRecentEvents or After as on one read whole: on the Session the
// append was made on, it succeeds with the event in place; on one read
// since, filtered alike, it adds nothing; then the next append succeeds.
func TestLostReplyRetriedOnFilteredSession(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		name string
		req  session.GetRequest
		want int // the events of the filtered Session before the append
	}{
		{"NumRecentEvents", session.GetRequest{NumRecentEvents: 2}, 2},
		{"After", session.GetRequest{After: at.Add(3 * time.Second)}, 2},
		{"both", session.GetRequest{NumRecentEvents: 1, After: at.Add(2 * time.Second)}, 1},
		{"NumRecentEvents past the session's", session.GetRequest{NumRecentEvents: 10}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &lossy{Store: storetest.NewMemory()}
			svc := nousadk.NewSessionService(store)
			sess := mustCreate(t, svc, "app", "u", "s", nil)
			for i := range 5 {
				if err := svc.AppendEvent(bg, sess, &session.Event{ID: fmt.Sprint("e", i), Author: "user", Timestamp: at.Add(time.Duration(i) * time.Second)}); err != nil {
					t.Fatal(err)
				}
			}
			get := func() session.Session {
				t.Helper()
				req := tc.req
				req.AppName, req.UserID, req.SessionID = "app", "u", "s"
				r, err := svc.Get(bg, &req)
				if err != nil {
					t.Fatal(err)
				}
				return r.Session
			}
			filtered := get()
			if filtered.Events().Len() != tc.want {
				t.Fatalf("the filtered Session has %v", eventIDs(filtered))
			}
			before := eventIDs(filtered)
			ev := &session.Event{ID: "lost", Author: "model", Timestamp: at.Add(time.Minute), Actions: session.EventActions{StateDelta: map[string]any{"k": "v"}}}
			store.lose = true
			if err := svc.AppendEvent(bg, filtered, ev); err == nil {
				t.Fatal("the lost reply was not an error")
			}
			if err := svc.AppendEvent(bg, filtered, ev); err != nil {
				t.Fatalf("the retry on the Session the append was made on: %v", err)
			}
			if got := eventIDs(filtered); fmt.Sprint(got) != fmt.Sprint(append(before, "lost")) || state(filtered)["k"] != "v" {
				t.Errorf("that Session: %v, state %v", got, state(filtered))
			}
			fresh := get()
			if err := svc.AppendEvent(bg, fresh, ev); err != nil {
				t.Fatalf("the retry on a Session read since, filtered alike: %v", err)
			}
			if got := eventIDs(fresh); got[len(got)-1] != "lost" {
				t.Errorf("the Session read since: %v", got)
			}
			if err := svc.AppendEvent(bg, filtered, &session.Event{ID: "next1", Author: "user", Timestamp: at.Add(2 * time.Minute)}); err != nil {
				t.Errorf("the next append on the Session the append was made on: %v", err)
			}
			since := get()
			if err := svc.AppendEvent(bg, since, ev); err != nil {
				t.Errorf("the retry on a Session read after the event and another: %v", err)
			}
			if err := svc.AppendEvent(bg, since, &session.Event{ID: "next2", Author: "user", Timestamp: at.Add(3 * time.Minute)}); err != nil {
				t.Errorf("the next append on that Session: %v", err)
			}
			got := eventIDs(mustGet(t, nousadk.NewSessionService(store.Store), "app", "u", "s"))
			if fmt.Sprint(got) != "[e0 e1 e2 e3 e4 lost next1 next2]" {
				t.Errorf("stored %v", got)
			}
		})
	}
}
