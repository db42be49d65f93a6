package nousadk_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/adk/v2/session"

	nousadk "github.com/nous-go/nous/adk"
)

// An "app:" or "user:" secret, set by Create or by an event, stays in
// this process's sessions, the user's other sessions included, and after
// another service's update of its scope; it is never written, and a
// service of another process does not have it.
func TestSharedSecretsStayInProcess(t *testing.T) {
	dir := t.TempDir()
	svc := nousadk.NewSessionService(openDir(t, dir))
	other := nousadk.NewSessionService(openDir(t, dir))
	s1 := mustCreate(t, svc, "app", "ann", "s1", map[string]any{"user:api_key": "sk-user-created", "app:secret_token": "tok-app-created", "app:theme": "dark"})
	ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{
		"user:password": "pw-user-appended",
		"app:db":        map[string]any{"host": "h", "password": "pw-app-nested"},
	}}}
	if err := svc.AppendEvent(bg, s1, ev); err != nil {
		t.Fatal(err)
	}
	// Another process changes both scopes.
	theirs := mustCreate(t, other, "app", "ann", "theirs", nil)
	if err := other.AppendEvent(bg, theirs, &session.Event{ID: "e2", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:theme": "light", "user:lang": "fr"}}}); err != nil {
		t.Fatal(err)
	}
	// This process then changes both scopes, each save beaten by another
	// process's change since this one read the scope.
	s1 = mustGet(t, svc, "app", "ann", "s1")
	if err := other.AppendEvent(bg, mustGet(t, other, "app", "ann", "theirs"), &session.Event{ID: "e2b", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:m": 1, "user:m": 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(bg, s1, &session.Event{ID: "e3", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:n": 1, "user:n": 1}}}); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]any{
		"user:api_key": "sk-user-created", "app:secret_token": "tok-app-created", "user:password": "pw-user-appended",
	}
	check := func(where string, st map[string]any, want bool) {
		t.Helper()
		for k, v := range secrets {
			if got, ok := st[k]; ok != want || (want && got != v) {
				t.Errorf("%s: %s = %v, %v; want it: %v", where, k, got, ok, want)
			}
		}
		db, _ := st["app:db"].(map[string]any)
		if got, ok := db["password"]; ok != want || (want && got != "pw-app-nested") {
			t.Errorf("%s: app:db = %v; want its password: %v", where, st["app:db"], want)
		}
		if st["app:theme"] != "light" || st["user:lang"] != "fr" {
			t.Errorf("%s: lacks the other process's changes: %v", where, st)
		}
	}
	check("Get in this process", state(mustGet(t, svc, "app", "ann", "s1")), true)
	check("the user's new session in this process", state(mustCreate(t, svc, "app", "ann", "s2", nil)), true)
	check("Get in another process", state(mustGet(t, other, "app", "ann", "s1")), false)
	r, err := svc.List(bg, &session.ListRequest{AppName: "app", UserID: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sessions {
		check(fmt.Sprint("List in this process, ", s.ID()), state(s), true)
	}
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, secret := range []string{"sk-user-created", "tok-app-created", "pw-user-appended", "pw-app-nested"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %q", path, secret)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A session's secret stays in this process's Session after an append to
// it that another writer's append made stale, which changes none; and is
// not carried into a session of the same ID created again.
func TestSessionSecretsStayAfterStaleAppend(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			svc, other := nousadk.NewSessionService(a), nousadk.NewSessionService(b)
			sess := mustCreate(t, svc, "app", "u", "s", map[string]any{"api_key": "sk-session", "db": map[string]any{"host": "h", "password": "pw-session"}})
			if err := other.AppendEvent(bg, mustGet(t, other, "app", "u", "s"), &session.Event{ID: "theirs", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"n": 1}}}); err != nil {
				t.Fatal(err)
			}
			if err := svc.AppendEvent(bg, sess, &session.Event{ID: "mine", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"refused": "x", "api_key": "sk-refused", "access_token": "tok-refused"}}}); !errors.Is(err, nousadk.ErrStaleSession) {
				t.Fatalf("the stale append: %v", err)
			}
			st := state(mustGet(t, svc, "app", "u", "s"))
			if db, _ := st["db"].(map[string]any); st["api_key"] != "sk-session" || db["password"] != "pw-session" || st["n"] != 1.0 || st["refused"] != nil || st["access_token"] != nil {
				t.Errorf("Get after the stale append: %v", st)
			}
			if err := other.Delete(bg, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, other, "app", "u", "s", map[string]any{"db": map[string]any{"host": "h2"}})
			st = state(mustGet(t, svc, "app", "u", "s"))
			if db, _ := st["db"].(map[string]any); st["api_key"] != nil || db["password"] != nil {
				t.Errorf("the session created again has the old one's secrets: %v", st)
			}
		})
	}
}
