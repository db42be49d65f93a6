package nousadk_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/adk/v2/session"

	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/storetest"
)

// asDecoded returns v as ADK's database service gives a state value it
// read: v's JSON decoded by encoding/json into an any.
func asDecoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// State values come back as ADK's database service gives them, every
// number a float64, whether this service set them or read them from the
// store, from Get and from List, in the session's scope, the user's and
// the app's; the Sessions Create and AppendEvent return hold what the
// caller gave.
func TestStateValuesAsJSONDecodes(t *testing.T) {
	values := map[string]any{
		"int":        3,
		"int64":      int64(1<<53 + 1),
		"uint8":      uint8(7),
		"float32":    float32(0.1),
		"float64":    2.5,
		"number":     json.Number("12"),
		"nested":     map[string]any{"n": 1, "list": []any{2, map[string]any{"m": int32(3)}}},
		"ints":       []int{1, 2},
		"typed_map":  map[string]int{"a": 1},
		"struct":     struct{ N int }{N: 4},
		"nil":        nil,
		"bytes":      []byte("hi"),
		"nil_map":    map[string]any(nil),
		"string":     "s",
		"bool":       true,
		"empty_list": []any{},
	}
	store := storetest.NewMemory()
	svc := nousadk.NewSessionService(store)
	created := map[string]any{}
	delta := map[string]any{}
	for name, v := range values {
		for _, scope := range []string{"", "app:", "user:"} {
			created[scope+"c_"+name] = v
			delta[scope+"d_"+name] = v
		}
	}
	sess := mustCreate(t, svc, "app", "u", "s", created)
	for k, v := range created {
		if got, _ := sess.State().Get(k); !reflect.DeepEqual(got, v) {
			t.Errorf("the created Session's %s = %#v, want %#v as given", k, got, v)
		}
	}
	if err := svc.AppendEvent(bg, sess, &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: delta}}); err != nil {
		t.Fatal(err)
	}
	for k, v := range delta {
		if got, _ := sess.State().Get(k); !reflect.DeepEqual(got, v) {
			t.Errorf("the Session appended to: %s = %#v, want %#v as given", k, got, v)
		}
	}
	for name, s := range map[string]*nousadk.SessionService{"this service": svc, "a new one": nousadk.NewSessionService(store)} {
		got := map[string]session.Session{"Get": mustGet(t, s, "app", "u", "s")}
		r, err := s.List(bg, &session.ListRequest{AppName: "app", UserID: "u"})
		if err != nil || len(r.Sessions) != 1 {
			t.Fatalf("%s: List: %v, %d sessions", name, err, len(r.Sessions))
		}
		got["List"] = r.Sessions[0]
		for call, sess := range got {
			st := state(sess)
			for _, m := range []map[string]any{created, delta} {
				for k, v := range m {
					want := asDecoded(t, v)
					if !reflect.DeepEqual(st[k], want) {
						t.Errorf("%s, %s: %s = %#v (%T), want %#v (%T)", name, call, k, st[k], st[k], want, want)
					}
				}
			}
			if len(st) != 2*len(created) {
				t.Errorf("%s, %s: %d keys, want %d", name, call, len(st), 2*len(created))
			}
		}
	}
}
