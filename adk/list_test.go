package nousadk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/adk/v2/session"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/storetest"
)

// errUnreadable is the error of a log a test store cannot read.
var errUnreadable = errors.New("unreadable")

// damaging is a store whose Reads of log bad fail, or, with last set,
// return its last event as bytes that are no JSON.
type damaging struct {
	nous.Store
	bad  uuid.UUID
	last bool
}

func (s *damaging) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	if err != nil || id != s.bad {
		return st, err
	}
	if !s.last {
		return nous.Stored{}, errUnreadable
	}
	if n := len(st.Events); n > 0 {
		st.Events[n-1] = []byte("{damaged")
	}
	return st, nil
}

// List fails, naming the app or the session, when the app's or the user's
// state does not read, and when a session's last event does not read: as
// a nous event, or as an ADK event. It does not skip the session.
func TestListErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string // the log damaged
		last bool   // its last event damaged, else the whole log unreadable
		raw  bool   // the last event's ADK JSON damaged, through nous
		want error
		says string
	}{
		{name: "app state unreadable", log: `adk app 3:app`, want: errUnreadable, says: `list the sessions of app "app"`},
		{name: "user state unreadable", log: `adk user 3:app ann`, want: errUnreadable, says: `session "s" of app "app", user "ann"`},
		{name: "an ADK session log whose last event is no JSON", log: `adk session 3:app 3:ann s`, last: true, want: nous.ErrCorrupt, says: `session "s" of app "app", user "ann"`},
		{name: "an ADK session log whose last event is no ADK event", log: `adk session 3:app 3:ann s`, raw: true, want: nous.ErrCorrupt, says: "does not read back as an ADK event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := storetest.NewMemory()
			svc := nousadk.NewSessionService(mem)
			sess := mustCreate(t, svc, "app", "ann", "s", map[string]any{"app:theme": "dark", "user:lang": "fr"})
			if err := svc.AppendEvent(bg, sess, &session.Event{ID: "e1", Author: "user"}); err != nil {
				t.Fatal(err)
			}
			info, err := mem.Lookup(bg, tc.log)
			if err != nil {
				t.Fatal(err)
			}
			store := nous.Store(mem)
			if tc.raw {
				c, err := nous.Load(bg, mem, info.ID)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.LogEvent(nous.EventRuntime, map[string]any{"adk_event": `{"id": 7}`}); err != nil {
					t.Fatal(err)
				}
				if err := c.Save(bg, mem); err != nil {
					t.Fatal(err)
				}
			} else {
				store = &damaging{Store: mem, bad: info.ID, last: tc.last}
			}
			r, err := nousadk.NewSessionService(store).List(bg, &session.ListRequest{AppName: "app"})
			if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Errorf("List: %v, %v; want an error wrapping %v that says %q", r, err, tc.want, tc.says)
			}
		})
	}
}
