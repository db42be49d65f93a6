package nous_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// unsavedStep makes one random change a turn makes, and does not save it.
func unsavedStep(t *testing.T, r *rand.Rand, c *nous.Context, i int) {
	t.Helper()
	switch r.IntN(8) {
	case 0, 1:
		mustDo(t, c.AddMessage(nous.UserMessage(fmt.Sprint("unsaved ", i))))
	case 2:
		call := nous.ToolCall{ID: fmt.Sprint("c", i), Name: "f", Arguments: json.RawMessage(`{}`)}
		mustDo(t, c.AddMessage(nous.AssistantMessage("", call)))
		c.AddToolCall(call)
		mustDo(t, c.AddMessage(nous.ToolMessage(call.ID, "f", "ok")))
	case 3:
		mustDo(t, nous.NewContextUpdate().Append("notes", i).Set("n", i).Apply(c))
	case 4:
		c.Deps["direct"] = i
		delete(c.Deps, "n")
	case 5:
		c.SystemPrompt = fmt.Sprint("prompt ", i)
		c.IncrementIteration()
	case 6:
		if n := c.Len(); n >= 2 { // refused when it would split a call from its result: then nothing changes
			_ = c.ReplaceMessageRange(0, 2, nous.SystemMessage(fmt.Sprint("summary ", i)))
		}
	default:
		mustDo(t, c.LogEvent(nous.EventTurnStart, map[string]any{"turn": i}))
	}
}

// Discard takes a context back to what it last saved, whatever it did
// since (messages, calls, updates, direct writes of the deps and the
// state, replacements): it is then what a Load of the store gives, saves
// on, and refreshes; a clone made before it sees none of what c does
// after; the deps the store never holds stay.
func TestDiscardIsWhatTheStoreHolds(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(nous.Seed(t), 11))
	s := storetest.NewMemory()
	for run := range 30 {
		c := nous.NewContext(quietOption, nous.WithDeps(map[string]any{"api_key": "sk-secret", "user": "ada"}))
		handle := make(chan int)
		c.Deps["handle"] = handle // JSON cannot hold it: never stored
		for i := range r.IntN(20) {
			unsavedStep(t, r, c, i)
		}
		mustDo(t, c.Save(ctx, s))
		for round := range 5 {
			for i := range r.IntN(12) {
				unsavedStep(t, r, c, 100*round+i)
			}
			clone := c.Clone()
			before := documentOf(t, clone)
			mustDo(t, c.Discard())
			want := mustLoad(t, s, c.Log().ID())
			if got, w := documentOf(t, c), documentOf(t, want); got != w {
				t.Fatalf("run %d round %d: discarded\n%s\nloaded\n%s", run, round, got, w)
			}
			if c.Deps["api_key"] != "sk-secret" || c.Deps["handle"] != handle {
				t.Fatalf("run %d: Discard dropped deps the store never holds: %v", run, c.Deps)
			}
			head := headOf(t, s, c.Log().ID())
			mustDo(t, c.Save(ctx, s))
			if got := headOf(t, s, c.Log().ID()); got != head {
				t.Fatalf("run %d round %d: a save right after Discard stored events (head %d to %d)", run, round, head, got)
			}
			mustDo(t, c.AddMessage(nous.UserMessage("after discard")))
			if documentOf(t, clone) != before {
				t.Fatalf("run %d: a clone made before Discard sees what c appended after it", run)
			}
			if r.IntN(2) == 0 { // another writer, then a refresh
				other := mustLoad(t, s, c.Log().ID())
				mustDo(t, other.AddMessage(nous.UserMessage("other")))
				mustDo(t, other.Save(ctx, s))
				if err := c.Refresh(ctx, s); err == nil {
					t.Fatalf("run %d: Refresh with an unsaved message took the other writer's", run)
				}
				mustDo(t, c.Discard())
				mustDo(t, c.Refresh(ctx, s))
			}
			mustDo(t, c.Save(ctx, s))
			if got, w := documentOf(t, c), documentOf(t, mustLoad(t, s, c.Log().ID())); got != w {
				t.Fatalf("run %d round %d: saved after discard\n%s\nloaded\n%s", run, round, got, w)
			}
		}
	}
	if err := nous.NewContext().Discard(); err == nil {
		t.Fatal("Discard of a context never saved: no error")
	}
}
