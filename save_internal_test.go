package nous

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// downStore is a store that cannot be reached.
type downStore struct{}

var errDown = errors.New("the store is down")

func (downStore) Append(context.Context, Batch) error { return errDown }
func (downStore) Read(context.Context, uuid.UUID, int64) (Stored, error) {
	return Stored{}, errDown
}
func (downStore) List(context.Context, ListOptions) iter.Seq2[LogInfo, error] { return nil }
func (downStore) Delete(context.Context, uuid.UUID) error                     { return errDown }
func (downStore) Lookup(context.Context, string) (LogInfo, error)             { return LogInfo{}, errDown }

// Saves that fail against a store that is down keep at most maxAttempts
// batches, the newest.
func TestFailedSavesKeepLittle(t *testing.T) {
	for _, events := range []bool{true, false} {
		c := NewContext()
		for i := range 50 {
			if events {
				if err := c.AddMessage(UserMessage(fmt.Sprint("turn ", i))); err != nil {
					t.Fatal(err)
				}
			}
			c.Iteration = i + 1
			if err := c.Save(context.Background(), downStore{}); !errors.Is(err, errDown) {
				t.Fatalf("save: %v", err)
			}
		}
		a := c.persist.synced.attempts
		if len(a) != maxAttempts {
			t.Fatalf("events %t: %d batches kept, want %d", events, len(a), maxAttempts)
		}
		if !strings.Contains(string(a[len(a)-1].state), `"iteration":50`) || !strings.Contains(string(a[0].state), `"iteration":35`) {
			t.Errorf("events %t: kept the batches of iterations %.60s to %.60s, want 35 to 50", events, a[0].state, a[len(a)-1].state)
		}
	}
}

// sinkStore takes every batch and keeps nothing: what a save costs the
// context itself.
type sinkStore struct{ downStore }

func (sinkStore) Append(context.Context, Batch) error { return nil }

// BenchmarkSaveRecordedToolCalls: a save of one new message in a context
// that recorded calls tool calls, each with a 1 KB signature: the same for
// any number of calls, as they are events the save does not read again.
func BenchmarkSaveRecordedToolCalls(b *testing.B) {
	sig := strings.Repeat("s", 1024)
	for _, calls := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint("calls=", calls), func(b *testing.B) {
			c := NewContext()
			for i := range calls {
				c.AddToolCall(ToolCall{ID: fmt.Sprint("call_", i), Name: "f", Arguments: []byte(`{"a":1}`), Metadata: map[string]any{"thought_signature": sig}})
			}
			ctx, s := context.Background(), sinkStore{}
			if err := c.Save(ctx, s); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.AddMessage(UserMessage("next")); err != nil {
					b.Fatal(err)
				}
				if err := c.Save(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// msgIndex finds a message event's message by seq, and nothing for a seq
// that is no message event's; entryOf finds an entry anywhere in a view,
// from either end.
func TestRefreshFindsAnchorsBySeq(t *testing.T) {
	c := NewContext()
	for i := range 5 {
		if err := c.AddMessage(UserMessage(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if err := c.LogEvent(EventTurnStart, nil); err != nil {
			t.Fatal(err)
		}
	}
	for seq := int64(0); seq <= 11; seq++ {
		want := int64(-1)
		if seq%2 == 1 && seq <= 9 {
			want = (seq - 1) / 2
		}
		if got := c.log.msgIndex(seq); got != want {
			t.Errorf("msgIndex(%d) = %d, want %d", seq, got, want)
		}
	}
	view := []int64{7, 3, 9, 1, 4}
	for i, mi := range view {
		if got := entryOf(view, mi); got != i {
			t.Errorf("entryOf(%d) = %d, want %d", mi, got, i)
		}
	}
	for _, mi := range []int64{-1, 0, 5} {
		if got := entryOf(view, mi); got != -1 {
			t.Errorf("entryOf(%d) = %d, want -1", mi, got)
		}
	}
}

// BenchmarkSaveTurn: a turn (a question, a tool call, its result, a
// ContextUpdate that appends to a list in the deps) and its save, in a
// context of the given number of turns, to a store that keeps nothing: a
// save encodes what changed, so a turn of a long run costs about what a
// turn of a short one does. Run with -benchtime=200x: each iteration adds
// a turn.
func BenchmarkSaveTurn(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprint("turns=", turns), func(b *testing.B) {
			c := NewContext(WithSystemPrompt("You answer weather questions."))
			ctx, s := context.Background(), sinkStore{}
			i := 0
			turn := func() {
				city := fmt.Sprint("city ", i%7)
				id := fmt.Sprint("call_", i)
				err := errors.Join(
					c.AddMessage(UserMessage(fmt.Sprint("Turn ", i, ": what is the weather in ", city, " today?"))),
					c.AddMessage(AssistantMessage("", ToolCall{ID: id, Name: "get_weather", Arguments: []byte(`{"city":"` + city + `"}`)})),
					NewContextUpdate().Set("last_city", city).Append("cities", city).Apply(c),
					c.AddMessage(ToolMessage(id, "get_weather", `{"temp_c":21,"sky":"clear"}`)),
					c.Save(ctx, s))
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			for range turns {
				turn()
			}
			b.ReportAllocs()
			for b.Loop() {
				turn()
			}
		})
	}
}
