package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// A done ctx ends a Refresh, a Load, a LoadByName and a Save before they
// reach the store, whatever the store does with ctx: each fails with the
// ctx's error, reads and writes nothing, and a Refresh or a Save leaves
// the context as it was, whether or not the store moved on.
func testCanceledBeforeTheStore(t *testing.T, s nous.Store) {
	bg := context.Background()
	done, cancel := context.WithCancel(bg)
	cancel()
	a := conversation(t, 1)
	must(t, a.Save(bg, s))
	named := nous.NewContext(nous.WithLogger(quiet), nous.WithLogName("canceled before the store"))
	must(t, named.AddMessage(nous.UserMessage("a named log")))
	must(t, named.Save(bg, s))
	b := load(t, s, a.Log().ID())

	d := &deaf{Store: s}
	refused(t, "Refresh with a done ctx, the store as b saw it", b, context.Canceled, func() error { return b.Refresh(done, d) })
	must(t, a.AddMessage(nous.UserMessage("a goes on")))
	must(t, a.Save(bg, s))
	refused(t, "Refresh with a done ctx, the store moved on", b, context.Canceled, func() error { return b.Refresh(done, d) })
	if _, err := nous.Load(done, d, a.Log().ID()); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a done ctx: %v", err)
	}
	if _, err := nous.LoadByName(done, d, "canceled before the store"); !errors.Is(err, context.Canceled) {
		t.Errorf("LoadByName with a done ctx: %v", err)
	}
	must(t, a.AddMessage(nous.UserMessage("unsaved")))
	refused(t, "Save with a done ctx", a, context.Canceled, func() error { return a.Save(done, d) })
	if d.calls != 0 {
		t.Fatalf("operations with a done ctx made %d calls on the store", d.calls)
	}

	// With a live ctx, each goes on as if nothing had been tried.
	must(t, b.Refresh(bg, s))
	must(t, a.Save(bg, s))
	must(t, b.Refresh(bg, s))
	sameContext(t, a, b)
	sameContext(t, named, load(t, s, named.Log().ID()))
}

// deaf is a store that never looks at ctx: it passes every call on with a
// ctx that is never done, and counts the calls.
type deaf struct {
	nous.Store
	calls int
}

func (d *deaf) Append(_ context.Context, b nous.Batch) error {
	d.calls++
	return d.Store.Append(context.Background(), b)
}

func (d *deaf) Read(_ context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	d.calls++
	return d.Store.Read(context.Background(), id, after)
}

func (d *deaf) Lookup(_ context.Context, name string) (nous.LogInfo, error) {
	d.calls++
	return d.Store.Lookup(context.Background(), name)
}
