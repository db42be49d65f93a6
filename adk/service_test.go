package nousadk_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/pgstore/pgstoretest"
	"github.com/nous-go/nous/storetest"
)

var bg = context.Background()

// handles returns two handles of one new store: the memory store twice,
// two opens of one directory, two pools of one schema.
var handles = map[string]func(t *testing.T) (nous.Store, nous.Store){
	"memory": func(t *testing.T) (nous.Store, nous.Store) {
		m := storetest.NewMemory()
		return m, m
	},
	"filestore": func(t *testing.T) (nous.Store, nous.Store) {
		dir := t.TempDir()
		return openDir(t, dir), openDir(t, dir)
	},
	"pgstore": func(t *testing.T) (nous.Store, nous.Store) {
		dsn := pgstoretest.Schema(t)
		return openPG(t, dsn), openPG(t, dsn)
	},
}

func openDir(t *testing.T, dir string) *filestore.Store {
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openDirB(b *testing.B) *filestore.Store {
	s, err := filestore.Open(b.TempDir(), filestore.WithoutSync())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func openPG(t *testing.T, dsn string) *pgstore.Store {
	s, err := pgstore.Open(bg, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func mustCreate(t *testing.T, s session.Service, app, user, id string, state map[string]any) session.Session {
	t.Helper()
	r, err := s.Create(bg, &session.CreateRequest{AppName: app, UserID: user, SessionID: id, State: state})
	if err != nil {
		t.Fatal(err)
	}
	return r.Session
}

func mustGet(t *testing.T, s session.Service, app, user, id string) session.Session {
	t.Helper()
	r, err := s.Get(bg, &session.GetRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.Session
}

func state(s session.Session) map[string]any {
	out := map[string]any{}
	for k, v := range s.State().All() {
		out[k] = v
	}
	return out
}

// Two services over two handles of one store append 100 events each to one
// session, each with a state delta of its own in every scope: all 200
// events are stored once, and every update is kept. A stale append fails
// and changes nothing; the writer reads the session again and retries.
func TestTwoWriters(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			services := []*nousadk.SessionService{nousadk.NewSessionService(a), nousadk.NewSessionService(b)}
			mustCreate(t, services[0], "app", "u", "s", nil)
			const n = 100
			var wg sync.WaitGroup
			stale := make([]int, 2)
			for w, svc := range services {
				wg.Go(func() {
					sess := mustGet(t, svc, "app", "u", "s")
					for i := range n {
						ev := session.NewEvent(bg, fmt.Sprintf("inv-%d-%d", w, i))
						ev.Author = fmt.Sprint("writer", w)
						ev.Actions.StateDelta = map[string]any{
							fmt.Sprintf("w%d_%d", w, i): i, fmt.Sprintf("app:w%d_%d", w, i): i,
							fmt.Sprintf("user:w%d_%d", w, i): i, "temp:scratch": i, "last": w,
						}
						for {
							err := svc.AppendEvent(bg, sess, ev)
							if err == nil {
								break
							}
							if !errors.Is(err, nousadk.ErrStaleSession) || !errors.Is(err, nous.ErrConflict) {
								t.Errorf("writer %d, event %d: %v", w, i, err)
								return
							}
							stale[w]++
							sess = mustGet(t, svc, "app", "u", "s")
						}
					}
				})
			}
			wg.Wait()
			t.Logf("stale appends retried: %v", stale)
			for _, svc := range append(services, nousadk.NewSessionService(a)) {
				got := mustGet(t, svc, "app", "u", "s")
				if got.Events().Len() != 2*n {
					t.Fatalf("%d events, want %d", got.Events().Len(), 2*n)
				}
				ids := map[string]bool{}
				for ev := range got.Events().All() {
					if ids[ev.ID] {
						t.Fatalf("event %s stored twice", ev.ID)
					}
					ids[ev.ID] = true
					if _, ok := ev.Actions.StateDelta["temp:scratch"]; ok {
						t.Fatalf("event %s was stored with its temp: key", ev.ID)
					}
				}
				st := state(got)
				for w := range 2 {
					for i := range n {
						for _, k := range []string{"w%d_%d", "app:w%d_%d", "user:w%d_%d"} {
							k = fmt.Sprintf(k, w, i)
							if v, ok := st[k]; !ok || fmt.Sprint(v) != fmt.Sprint(i) {
								t.Fatalf("state %s = %v, %v; want %d", k, v, ok, i)
							}
						}
					}
				}
				if _, ok := st["temp:scratch"]; ok {
					t.Fatal("temp:scratch was stored")
				}
			}
		})
	}
}

// An append to a Session read before another append fails, stores
// nothing, and succeeds on the session read again.
func TestStaleAppend(t *testing.T) {
	svc := nousadk.NewSessionService(storetest.NewMemory())
	mustCreate(t, svc, "app", "u", "s", nil)
	first, second := mustGet(t, svc, "app", "u", "s"), mustGet(t, svc, "app", "u", "s")
	if err := svc.AppendEvent(bg, first, &session.Event{ID: "e1", Author: "user"}); err != nil {
		t.Fatal(err)
	}
	err := svc.AppendEvent(bg, second, &session.Event{ID: "e2", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "lost?"}}})
	if !errors.Is(err, nousadk.ErrStaleSession) {
		t.Fatalf("a stale append: %v", err)
	}
	got := mustGet(t, svc, "app", "u", "s")
	if got.Events().Len() != 1 || len(state(got)) != 0 {
		t.Fatalf("the stale append changed the session: %d events, state %v", got.Events().Len(), state(got))
	}
	if err := svc.AppendEvent(bg, got, &session.Event{ID: "e2", Author: "user"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(bg, first, &session.Event{ID: "e3", Author: "user"}); !errors.Is(err, nousadk.ErrStaleSession) {
		t.Fatalf("the first Session is stale too: %v", err)
	}
}

// lossy is a store that loses the reply of its next Append: the batch is
// stored, and the caller gets an error.
type lossy struct {
	nous.Store
	lose bool
}

func (s *lossy) Append(ctx context.Context, b nous.Batch) error {
	err := s.Store.Append(ctx, b)
	if s.lose && err == nil {
		s.lose = false
		return errors.New("connection reset by peer")
	}
	return err
}

// An append whose reply was lost, retried, is stored once, and the
// Session it was made on goes on.
func TestLostReply(t *testing.T) {
	store := &lossy{Store: storetest.NewMemory()}
	svc := nousadk.NewSessionService(store)
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "v"}}}
	store.lose = true
	if err := svc.AppendEvent(bg, sess, ev); err == nil {
		t.Fatal("the lost reply was not an error")
	}
	if err := svc.AppendEvent(bg, sess, ev); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if err := svc.AppendEvent(bg, sess, &session.Event{ID: "e2", Author: "model"}); err != nil {
		t.Fatalf("the next append on the same Session: %v", err)
	}
	for _, s := range []nous.Store{store, store.Store} {
		got := mustGet(t, nousadk.NewSessionService(s), "app", "u", "s")
		if got.Events().Len() != 2 || got.Events().At(0).ID != "e1" || state(got)["k"] != "v" {
			t.Fatalf("%d events, state %v; want e1 once, then e2", got.Events().Len(), state(got))
		}
	}
	if sess.Events().Len() != 2 {
		t.Fatalf("the Session has %d events, want 2", sess.Events().Len())
	}
}

// fullEvent is an event with every field set.
func fullEvent() *session.Event {
	at := time.Date(2026, 12, 2, 18, 30, 15, 123456789, time.UTC)
	return &session.Event{
		ID: "ev-1", Timestamp: at, InvocationID: "inv-1", Branch: "root.helper", IsolationScope: "scope-1", Author: "helper",
		LLMResponse: model.LLMResponse{
			Content: &genai.Content{Role: "model", Parts: []*genai.Part{
				{Text: "Let me look.", Thought: true, ThoughtSignature: []byte{0, 1, 2, 255}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}},
				{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": float64(3)}}},
				{FunctionResponse: &genai.FunctionResponse{ID: "call-1", Name: "get_weather", Response: map[string]any{"temp": 18.5, "api_key_hint": "shown"}}},
			}},
			GroundingMetadata: &genai.GroundingMetadata{WebSearchQueries: []string{"weather Paris"}},
			CitationMetadata:  &genai.CitationMetadata{Citations: []*genai.Citation{{Title: "Météo", URI: "https://example.com", StartIndex: 3, EndIndex: 9}}},
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1 << 30, CandidatesTokenCount: 12, TotalTokenCount: 1<<30 + 12,
				ThoughtsTokenCount: 5, CachedContentTokenCount: 7},
			CustomMetadata: map[string]any{"trace": "t-1", "n": float64(9007199254740993)},
			Partial:        false, TurnComplete: true, Interrupted: true,
			ErrorCode: "E1", ErrorMessage: "half done", FinishReason: genai.FinishReasonStop, AvgLogprobs: -0.125,
		},
		Actions: session.EventActions{
			StateDelta:    map[string]any{"city": "Paris", "app:region": "eu", "user:units": "metric"},
			ArtifactDelta: map[string]int64{"report.pdf": 1 << 40},
			RequestedToolConfirmations: map[string]toolconfirmation.ToolConfirmation{
				"call-1": {Hint: "Run it?", Confirmed: true, Payload: map[string]any{"why": "cost"}},
			},
			SkipSummarization: true, TransferToAgent: "other", Escalate: true,
		},
		LongRunningToolIDs: []string{"call-1"},
		Routes:             []string{"a", "b"},
		Output:             "done",
		NodeInfo:           &session.NodeInfo{Path: "root/helper@1", MessageAsOutput: true, OutputFor: []string{"root"}},
	}
}

// Every field of an event comes back as it was appended, from the service
// that appended it and from a new one over a store opened again.
func TestEventRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store := openDir(t, dir)
	svc := nousadk.NewSessionService(store)
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	want := fullEvent() // AppendEvent gets a copy: what it does to its event shows as a difference
	if err := svc.AppendEvent(bg, sess, fullEvent()); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, nousadk.NewSessionService(openDir(t, dir)), "app", "u", "s")
	if diff := cmp.Diff(want, got.Events().At(0)); diff != "" {
		t.Errorf("after a restart (-appended +got):\n%s", diff)
	}
	fresh := nousadk.NewSessionService(storetest.NewMemory())
	sess = mustCreate(t, fresh, "app", "u", "s", nil)
	if err := fresh.AppendEvent(bg, sess, fullEvent()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, mustGet(t, fresh, "app", "u", "s").Events().At(0)); diff != "" {
		t.Errorf("the same service (-appended +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, sess.Events().At(0)); diff != "" {
		t.Errorf("the Session appended to (-appended +got):\n%s", diff)
	}
}

// State is scoped as ADK scopes it: the app's keys are shared by its
// sessions, the user's by the user's, temp: ones live in the Session the
// runner holds only, and a secret's key is never written.
func TestScopes(t *testing.T) {
	dir := t.TempDir()
	svc := nousadk.NewSessionService(openDir(t, dir))
	s1 := mustCreate(t, svc, "app", "ann", "s1", map[string]any{"app:theme": "dark", "user:lang": "fr", "topic": "weather", "temp:draft": "x"})
	if st := state(s1); st["temp:draft"] != "x" || st["topic"] != "weather" {
		t.Fatalf("the created Session's state: %v", st)
	}
	ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{
		"temp:step": 1, "user:city": "Paris", "api_key": "sk-never-on-disk", "app:secret_token": "tok-never-on-disk", "prefs": map[string]any{"password": "pw-never-on-disk", "color": "blue"},
	}}}
	if err := svc.AppendEvent(bg, s1, ev); err != nil {
		t.Fatal(err)
	}
	if st := state(s1); st["temp:step"] != 1 || st["api_key"] != "sk-never-on-disk" {
		t.Fatalf("the Session appended to lacks its delta: %v", st)
	}
	if _, ok := s1.Events().At(0).Actions.StateDelta["temp:step"]; ok {
		t.Fatal("the Session's event kept its temp: key")
	}

	for name, svc := range map[string]session.Service{"this service": svc, "a new one": nousadk.NewSessionService(openDir(t, dir))} {
		other := mustCreate(t, svc, "app", "bob", "s-"+strings.ReplaceAll(name, " ", "-"), nil)
		if st := state(other); st["app:theme"] != "dark" || st["user:lang"] != nil || st["topic"] != nil {
			t.Errorf("%s: another user's session: %v", name, st)
		}
		mine := mustCreate(t, svc, "app", "ann", "s2-"+strings.ReplaceAll(name, " ", "-"), nil)
		if st := state(mine); st["app:theme"] != "dark" || st["user:lang"] != "fr" || st["user:city"] != "Paris" || st["topic"] != nil {
			t.Errorf("%s: the user's other session: %v", name, st)
		}
		if st := state(mustGet(t, svc, "app", "ann", "s1")); st["topic"] != "weather" || st["temp:draft"] != nil || st["temp:step"] != nil {
			t.Errorf("%s: the session read back: %v", name, st)
		}
		elsewhere := mustCreate(t, svc, "other-app", "ann", "s-"+strings.ReplaceAll(name, " ", "-"), nil)
		if st := state(elsewhere); len(st) != 0 {
			t.Errorf("%s: another app's session: %v", name, st)
		}
	}

	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, secret := range []string{"sk-never-on-disk", "tok-never-on-disk", "pw-never-on-disk", "temp:step", "temp:draft"} {
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

// List selects by app and user, and gives each session its state.
func TestList(t *testing.T) {
	svc := nousadk.NewSessionService(storetest.NewMemory())
	mustCreate(t, svc, "app", "ann", "a1", map[string]any{"n": 1, "user:lang": "fr"})
	mustCreate(t, svc, "app", "ann", "a2", nil)
	mustCreate(t, svc, "app", "bob", "b1", map[string]any{"app:theme": "dark"})
	mustCreate(t, svc, "app2", "ann", "x", nil)
	for _, tc := range []struct {
		user string
		want []string
	}{{"ann", []string{"a1", "a2"}}, {"bob", []string{"b1"}}, {"", []string{"a1", "a2", "b1"}}, {"carl", nil}} {
		r, err := svc.List(bg, &session.ListRequest{AppName: "app", UserID: tc.user})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range r.Sessions {
			got = append(got, s.ID())
			st := state(s)
			if st["app:theme"] != "dark" {
				t.Errorf("%s lacks the app's state: %v", s.ID(), st)
			}
			if s.ID() == "a1" && (fmt.Sprint(st["n"]) != "1" || st["user:lang"] != "fr") {
				t.Errorf("a1's state: %v", st)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) && !sameSet(got, tc.want) {
			t.Errorf("List(app, %q) = %v, want %v", tc.user, got, tc.want)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// Requests without what they need are errors, and a Session of another
// service is refused rather than appended to blindly.
func TestInvalidRequests(t *testing.T) {
	svc := nousadk.NewSessionService(storetest.NewMemory())
	if _, err := svc.Create(bg, &session.CreateRequest{AppName: "app"}); !errors.Is(err, nousadk.ErrInvalidRequest) {
		t.Errorf("Create without a user: %v", err)
	}
	if _, err := svc.Get(bg, &session.GetRequest{AppName: "app", UserID: "u"}); !errors.Is(err, nousadk.ErrInvalidRequest) {
		t.Errorf("Get without a session ID: %v", err)
	}
	if _, err := svc.Get(bg, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "none"}); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("Get of no session: %v", err)
	}
	if _, err := svc.List(bg, &session.ListRequest{}); !errors.Is(err, nousadk.ErrInvalidRequest) {
		t.Errorf("List without an app: %v", err)
	}
	if _, err := svc.Create(bg, &session.CreateRequest{AppName: "app", UserID: "u\x00"}); !errors.Is(err, nous.ErrInvalidName) {
		t.Errorf("Create with a NUL in the user ID: %v", err)
	}
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	if _, err := svc.Create(bg, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); !errors.Is(err, nous.ErrConflict) {
		t.Errorf("Create of a session that exists: %v", err)
	}
	other := session.InMemoryService()
	foreign, err := other.Create(bg, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(bg, foreign.Session, &session.Event{ID: "e"}); !errors.Is(err, nousadk.ErrInvalidRequest) {
		t.Errorf("AppendEvent with another service's Session: %v", err)
	}
	if err := svc.AppendEvent(bg, sess, nil); !errors.Is(err, nousadk.ErrInvalidRequest) {
		t.Errorf("AppendEvent of no event: %v", err)
	}
	if got := mustGet(t, svc, "app", "u", "s"); got.Events().Len() != 0 {
		t.Errorf("a refused append stored %d events", got.Events().Len())
	}
}

// A stored event that does not read back as an ADK event is an error
// wrapping ErrCorrupt that names it, on a session read whole, its events
// decoded in parallel, and on one the service holds.
func TestCorruptEvent(t *testing.T) {
	store := storetest.NewMemory()
	svc := nousadk.NewSessionService(store)
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	for i := range 600 {
		if err := svc.AppendEvent(bg, sess, &session.Event{ID: fmt.Sprint("e", i), Author: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	var id uuid.UUID
	for info, err := range store.List(bg, nous.ListOptions{Labels: map[string]string{"adk_session": "s"}}) {
		if err != nil {
			t.Fatal(err)
		}
		id = info.ID
	}
	c, err := nous.Load(bg, store, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LogEvent(nous.EventRuntime, map[string]any{"adk_event": `{"id": 7}`}); err != nil {
		t.Fatal(err)
	}
	// The session's batch, then each append's (its event and its batch
	// event), then the bad event.
	if bad := c.Log().Len(); bad != 1+2*600+1 {
		t.Fatalf("the bad event is event %d of the log, want %d", bad, 1+2*600+1)
	}
	if err := c.Save(bg, store); err != nil {
		t.Fatal(err)
	}
	for name, svc := range map[string]*nousadk.SessionService{"held": svc, "read whole": nousadk.NewSessionService(store)} {
		_, err := svc.Get(bg, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
		if !errors.Is(err, nous.ErrCorrupt) || !strings.Contains(err.Error(), "event 1202 ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A service that reads a session, and reads it again after another
// service appended, has each event once.
func TestGetAgain(t *testing.T) {
	store := storetest.NewMemory()
	writer, reader := nousadk.NewSessionService(store), nousadk.NewSessionService(store)
	sess := mustCreate(t, writer, "app", "u", "s", nil)
	for i, want := range []int{1, 2, 3} {
		if err := writer.AppendEvent(bg, sess, &session.Event{ID: fmt.Sprint("e", i), Author: "user"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got := mustGet(t, reader, "app", "u", "s").Events(); got.Len() != want || got.At(want-1).ID != fmt.Sprint("e", i) {
				t.Fatalf("after %d appends, the reader has %d events", want, got.Len())
			}
		}
	}
}

// A Session read before its session was deleted and created again is
// stale: an append to it fails with ErrStaleSession and stores nothing in
// the new session, whether this service or another one deleted and made
// it again.
func TestAppendAfterRecreate(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			svc, other := nousadk.NewSessionService(a), nousadk.NewSessionService(b)
			for i, deleter := range []*nousadk.SessionService{svc, other} {
				id := fmt.Sprint("s", i)
				old := mustCreate(t, svc, "app", "u", id, nil)
				if err := svc.AppendEvent(bg, old, &session.Event{ID: "old-1", Author: "user"}); err != nil {
					t.Fatal(err)
				}
				if err := deleter.Delete(bg, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: id}); err != nil {
					t.Fatal(err)
				}
				renewed := mustCreate(t, deleter, "app", "u", id, nil)
				if err := deleter.AppendEvent(bg, renewed, &session.Event{ID: "new-1", Author: "user"}); err != nil {
					t.Fatal(err)
				}
				err := svc.AppendEvent(bg, old, &session.Event{ID: "old-2", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "old"}}})
				if !errors.Is(err, nousadk.ErrStaleSession) {
					t.Errorf("deleter %d: an append to the Session of the deleted session: %v", i, err)
				}
				for _, s := range []*nousadk.SessionService{svc, other, nousadk.NewSessionService(a)} {
					got := mustGet(t, s, "app", "u", id)
					if got.Events().Len() != 1 || got.Events().At(0).ID != "new-1" || len(state(got)) != 0 {
						t.Errorf("deleter %d: the new session has %d events, state %v; want new-1 only", i, got.Events().Len(), state(got))
					}
				}
			}
		})
	}
}

// A delta that sets a shared key back to the value this service last saw
// is saved, though the scope it holds has that value already: another
// service changed the key since, and the last update wins.
func TestScopeUpdateToHeldValue(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			svc, other := nousadk.NewSessionService(a), nousadk.NewSessionService(b)
			mine := mustCreate(t, svc, "app", "u", "mine", map[string]any{"app:mode": "one", "user:mode": "one"})
			theirs := mustCreate(t, other, "app", "u", "theirs", nil)
			if err := other.AppendEvent(bg, theirs, &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:mode": "two", "user:mode": "two"}}}); err != nil {
				t.Fatal(err)
			}
			if err := svc.AppendEvent(bg, mine, &session.Event{ID: "e2", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:mode": "one", "user:mode": "one"}}}); err != nil {
				t.Fatal(err)
			}
			for sname, s := range map[string]*nousadk.SessionService{"this service": svc, "the other": other, "a new one": nousadk.NewSessionService(b)} {
				for _, id := range []string{"mine", "theirs"} {
					if st := state(mustGet(t, s, "app", "u", id)); st["app:mode"] != "one" || st["user:mode"] != "one" {
						t.Errorf("%s, session %s: %v; want app:mode and user:mode one", sname, id, st)
					}
				}
			}
		})
	}
}

// A session's LastUpdateTime is the time of its last event, or of its
// creation when it has none: the same from List, from Get of the service
// that holds it and of one that reads it whole, and on the Session
// appended to.
func TestLastUpdateTime(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			svc := nousadk.NewSessionService(a)
			want := map[string]time.Time{}
			none := mustCreate(t, svc, "app", "u", "none", nil)
			want["none"] = none.LastUpdateTime()
			if want["none"].IsZero() {
				t.Fatal("a created session's LastUpdateTime is zero")
			}
			some := mustCreate(t, svc, "app", "u", "some", nil)
			at := time.Date(2025, 3, 4, 5, 6, 7, 891011121, time.UTC)
			for i := range 3 {
				at = at.Add(time.Duration(i+1) * time.Minute)
				if err := svc.AppendEvent(bg, some, &session.Event{ID: fmt.Sprint("e", i), Author: "user", Timestamp: at}); err != nil {
					t.Fatal(err)
				}
			}
			want["some"] = at
			if got := some.LastUpdateTime(); !got.Equal(at) {
				t.Errorf("the Session appended to: %v, want %v", got, at)
			}
			for sname, s := range map[string]*nousadk.SessionService{"this service": svc, "another": nousadk.NewSessionService(b)} {
				r, err := s.List(bg, &session.ListRequest{AppName: "app", UserID: "u"})
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Sessions) != 2 {
					t.Fatalf("%s: List gave %d sessions, want 2", sname, len(r.Sessions))
				}
				for _, listed := range r.Sessions {
					got := mustGet(t, s, "app", "u", listed.ID()).LastUpdateTime()
					if !got.Equal(want[listed.ID()]) || !listed.LastUpdateTime().Equal(got) {
						t.Errorf("%s: session %s: List says %v, Get %v; want %v", sname, listed.ID(), listed.LastUpdateTime(), got, want[listed.ID()])
					}
				}
			}
		})
	}
}

// failing is a store whose next Append to a log whose name starts with
// prefix fails, once: stored, with its reply lost, when land is set, else
// not stored.
type failing struct {
	nous.Store
	mu     sync.Mutex
	prefix string
	land   bool
}

func (s *failing) Append(ctx context.Context, b nous.Batch) error {
	s.mu.Lock()
	fail := s.prefix != "" && strings.HasPrefix(b.Info.Name, s.prefix)
	if fail {
		s.prefix = ""
	}
	s.mu.Unlock()
	if !fail {
		return s.Store.Append(ctx, b)
	}
	if s.land {
		if err := s.Store.Append(ctx, b); err != nil {
			return err
		}
	}
	return errors.New("connection reset by peer")
}

// A Create whose save of the app's or the user's state fails stores no
// session, and the same Create made again succeeds with the whole state,
// whether the failed save was stored or not.
func TestCreateRetriedAfterScopeFailure(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			for i, tc := range []struct {
				prefix string
				land   bool
			}{{"adk app", false}, {"adk user", false}, {"adk app", true}, {"adk user", true}} {
				store := &failing{Store: a, prefix: tc.prefix, land: tc.land}
				svc := nousadk.NewSessionService(store)
				app, id := fmt.Sprint("app", i), fmt.Sprint("s", i)
				req := &session.CreateRequest{AppName: app, UserID: "u", SessionID: id,
					State: map[string]any{"app:theme": "dark", "user:lang": "fr", "topic": "weather", "temp:draft": "x"}}
				if _, err := svc.Create(bg, req); err == nil {
					t.Fatalf("%s (stored: %v): the failed save was not an error", tc.prefix, tc.land)
				}
				if _, err := nousadk.NewSessionService(b).Get(bg, &session.GetRequest{AppName: app, UserID: "u", SessionID: id}); !errors.Is(err, nous.ErrNotFound) {
					t.Errorf("%s (stored: %v): the failed Create left a session: %v", tc.prefix, tc.land, err)
				}
				r, err := svc.Create(bg, req)
				if err != nil {
					t.Fatalf("%s (stored: %v): the Create made again: %v", tc.prefix, tc.land, err)
				}
				want := map[string]any{"app:theme": "dark", "user:lang": "fr", "topic": "weather"}
				if st := state(r.Session); st["temp:draft"] != "x" || !sameState(st, want, "temp:draft") {
					t.Errorf("%s (stored: %v): the created Session: %v", tc.prefix, tc.land, st)
				}
				for sname, s := range map[string]*nousadk.SessionService{"this service": svc, "a new one": nousadk.NewSessionService(b)} {
					if st := state(mustGet(t, s, app, "u", id)); !sameState(st, want) {
						t.Errorf("%s (stored: %v): %s: %v, want %v", tc.prefix, tc.land, sname, st, want)
					}
				}
			}
		})
	}
}

// sameState reports whether got has the keys of want with their values,
// and no others but those of also.
func sameState(got, want map[string]any, also ...string) bool {
	for k, v := range got {
		if w, ok := want[k]; (!ok && !slices.Contains(also, k)) || (ok && fmt.Sprint(w) != fmt.Sprint(v)) {
			return false
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			return false
		}
	}
	return true
}

// Sessions created at once on one service, each read and appended to by
// other goroutines as soon as it is stored, are each whole: the race
// detector finds nothing, and every event is stored once.
func TestConcurrentCreate(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			store, _ := open(t)
			svc := nousadk.NewSessionService(store)
			const n = 8
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					mustCreate(t, svc, "app", "u", fmt.Sprint("s", i), map[string]any{"n": i, "app:k": i})
				})
				wg.Go(func() {
					// Read session i from the moment it is stored, and
					// append to it.
					id := fmt.Sprint("s", i)
					for {
						r, err := svc.Get(bg, &session.GetRequest{AppName: "app", UserID: "u", SessionID: id})
						if errors.Is(err, nous.ErrNotFound) {
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						if err := svc.AppendEvent(bg, r.Session, &session.Event{ID: "e-" + id, Author: "user"}); err != nil {
							t.Error(err)
						}
						return
					}
				})
			}
			wg.Wait()
			for i := range n {
				got := mustGet(t, nousadk.NewSessionService(store), "app", "u", fmt.Sprint("s", i))
				if got.Events().Len() != 1 || fmt.Sprint(state(got)["n"]) != fmt.Sprint(i) {
					t.Errorf("session s%d: %d events, state %v", i, got.Events().Len(), state(got))
				}
			}
		})
	}
}

// credentials is a typed value whose field is a secret by its JSON name.
type credentials struct {
	User   string `json:"user"`
	APIKey string `json:"api_key"`
}

// A secret's key inside a value of any type (a typed map, a struct by its
// JSON name, a list of them) is never written, neither in the session's
// state nor in the shared scopes nor in the stored event's delta, and
// stays in the Session of this process.
func TestTypedSecretsNotStored(t *testing.T) {
	secrets := []string{"pw-typed-create", "key-typed-create", "key-typed-1", "key-typed-2", "sec-typed-3", "tok-typed-4"}
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			var dir string
			store, _ := open(t)
			if name == "filestore" {
				dir = t.TempDir()
				store = openDir(t, dir)
			}
			svc := nousadk.NewSessionService(store)
			sess := mustCreate(t, svc, "app", "u", "s", map[string]any{
				"conn":      map[string]string{"host": "h", "password": "pw-typed-create"},
				"app:login": credentials{User: "ann", APIKey: "key-typed-create"},
			})
			ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{
				"cfg":        map[string]string{"region": "eu", "api_key": "key-typed-1"},
				"login":      credentials{User: "ann", APIKey: "key-typed-2"},
				"user:list":  []map[string]any{{"secret": "sec-typed-3", "n": 1}},
				"app:nested": map[string]any{"inner": map[string]string{"access_token": "tok-typed-4"}},
			}}}
			if err := svc.AppendEvent(bg, sess, ev); err != nil {
				t.Fatal(err)
			}
			if got := state(sess)["login"]; got != (credentials{User: "ann", APIKey: "key-typed-2"}) {
				t.Errorf("the Session lost its typed value: %v", got)
			}
			logs := 0
			for info, err := range store.List(bg, nous.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				logs++
				st, err := store.Read(bg, info.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range secrets {
					if strings.Contains(string(st.State), secret) {
						t.Errorf("the state of log %q holds %q", info.Name, secret)
					}
					for i, raw := range st.Events {
						if strings.Contains(string(raw), secret) {
							t.Errorf("event %d of log %q holds %q", i+1, info.Name, secret)
						}
					}
				}
			}
			if logs != 3 {
				t.Errorf("%d logs, want the session's, the app's and the user's", logs)
			}
			if dir != "" {
				err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(path)
					for _, secret := range secrets {
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
			got := mustGet(t, nousadk.NewSessionService(store), "app", "u", "s")
			delta := got.Events().At(0).Actions.StateDelta
			if cfg, _ := delta["cfg"].(map[string]any); cfg["region"] != "eu" || len(cfg) != 1 {
				t.Errorf("the stored delta's cfg: %v", delta["cfg"])
			}
			if login, _ := delta["login"].(map[string]any); login["user"] != "ann" || len(login) != 1 {
				t.Errorf("the stored delta's login: %v", delta["login"])
			}
		})
	}
}

// A delta whose map holds itself is appended without the cycle in what is
// stored, and returns.
func TestCyclicDelta(t *testing.T) {
	store := storetest.NewMemory()
	svc := nousadk.NewSessionService(store, nousadk.WithLogger(slog.New(slog.DiscardHandler)))
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	loop := map[string]any{"n": 1}
	loop["a"], loop["b"] = loop, []any{map[string]string{"password": "pw-in-loop"}}
	for _, k := range []string{"c", "d", "e", "f", "g"} {
		loop[k] = loop // each level of a copy that followed them would double
	}
	done := make(chan error, 1)
	go func() {
		err := svc.AppendEvent(bg, sess, &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"loop": loop, "app:loop": loop}}})
		if err == nil { // the service holds the delta, cycles and all: its Get returns too
			var r *session.GetResponse
			if r, err = svc.Get(bg, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}); err == nil {
				if l, _ := state(r.Session)["loop"].(map[string]any); l["n"] != 1.0 {
					t.Errorf("Get of the service that holds the delta: %v", l)
				}
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("the append and Get: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the append of a cyclic delta, or the Get after it, did not return")
	}
	got := mustGet(t, nousadk.NewSessionService(store), "app", "u", "s")
	for ev := range got.Events().All() {
		if l, _ := ev.Actions.StateDelta["loop"].(map[string]any); fmt.Sprint(l["n"]) != "1" || l["a"] != nil || strings.Contains(fmt.Sprint(l), "pw-in-loop") {
			t.Errorf("the stored delta: %v", l)
		}
	}
}

// The retry of an append whose reply was lost reports success only with
// the event in the Session it was made on, in its place: so it is with no
// other writer, and when another writer appended after it, when the
// Session is then stale for the next append. On a Session read after the
// event landed, the retry adds nothing. The event is stored once.
func TestLostReplyRetried(t *testing.T) {
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			for i, otherWriter := range []bool{false, true} {
				store := &lossy{Store: a}
				svc, other := nousadk.NewSessionService(store), nousadk.NewSessionService(b)
				id := fmt.Sprint("s", i)
				sess := mustCreate(t, svc, "app", "u", id, nil)
				if err := svc.AppendEvent(bg, sess, &session.Event{ID: "e0", Author: "user"}); err != nil {
					t.Fatal(err)
				}
				ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "v"}}}
				store.lose = true
				if err := svc.AppendEvent(bg, sess, ev); err == nil {
					t.Fatal("the lost reply was not an error")
				}
				want := []string{"e0", "e1"}
				if otherWriter {
					theirs := mustGet(t, other, "app", "u", id)
					if err := other.AppendEvent(bg, theirs, &session.Event{ID: "e2", Author: "model"}); err != nil {
						t.Fatal(err)
					}
					want = append(want, "e2")
				}
				if err := svc.AppendEvent(bg, sess, ev); err != nil {
					t.Fatalf("other writer %v: the retry: %v", otherWriter, err)
				}
				if got := eventIDs(sess); fmt.Sprint(got) != "[e0 e1]" || state(sess)["k"] != "v" {
					t.Errorf("other writer %v: the retry succeeded, and the Session has %v, state %v; want e0, e1 and k", otherWriter, got, state(sess))
				}
				err := svc.AppendEvent(bg, sess, &session.Event{ID: "e3", Author: "model"})
				if otherWriter && !errors.Is(err, nousadk.ErrStaleSession) {
					t.Errorf("an append to the Session after another writer's: %v", err)
				}
				if !otherWriter {
					if err != nil {
						t.Errorf("the next append: %v", err)
					}
					want = append(want, "e3")
				}
				fresh := mustGet(t, svc, "app", "u", id)
				if err := svc.AppendEvent(bg, fresh, ev); err != nil {
					t.Errorf("other writer %v: the retry on a Session read since: %v", otherWriter, err)
				}
				if got := eventIDs(fresh); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("other writer %v: the retry on a Session read since made it %v, want %v", otherWriter, got, want)
				}
				for _, s := range []*nousadk.SessionService{svc, nousadk.NewSessionService(b)} {
					if got := eventIDs(mustGet(t, s, "app", "u", id)); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("other writer %v: stored %v, want %v", otherWriter, got, want)
					}
				}
			}
		})
	}
}

func eventIDs(s session.Session) []string {
	var ids []string
	for ev := range s.Events().All() {
		ids = append(ids, ev.ID)
	}
	return ids
}

// An append whose save of a shared delta fails has stored its event, and
// says so; appending the event again saves the delta, the event stored
// once.
func TestAppendRetriedAfterScopeFailure(t *testing.T) {
	store := &failing{Store: storetest.NewMemory()}
	svc := nousadk.NewSessionService(store)
	sess := mustCreate(t, svc, "app", "u", "s", nil)
	ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"app:theme": "dark", "k": "v"}}}
	store.mu.Lock()
	store.prefix = "adk app"
	store.mu.Unlock()
	if err := svc.AppendEvent(bg, sess, ev); err == nil || !strings.Contains(err.Error(), "the event is stored") {
		t.Fatalf("the failed save of the app's delta: %v", err)
	}
	if err := svc.AppendEvent(bg, sess, ev); err != nil {
		t.Fatalf("the append made again: %v", err)
	}
	got := mustGet(t, nousadk.NewSessionService(store), "app", "u", "s")
	if fmt.Sprint(eventIDs(got)) != "[e1]" || !sameState(state(got), map[string]any{"app:theme": "dark", "k": "v"}) {
		t.Errorf("stored %v, state %v; want e1 once, app:theme and k", eventIDs(got), state(got))
	}
	if fmt.Sprint(eventIDs(sess)) != "[e1]" {
		t.Errorf("the Session has %v, want e1 once", eventIDs(sess))
	}
}

// The retry of an append whose reply was lost succeeds only on a Session
// that reflects the log up to the event: on one read before another
// writer's batch that holds no ADK event (a change of the session's state
// alone) it is stale, since that Session lacks the change. On the Session
// the append was made on, it succeeds, and that Session is stale for the
// next append when another writer changed the state after the event. The
// event is stored once.
func TestLostReplyRetriedAroundStateChanges(t *testing.T) {
	store := &lossy{Store: storetest.NewMemory()}
	svc := nousadk.NewSessionService(store)
	mustCreate(t, svc, "app", "u", "s", nil)
	early := mustGet(t, svc, "app", "u", "s")
	setState(t, store.Store, "s", "before", "set by another writer")
	later := mustGet(t, svc, "app", "u", "s")
	ev := &session.Event{ID: "e1", Author: "user"}
	store.lose = true
	if err := svc.AppendEvent(bg, later, ev); err == nil {
		t.Fatal("the lost reply was not an error")
	}
	setState(t, store.Store, "s", "after", "set by another writer")

	if err := svc.AppendEvent(bg, early, ev); !errors.Is(err, nousadk.ErrStaleSession) {
		t.Errorf("the retry on the Session read before the state changed: %v", err)
	}
	if early.Events().Len() != 0 || len(state(early)) != 0 {
		t.Errorf("the stale retry changed its Session: %v, state %v", eventIDs(early), state(early))
	}
	if err := svc.AppendEvent(bg, later, ev); err != nil {
		t.Errorf("the retry on the Session the append was made on: %v", err)
	}
	if fmt.Sprint(eventIDs(later)) != "[e1]" || state(later)["before"] == nil {
		t.Errorf("the Session appended to: %v, state %v", eventIDs(later), state(later))
	}
	e2 := &session.Event{ID: "e2", Author: "model"}
	if err := svc.AppendEvent(bg, later, e2); !errors.Is(err, nousadk.ErrStaleSession) {
		t.Errorf("the next append on that Session, which lacks the state set after the event: %v", err)
	}
	fresh := mustGet(t, svc, "app", "u", "s")
	if err := svc.AppendEvent(bg, fresh, e2); err != nil {
		t.Errorf("the next append on the Session read again: %v", err)
	}
	got := mustGet(t, nousadk.NewSessionService(store.Store), "app", "u", "s")
	if fmt.Sprint(eventIDs(got)) != "[e1 e2]" || !sameState(state(got), map[string]any{"before": "set by another writer", "after": "set by another writer"}) {
		t.Errorf("stored %v, state %v; want e1 once, then e2, and both keys", eventIDs(got), state(got))
	}
}

// setState sets key to value in the state of session id of app "app" and
// user "u", in one save through nous: a batch that holds no ADK event.
func setState(t *testing.T, store nous.Store, id, key string, value any) {
	t.Helper()
	var log uuid.UUID
	for info, err := range store.List(bg, nous.ListOptions{Labels: map[string]string{"adk_session": id}}) {
		if err != nil {
			t.Fatal(err)
		}
		log = info.ID
	}
	c, err := nous.Load(bg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	c.Deps[key] = value
	if err := c.Save(bg, store); err != nil {
		t.Fatal(err)
	}
}

// reads is a store that counts the events its Reads return.
type reads struct {
	nous.Store
	events int
}

func (s *reads) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	s.events += len(st.Events)
	return st, err
}

// List reads of a session with events the last append's batch only, as
// many events whatever the session's length, and of one without events
// the whole log, which is its creation's batch.
func TestListReadsLastBatch(t *testing.T) {
	store := &reads{Store: storetest.NewMemory()}
	svc := nousadk.NewSessionService(store)
	sess := mustCreate(t, svc, "app", "u", "long", nil)
	mustCreate(t, svc, "app", "u", "empty", map[string]any{"n": 1})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 50 {
		ev := &session.Event{ID: fmt.Sprint("e", i), Author: "user", Timestamp: at.Add(time.Duration(i) * time.Second),
			Actions: session.EventActions{StateDelta: map[string]any{"n": i}}}
		if err := svc.AppendEvent(bg, sess, ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, svc := range map[string]*nousadk.SessionService{"this service": svc, "a new one": nousadk.NewSessionService(store)} {
		store.events = 0
		r, err := svc.List(bg, &session.ListRequest{AppName: "app", UserID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Sessions {
			if s.ID() == "long" && (!s.LastUpdateTime().Equal(at.Add(49*time.Second)) || fmt.Sprint(state(s)["n"]) != "49") {
				t.Errorf("%s: the long session: updated %v, state %v", name, s.LastUpdateTime(), state(s))
			}
		}
		// The long session's event, deps_update and batch event; the
		// empty one's deps_update and batch event.
		if store.events != 3+2 {
			t.Errorf("%s: List read %d events of the sessions, want 5", name, store.events)
		}
	}
}
