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

func testRoundTrip(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 3)
	must(t, c.Save(ctx, s))
	got := load(t, s, c.Log().ID())
	sameContext(t, c, got)
	if _, ok := got.Deps["api_key"]; ok {
		t.Fatal("a secret was stored")
	}
	if _, err := nous.Load(ctx, s, uuid.Must(uuid.NewV7())); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Load of an unknown log: %v, want ErrNotFound", err)
	}
}

func testIncremental(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, s))
	for i := range 5 {
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprint("more ", i))))
		c.IncrementIteration()
		must(t, c.Save(ctx, s))
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
	}
	// A loaded context saves on from where it was loaded.
	got := load(t, s, c.Log().ID())
	must(t, got.AddMessage(nous.AssistantMessage("from the loaded one")))
	must(t, got.Save(ctx, s))
	again := load(t, s, c.Log().ID())
	sameContext(t, got, again)
}

func testForks(t *testing.T, s nous.Store) {
	ctx := context.Background()
	for _, parentFirst := range []bool{true, false} {
		c := conversation(t, 2)
		fork := c.Clone()
		must(t, fork.AddMessage(nous.UserMessage("the fork's own")))
		if parentFirst {
			must(t, c.Save(ctx, s))
			must(t, fork.Save(ctx, s))
		} else {
			must(t, fork.Save(ctx, s))
			must(t, c.Save(ctx, s))
		}
		// Whatever happens to the parent, the fork loads as saved.
		must(t, c.AddMessage(nous.UserMessage("the parent goes on")))
		must(t, c.Save(ctx, s))
		must(t, s.Delete(ctx, c.Log().ID()))
		got := load(t, s, fork.Log().ID())
		sameContext(t, fork, got)
		pid, seq, ok := got.Log().Parent()
		if wantID, wantSeq, _ := fork.Log().Parent(); !ok || pid != wantID || seq != wantSeq {
			t.Fatalf("loaded fork's parent %v %d %v, want %v %d", pid, seq, ok, wantID, wantSeq)
		}
	}
}

func testDelete(t *testing.T, s nous.Store) {
	ctx := context.Background()
	a, b := conversation(t, 1), conversation(t, 1)
	must(t, a.Save(ctx, s))
	must(t, b.Save(ctx, s))
	must(t, s.Delete(ctx, a.Log().ID()))
	if _, err := nous.Load(ctx, s, a.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Load after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, a.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Delete of a deleted log: %v, want ErrNotFound", err)
	}
	got := load(t, s, b.Log().ID())
	sameContext(t, b, got)
	must(t, a.AddMessage(nous.UserMessage("after the delete")))
	if err := a.Save(ctx, s); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Save of a deleted log: %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, s nous.Store) {
	ctx := context.Background()
	var ids []uuid.UUID
	var head int64
	for range 5 {
		c := conversation(t, 1)
		must(t, c.Save(ctx, s))
		ids, head = append(ids, c.Log().ID()), int64(c.Log().Len())
		time.Sleep(2 * time.Millisecond) // distinct UUID v7 times, for CreatedAt
	}
	list := func(opts nous.ListOptions) []nous.LogInfo {
		var out []nous.LogInfo
		for info, err := range s.List(ctx, opts) {
			must(t, err)
			out = append(out, info)
		}
		return out
	}
	all := list(nous.ListOptions{})
	if len(all) != 5 {
		t.Fatalf("List gave %d logs, want 5", len(all))
	}
	for i, info := range all {
		if info.ID != ids[i] {
			t.Fatalf("List[%d] = %v, want %v (ID order)", i, info.ID, ids[i])
		}
		sec, nsec := ids[i].Time().UnixTime()
		if info.Head != head || info.UpdatedAt.IsZero() || !info.CreatedAt.Equal(time.Unix(sec, nsec)) {
			t.Fatalf("List[%d] = %+v: head or times wrong (created at the time of its UUID v7)", i, info)
		}
	}
	// UpdatedAt is the time of the last save.
	time.Sleep(2 * time.Millisecond)
	c := load(t, s, ids[0])
	must(t, c.AddMessage(nous.UserMessage("later")))
	must(t, c.Save(ctx, s))
	if later := list(nous.ListOptions{Limit: 1})[0]; !later.UpdatedAt.After(all[0].UpdatedAt) || later.Head != int64(c.Log().Len()) {
		t.Fatalf("after a later save, List gives %+v; before it %+v", later, all[0])
	}
	page := list(nous.ListOptions{After: ids[1], Limit: 2})
	if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[3] {
		t.Fatalf("List after %v limit 2 = %v", ids[1], page)
	}
}

// What was saved through one handle loads, and saves on, through the next.
func testReopen(t *testing.T, s nous.Store, reopen func(t *testing.T, s nous.Store) nous.Store) {
	ctx := context.Background()
	c := conversation(t, 2)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	fork := c.Clone()
	must(t, fork.AddMessage(nous.UserMessage("the fork")))
	must(t, fork.Save(ctx, s))
	for round := range 3 {
		s = reopen(t, s)
		got := load(t, s, c.Log().ID())
		sameContext(t, c, got)
		gotFork := load(t, s, fork.Log().ID())
		sameContext(t, fork, gotFork)
		must(t, c.AddMessage(nous.UserMessage(fmt.Sprint("after reopen ", round))))
		c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("r", round), Name: "f"})
		must(t, c.Save(ctx, s))
	}
}

// A context knows its log as one store holds it: saving it into a second
// store that does not hold the log is an error, never a silent success,
// even with nothing new to save; a copy made with Deserialize saves there.
func testSecondStore(t *testing.T, a, b nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, a))
	refused(t, "an idle save into a second store", c, nous.ErrNotFound, func() error { return c.Save(ctx, b) })
	must(t, c.AddMessage(nous.UserMessage("more")))
	refused(t, "a save into a second store", c, nous.ErrNotFound, func() error { return c.Save(ctx, b) })
	data, err := c.Serialize()
	must(t, err)
	copied, err := nous.DeserializeWithLogger(data, quiet)
	must(t, err)
	must(t, copied.Save(ctx, b))
	sameContext(t, copied, load(t, b, c.Log().ID()))
	must(t, c.Save(ctx, a)) // c still saves to its own store
	sameContext(t, c, load(t, a, c.Log().ID()))
}

// scribbling is a store whose callers write over each batch once Append
// returns, as a caller that reuses its buffers does.
type scribbling struct{ nous.Store }

func (s scribbling) Append(ctx context.Context, b nous.Batch) error {
	err := s.Store.Append(ctx, b)
	for _, p := range append([]json.RawMessage{b.State}, b.Events...) {
		for i := range p {
			p[i] = 'x'
		}
	}
	return err
}

// A store keeps its own copy of what Append was given, the state included:
// once Append returns, the batch's slices are the caller's again.
func testAppendCopies(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	must(t, c.Save(ctx, scribbling{s}))
	sameContext(t, c, load(t, s, c.Log().ID()))
	must(t, c.AddMessage(nous.UserMessage("more")))
	c.IncrementIteration()
	must(t, c.Save(ctx, scribbling{s}))
	sameContext(t, c, load(t, s, c.Log().ID()))
}

// What Read returns is the caller's: changing it changes nothing stored.
// Events after a seq beyond the head are none.
func testReadCopies(t *testing.T, s nous.Store) {
	ctx := context.Background()
	c := conversation(t, 1)
	c.AddToolCall(nous.ToolCall{ID: "t1", Name: "f"})
	must(t, c.Save(ctx, s))
	st, err := s.Read(ctx, c.Log().ID(), 0)
	must(t, err)
	for _, b := range append([]json.RawMessage{st.State}, st.Events...) {
		for i := range b {
			b[i] = 'x'
		}
	}
	sameContext(t, c, load(t, s, c.Log().ID()))
	st, err = s.Read(ctx, c.Log().ID(), st.Info.Head+5)
	must(t, err)
	if len(st.Events) != 0 {
		t.Fatalf("%d events after a seq beyond the head", len(st.Events))
	}
}
