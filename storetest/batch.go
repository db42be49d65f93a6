package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
)

func testCanceled(t *testing.T, s nous.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := conversation(t, 1)
	if err := c.Save(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save with a canceled ctx: %v", err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatalf("Save after a canceled one: %v (nothing must have been stored)", err)
	}
	if _, err := nous.Load(ctx, s, c.Log().ID()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a canceled ctx: %v", err)
	}
	if err := s.Delete(ctx, c.Log().ID()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Delete with a canceled ctx: %v", err)
	}
	for _, err := range s.List(ctx, nous.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List with a canceled ctx: %v", err)
		}
	}
	// Idle, with a done ctx, a save still says so.
	if err := c.Save(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("idle Save with a canceled ctx: %v", err)
	}
}

// counting counts the appends that reach a store, and the events of the
// last.
type counting struct {
	nous.Store
	appends int
	events  int // in the last batch
}

func (c *counting) Append(ctx context.Context, b nous.Batch) error {
	c.appends++
	c.events = len(b.Events)
	return c.Store.Append(ctx, b)
}

func testIdle(t *testing.T, s nous.Store) {
	ctx := context.Background()
	cs := &counting{Store: s}
	c := conversation(t, 1)
	must(t, c.Save(ctx, cs))
	must(t, c.Save(ctx, cs))
	c.SetSystemPromptOverlay("not state")
	c.Notify = func(string, any) {}
	must(t, c.Save(ctx, cs))
	if cs.appends != 1 {
		t.Fatalf("%d appends for one save and two with nothing new", cs.appends)
	}
	c.MaxIterations++ // state changed: saved
	must(t, c.Save(ctx, cs))
	if cs.appends != 2 {
		t.Fatalf("a change of state was not saved")
	}
	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"a tool call added", func() { c.AddToolCall(nous.ToolCall{ID: "t", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}) }},
		{"a tool call appended directly", func() { c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: "u", Name: "g"}) }},
	} {
		before := cs.appends
		tc.change()
		must(t, c.Save(ctx, cs))
		if cs.appends != before+1 {
			t.Fatalf("%s: not saved", tc.name)
		}
		sameContext(t, c, load(t, s, c.Log().ID()))
	}
	// The context's redaction rule is the one its saves obey (the rule
	// is not stored: a loaded context has the default one).
	c.Redact = func(key string) bool { return key == "user" }
	must(t, c.Save(ctx, cs))
	if got := load(t, s, c.Log().ID()); got.Deps["user"] != nil || got.Deps["api_key"] != "sk-secret" {
		t.Fatalf("the stored deps do not follow the context's redaction rule: %v", got.Deps)
	}
}

// The backend's own methods honour ctx: once it is done they fail and store
// nothing.
func testBackendHonoursContext(t *testing.T, s nous.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := conversation(t, 1)
	must(t, c.Save(context.Background(), s))
	if _, err := s.Read(ctx, c.Log().ID(), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a done ctx: %v", err)
	}
	info := nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, Incarnation: uuid.New(), UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: info, State: []byte(`{"version":2}`)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a done ctx: %v", err)
	}
	if _, err := nous.Load(context.Background(), s, info.ID); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("an Append with a done ctx stored something: %v", err)
	}
}

// A batch after a seq of a log the store does not hold is refused with
// nous.ErrNotFound and stores nothing.
func testBadFirstBatch(t *testing.T, s nous.Store) {
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	info := nous.LogInfo{ID: id, Head: 4, Incarnation: uuid.New(), UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: info, After: 3, State: []byte(`{"version":2}`), Events: []json.RawMessage{[]byte(`{}`)}}); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a batch after seq 3 of a missing log: %v, want ErrNotFound", err)
	}
	if _, err := s.Read(ctx, id, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a refused first batch left something: %v", err)
	}
	for info, err := range s.List(ctx, nous.ListOptions{}) {
		if err != nil || info.ID == id {
			t.Fatalf("List after a refused first batch: %v %v", info.ID, err)
		}
	}
	nilID := nous.LogInfo{Incarnation: uuid.New(), UpdatedAt: time.Now()}
	if err := s.Append(ctx, nous.Batch{Info: nilID, State: []byte(`{"version":2}`)}); err == nil {
		t.Fatal("a batch of the nil log ID was accepted")
	}
}

// Batches that do not add up are refused, and change nothing: a head that
// is not After plus the events.
func testBadBatches(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	st, err := s.Read(ctx, c.Log().ID(), 0)
	must(t, err)
	good := nous.Batch{Info: st.Info, After: st.Info.Head, State: st.State}
	good.Info.UpdatedAt = time.Now()
	event := json.RawMessage(fmt.Sprintf(`{"seq":%d,"type":"turn_start","created_at":"2026-11-30T12:00:00Z"}`, st.Info.Head+1))
	for name, change := range map[string]func(b *nous.Batch){
		"head beyond the events": func(b *nous.Batch) { b.Info.Head += 2; b.Events = []json.RawMessage{event} },
		"head short of them":     func(b *nous.Batch) { b.Events = []json.RawMessage{event} },
	} {
		b := good
		change(&b)
		if err := s.Append(ctx, b); err == nil {
			t.Errorf("%s: accepted", name)
		}
		sameContext(t, c, load(t, s, c.Log().ID()))
	}
	must(t, s.Append(ctx, good)) // the store still takes a good batch
	first := nous.Batch{Info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, CreatedAt: time.Now(), UpdatedAt: time.Now()}, State: st.State}
	if err := s.Append(ctx, first); err == nil {
		t.Error("a first batch without an incarnation: accepted")
	}
	if _, err := s.Read(ctx, first.Info.ID, 0); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("a refused first batch: Read gives %v, want ErrNotFound", err)
	}
}
