package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/storetest"
)

func serialized(t *testing.T, c *nous.Context) []byte {
	t.Helper()
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Refresh folds what another writer saved: replacements, insertions after
// a message (patched tool calls), plain appends; into a context whose view
// a clone shares, which the clone does not see.
func TestRefreshFolds(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	a := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
	call := nous.ToolCall{ID: "c1", Name: "f"}
	mustDo(t, a.AddMessages(nous.UserMessage("q"), nous.AssistantMessage("", call)))
	mustDo(t, a.Save(ctx, s))
	b, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	clone := b.Clone() // shares b's view
	before := serialized(t, clone)

	mustDo(t, a.AddMessage(nous.UserMessage("next")))
	if n := a.PatchDanglingToolCalls(); n != 1 {
		t.Fatalf("patched %d calls", n)
	}
	mustDo(t, a.ReplaceMessageRange(0, 0, nous.SystemMessage("summary")))
	for i := range 600 { // past a chunk of the log
		mustDo(t, a.AddMessage(nous.UserMessage(string(rune('a'+i%26)))))
	}
	mustDo(t, a.Save(ctx, s))
	mustDo(t, b.Refresh(ctx, s))
	if x, y := serialized(t, a), serialized(t, b); !bytes.Equal(x, y) {
		t.Fatalf("refreshed context differs from the saver's:\n%s\n%s", y, x)
	}
	if got := serialized(t, clone); !bytes.Equal(got, before) {
		t.Fatal("Refresh changed a clone of the context")
	}
	mustDo(t, clone.AddMessage(nous.UserMessage("the clone's own")))
	if x, y := serialized(t, a), serialized(t, b); !bytes.Equal(x, y) {
		t.Fatal("the clone's append reached the refreshed context")
	}

	// Plain appends refreshed into a view a clone shares: the context's
	// later replacement must not reach the clone.
	clone = b.Clone()
	before = serialized(t, clone)
	mustDo(t, a.AddMessage(nous.UserMessage("plain")))
	mustDo(t, a.Save(ctx, s))
	mustDo(t, b.Refresh(ctx, s))
	mustDo(t, b.ReplaceMessage(b.Len()-2, nous.UserMessage("replaced after the refresh")))
	if got := serialized(t, clone); !bytes.Equal(got, before) {
		t.Fatal("a replacement after Refresh reached a clone")
	}
}

// badEvents is a store whose Read gives one event changed by bad.
type badEvents struct {
	nous.Store
	bad func(e map[string]any)
}

func (s badEvents) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	if err != nil || len(st.Events) == 0 {
		return st, err
	}
	events := append([]json.RawMessage(nil), st.Events...)
	last := len(events) - 1
	var e map[string]any
	if err := json.Unmarshal(events[last], &e); err != nil {
		return st, err
	}
	s.bad(e)
	events[last], _ = json.Marshal(e)
	st.Events = events
	return st, nil
}

// A Refresh that meets a bad stored event, after good ones, fails with
// ErrCorrupt and leaves the context as it was: its later appends and a
// later Refresh see none of what the failed one began.
func TestRefreshBadEventChangesNothing(t *testing.T) {
	ctx := context.Background()
	for name, bad := range map[string]func(e map[string]any){
		"seq":             func(e map[string]any) { e["seq"] = 99 },
		"replace anchors": func(e map[string]any) { e["type"], e["first"], e["last"] = "replace", 1000, 1001 },
		"after":           func(e map[string]any) { e["after"] = 1000 },
		"no message":      func(e map[string]any) { e["type"] = "user_message"; delete(e, "message") },
		// the view is [6 2 3 4 5]: 4 comes after 3
		"replace anchors reversed": func(e map[string]any) { e["type"], e["first"], e["last"] = "replace", 4, 3 },
	} {
		t.Run(name, func(t *testing.T) {
			s := storetest.NewMemory()
			a := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
			mustDo(t, a.AddMessages(nous.UserMessage("one"), nous.UserMessage("two")))
			mustDo(t, a.Save(ctx, s))
			b, err := nous.Load(ctx, s, a.Log().ID())
			mustDo(t, err)
			for range 3 {
				mustDo(t, a.AddMessage(nous.UserMessage("more")))
			}
			mustDo(t, a.ReplaceMessage(0, nous.UserMessage("one, replaced")))
			mustDo(t, a.AddMessage(nous.UserMessage("last"))) // the event made bad
			mustDo(t, a.Save(ctx, s))
			before := serialized(t, b)
			if err := b.Refresh(ctx, badEvents{s, bad}); !errors.Is(err, nous.ErrCorrupt) {
				t.Fatalf("Refresh of a bad event: %v, want ErrCorrupt", err)
			}
			if got := serialized(t, b); !bytes.Equal(got, before) {
				t.Fatalf("a failed Refresh changed the context:\n%s\n%s", got, before)
			}
			mustDo(t, b.Refresh(ctx, s))
			if x, y := serialized(t, a), serialized(t, b); !bytes.Equal(x, y) {
				t.Fatalf("Refresh after a failed one:\n%s\n%s", y, x)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lying is a store whose Read results edit changes.
type lying struct {
	nous.Store
	edit func(st *nous.Stored)
}

func (s *lying) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	if err == nil && s.edit != nil {
		s.edit(&st)
	}
	return st, err
}

// A store that returns other events than its head says, or state that does
// not decode, is ErrCorrupt to Load and to Refresh, never a panic, and the
// refreshed context is unchanged.
func TestStoreThatLies(t *testing.T) {
	ctx := context.Background()
	for name, edit := range map[string]func(st *nous.Stored){
		"an event short":    func(st *nous.Stored) { st.Events = st.Events[:len(st.Events)-1] },
		"an event too many": func(st *nous.Stored) { st.Events = append(st.Events, st.Events[len(st.Events)-1]) },
		"head beyond":       func(st *nous.Stored) { st.Info.Head += 3 },
		"seqs swapped": func(st *nous.Stored) {
			n := len(st.Events)
			st.Events[n-1], st.Events[n-2] = st.Events[n-2], st.Events[n-1]
		},
		"an event not JSON":     func(st *nous.Stored) { st.Events[0] = json.RawMessage(`{`) },
		"state not JSON":        func(st *nous.Stored) { st.State = []byte(`[`) },
		"state of version 99":   func(st *nous.Stored) { st.State = []byte(`{"version":99}`) },
		"tool calls not a list": func(st *nous.Stored) { st.State = []byte(`{"version":2,"tool_calls":"x"}`) },
		"tool calls apart that the log contradicts": func(st *nous.Stored) {
			st.State = append(bytes.TrimSuffix(st.State, []byte("}")), `,"tool_calls":[{"id":"x","name":"f"}]}`...)
		},
		"a call on a message event": func(st *nous.Stored) {
			n := len(st.Events)
			st.Events[n-1] = append(bytes.TrimSuffix(st.Events[n-1], []byte("}")), `,"call":{"id":"x","name":"f"}}`...)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := &lying{Store: storetest.NewMemory()}
			a := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
			mustDo(t, a.AddMessages(nous.UserMessage("one"), nous.UserMessage("two")))
			a.AddToolCall(nous.ToolCall{ID: "a", Name: "f"})
			mustDo(t, a.Save(ctx, s))
			b, err := nous.Load(ctx, s, a.Log().ID())
			mustDo(t, err)
			mustDo(t, a.AddMessages(nous.UserMessage("three"), nous.UserMessage("four")))
			mustDo(t, a.Save(ctx, s))
			s.edit = edit
			if _, err := nous.Load(ctx, s, a.Log().ID()); !errors.Is(err, nous.ErrCorrupt) {
				t.Errorf("Load: %v, want ErrCorrupt", err)
			}
			before := serialized(t, b)
			if err := b.Refresh(ctx, s); !errors.Is(err, nous.ErrCorrupt) {
				t.Errorf("Refresh: %v, want ErrCorrupt", err)
			}
			if !bytes.Equal(serialized(t, b), before) {
				t.Error("a failed Refresh changed the context")
			}
		})
	}
}

// A store handle of a comparable type that holds something that cannot be
// compared (a map in an interface field) is saved to without a panic: it is
// never taken for the handle last used, so an idle save stores the state.
type mapHolder struct {
	nous.Store
	extra any
}

func TestSaveThroughUncomparableHandle(t *testing.T) {
	ctx := context.Background()
	s := mapHolder{Store: storetest.NewMemory(), extra: map[string]int{"a": 1}}
	c := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.Save(ctx, s)) // compared with the handle of the first save
	got, err := nous.Load(ctx, s, c.Log().ID())
	mustDo(t, err)
	if !bytes.Equal(serialized(t, got), serialized(t, c)) {
		t.Fatal("the stored context differs")
	}
}

// A Refresh whose first stored event replaces a message (changing the view
// in place) and whose second is bad leaves the context as it was.
func TestRefreshBadEventAfterReplaceChangesNothing(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	a := nous.NewContext(nous.WithLogger(slog.New(slog.DiscardHandler)))
	mustDo(t, a.AddMessages(nous.UserMessage("one"), nous.AssistantMessage("two"), nous.UserMessage("three")))
	mustDo(t, a.Save(ctx, s))
	b, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	mustDo(t, a.ReplaceMessage(1, nous.AssistantMessage("two, replaced")))
	mustDo(t, a.AddMessage(nous.AssistantMessage("four"))) // the event made bad
	mustDo(t, a.Save(ctx, s))
	before := serialized(t, b)
	if err := b.Refresh(ctx, badEvents{s, func(e map[string]any) { e["after"] = 1000 }}); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("Refresh of a bad event: %v, want ErrCorrupt", err)
	}
	if got := serialized(t, b); !bytes.Equal(got, before) {
		t.Fatalf("a failed Refresh changed the context:\n%s\n%s", got, before)
	}
	mustDo(t, b.Refresh(ctx, s))
	if x, y := serialized(t, a), serialized(t, b); !bytes.Equal(x, y) {
		t.Fatalf("Refresh after a failed one:\n%s\n%s", y, x)
	}
}

// The conformance suite over the memory store: the guarantees Save, Load
// and Refresh give on any backend (a lost reply's batch taken as the
// context's own only when it is, conflicts, idle saves, forks) are this
// package's to keep, and its own tests check them.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) nous.Store { return storetest.NewMemory() })
}

// A document may hold a log ID of any UUID version; the time in such an ID
// is no creation time. Stores take the run's start instead, so the log
// saves and lists with a real time, in the file store too.
func TestLogIDOfAnotherVersionSaves(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), filestore.WithoutSync())
	mustDo(t, err)
	defer fs.Close()
	c := nous.NewContext()
	mustDo(t, c.AddMessage(nous.UserMessage("hi")))
	data, err := c.Serialize()
	mustDo(t, err)
	const v4 = "ffffffff-ffff-4fff-bfff-ffffffffffff"
	d, err := nous.Deserialize(bytes.Replace(data, []byte(c.Log().ID().String()), []byte(v4), 1))
	mustDo(t, err)
	for name, s := range map[string]nous.Store{"memory": storetest.NewMemory(), "file": fs} {
		e, err := nous.Deserialize(bytes.Replace(data, []byte(c.Log().ID().String()), []byte(v4), 1))
		mustDo(t, err)
		if err := e.Save(ctx, s); err != nil {
			t.Fatalf("%s store: a save of a log whose ID is a UUID v4: %v", name, err)
		}
		for info, err := range s.List(ctx, nous.ListOptions{}) {
			mustDo(t, err)
			if !info.CreatedAt.Equal(d.StartedAt) {
				t.Errorf("%s store: created at %s, want the run's start %s", name, info.CreatedAt, d.StartedAt)
			}
		}
	}
}
