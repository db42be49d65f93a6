package nous_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// zeroIncarnation is a store that reports no incarnation, as one written
// before incarnations were might.
type zeroIncarnation struct{ nous.Store }

func (z zeroIncarnation) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := z.Store.Read(ctx, id, after)
	st.Info.Incarnation = uuid.Nil
	return st, err
}

// A log whose stored incarnation is the zero UUID is never given a new one
// by a save (which the store refuses), and the failed save changes
// nothing: a Refresh that worked before it works after it.
func TestRefreshAfterARefusedSaveOfNoIncarnation(t *testing.T) {
	ctx := context.Background()
	mem := storetest.NewMemory()
	a := nous.NewContext()
	mustDo(t, a.AddMessage(nous.UserMessage("imported")))
	mustDo(t, a.Save(ctx, mem))
	s := zeroIncarnation{mem}
	c, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	mustDo(t, c.Refresh(ctx, s))
	mustDo(t, c.AddMessage(nous.UserMessage("next")))
	if err := c.Save(ctx, s); err == nil {
		t.Fatal("a save without an incarnation was taken")
	}
	if err := c.Refresh(ctx, s); err != nil { // the store has not moved on: c left as it is
		t.Fatalf("Refresh after a failed save: %v", err)
	}
}

// A Refresh of one replacement allocates about as much on a view of
// 100,000 messages as on one of 1,000 (it changes the view in place).
func TestRefreshCostsTheNewEvents(t *testing.T) {
	ctx := context.Background()
	refresh := func(n int) uint64 {
		s := storetest.NewMemory()
		a := nous.NewContext(quietOption)
		for i := range n {
			mustDo(t, a.AddMessage(nous.UserMessage(fmt.Sprint(i))))
		}
		mustDo(t, a.Save(ctx, s))
		b, err := nous.Load(ctx, s, a.Log().ID())
		mustDo(t, err)
		mustDo(t, a.AddMessage(nous.UserMessage("first growth of b's view")))
		mustDo(t, a.Save(ctx, s))
		mustDo(t, b.Refresh(ctx, s))
		mustDo(t, a.ReplaceMessage(a.Len()-1, nous.UserMessage("edited")))
		mustDo(t, a.Save(ctx, s))
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		mustDo(t, b.Refresh(ctx, s))
		runtime.ReadMemStats(&m1)
		if x, y := documentOf(t, a), documentOf(t, b); !bytes.Equal([]byte(x), []byte(y)) {
			t.Fatal("refreshed context differs")
		}
		return m1.TotalAlloc - m0.TotalAlloc
	}
	small, large := refresh(1_000), refresh(100_000)
	if large > 4*small {
		t.Fatalf("a Refresh of one replace event allocates %d bytes on a view of 1,000 messages, %d on one of 100,000", small, large)
	}
}

// With no unsaved changes, Refresh takes what another writer saved,
// the same NaN in metadata notwithstanding.
func TestRefreshWithNaNInToolCallMetadata(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"score": math.NaN()}})
	mustDo(t, c.Save(ctx, s))
	d, err := nous.Load(ctx, s, c.Log().ID())
	mustDo(t, err)
	mustDo(t, d.AddMessage(nous.UserMessage("two")))
	mustDo(t, d.Save(ctx, s))
	if err := c.Refresh(ctx, s); err != nil {
		t.Fatalf("Refresh of a context without changes: %v", err)
	}
}

// BenchmarkRefresh: a refresh that takes another writer's turn, which
// appends, replaces its own last message or inserts a patched result next
// to its call, costs the same in a view of 100,000 messages as in one of
// 1,000: it finds anchors by seq, not by walking the view.
func BenchmarkRefresh(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		for _, kind := range []string{"append", "replace", "insert"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, kind), func(b *testing.B) {
				ctx, s := context.Background(), storetest.NewMemory()
				w := nous.NewContext(quietOption)
				for i := range n / 2 {
					mustBench(b, w.AddMessages(nous.UserMessage(fmt.Sprint("q", i)), nous.AssistantMessage(fmt.Sprint("a", i))))
				}
				mustBench(b, w.Save(ctx, s))
				r, err := nous.Load(ctx, s, w.Log().ID())
				mustBench(b, err)
				turn := 0
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					turn++
					id := fmt.Sprint("call", turn)
					switch kind {
					case "append":
						mustBench(b, w.AddMessage(nous.UserMessage("next")))
					case "replace":
						mustBench(b, w.AddMessage(nous.UserMessage("next")))
						mustBench(b, w.ReplaceMessage(w.Len()-1, nous.UserMessage("next, edited")))
					case "insert":
						mustBench(b, w.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: id, Name: "f"})))
						w.PatchDanglingToolCalls()
						mustBench(b, w.AddMessage(nous.AssistantMessage("done")))
					}
					mustBench(b, w.Save(ctx, s))
					b.StartTimer()
					mustBench(b, r.Refresh(ctx, s))
				}
			})
		}
	}
}

func mustBench(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// dbHandle stands for a runtime's handle in deps: JSON writes it as {}.
type dbHandle struct{ conn func() }

// A refresh takes what another writer changed and keeps what the store
// never held (a secret, a handle whose func JSON cannot hold) and what it
// holds unchanged as the context has it (typed values stay typed).
func TestRefreshKeepsWhatTheStoreNeverHeld(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	db := &dbHandle{conn: func() {}}
	a := nous.NewContext(quietOption, nous.WithDeps(map[string]any{"user": "ada"}))
	a.Deps["api_key"] = "sk-secret"
	a.Deps["db"] = db
	a.Deps["tags"] = []string{"x", "y"}
	a.Deps["topic"] = "first"
	mustDo(t, a.AddMessage(nous.UserMessage("one")))
	mustDo(t, a.Save(ctx, s))
	b, err := nous.Load(ctx, s, a.Log().ID())
	mustDo(t, err)
	mustDo(t, b.AddMessage(nous.UserMessage("two")))
	b.Deps["topic"] = "second"
	b.Deps["added"] = 1
	mustDo(t, b.Save(ctx, s))

	mustDo(t, a.Refresh(ctx, s))
	if a.Deps["api_key"] != "sk-secret" || a.Deps["db"] != db {
		t.Errorf("what the store never held was dropped: api_key %v, db %#v", a.Deps["api_key"], a.Deps["db"])
	}
	if tags, ok := a.Deps["tags"].([]string); !ok || len(tags) != 2 {
		t.Errorf("an unchanged typed value came back as %T", a.Deps["tags"])
	}
	if a.Deps["topic"] != "second" || a.Deps["added"] != 1 || a.Deps["user"] != "ada" {
		t.Errorf("what the other writer changed was not taken: %v", a.Deps)
	}
	mustDo(t, a.AddMessage(nous.UserMessage("three")))
	mustDo(t, a.Save(ctx, s)) // and the refreshed context saves on
}
