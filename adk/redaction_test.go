package nousadk_test

import (
	"strings"
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/storetest"
)

// The rule of WithRedaction names state keys: a rule that names every
// key but a few (one that denies by default) drops the state's other
// keys, and never an event's body, which a service over the store reads
// back whole.
func TestRedactionRuleNamesStateKeysOnly(t *testing.T) {
	allowed := map[string]bool{"city": true}
	rules := map[string]func(string) bool{
		"deny by default":             func(k string) bool { return !allowed[k] },
		"names everything":            func(string) bool { return true },
		"names the service's own key": func(k string) bool { return k == "adk_event" || nous.IsSecretKey(k) },
	}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			store := storetest.NewMemory()
			svc := nousadk.NewSessionService(store, nousadk.WithRedaction(rule))
			sess := mustCreate(t, svc, "app", "u", "s", map[string]any{"city": "Paris", "note": "n-created"})
			ev := &session.Event{ID: "e1", Author: "user", InvocationID: "inv-1",
				LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("What's the weather?", genai.RoleUser)},
				Actions:     session.EventActions{StateDelta: map[string]any{"city": "Rome", "draft": "d-appended"}}}
			if err := svc.AppendEvent(bg, sess, ev); err != nil {
				t.Fatal(err)
			}
			for sname, s := range map[string]*nousadk.SessionService{"this service": svc, "a new one": nousadk.NewSessionService(store, nousadk.WithRedaction(rule))} {
				got := mustGet(t, s, "app", "u", "s")
				if got.Events().Len() != 1 {
					t.Fatalf("%s: %d events, want 1", sname, got.Events().Len())
				}
				back := got.Events().At(0)
				if back.Content == nil || back.Content.Parts[0].Text != "What's the weather?" || back.InvocationID != "inv-1" {
					t.Errorf("%s: the event read back: %+v", sname, back)
				}
				if _, ok := back.Actions.StateDelta["city"]; ok == rule("city") {
					t.Errorf("%s: the stored delta: %v", sname, back.Actions.StateDelta)
				}
				if _, ok := state(got)["city"]; ok == (rule("city") && sname == "a new one") {
					t.Errorf("%s: the state: %v", sname, state(got))
				}
			}
			// A service that read the session whole appends to it.
			other := nousadk.NewSessionService(store, nousadk.WithRedaction(rule))
			e2 := &session.Event{ID: "e2", Author: "model", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Sunny.", genai.RoleModel)}}
			if err := other.AppendEvent(bg, mustGet(t, other, "app", "u", "s"), e2); err != nil {
				t.Fatal(err)
			}
			if got := mustGet(t, nousadk.NewSessionService(store, nousadk.WithRedaction(rule)), "app", "u", "s"); got.Events().Len() != 2 || got.Events().At(1).Content.Parts[0].Text != "Sunny." {
				t.Errorf("the event appended by a service that read the session: %d events", got.Events().Len())
			}
			for info, err := range store.List(bg, nous.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				stored, err := store.Read(bg, info.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, raw := range append(stored.Events, stored.State) {
					for v, key := range map[string]string{"n-created": "note", "d-appended": "draft"} {
						if strings.Contains(string(raw), v) && rule(key) {
							t.Errorf("log %q holds %q, the value of %s", info.Name, v, key)
						}
					}
				}
			}
		})
	}
}
