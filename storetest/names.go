package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// named returns a new context whose log has name and labels, with one
// message.
func named(t *testing.T, name string, labels map[string]string) *nous.Context {
	t.Helper()
	c := nous.NewContext(nous.WithLogger(quiet), nous.WithLogName(name), nous.WithLogLabels(labels))
	must(t, c.AddMessage(nous.UserMessage("hello from "+name)))
	return c
}

// A log keeps the name and labels of its first save: Lookup finds it by
// name, LoadByName loads it with them, List reports them. Another log
// created under the name stores nothing and conflicts; a fork has no name
// and keeps the labels; once the log is deleted the name is free. Names
// are any valid UTF-8 of up to MaxNameBytes bytes but NUL; others, and
// labels out of bounds, are refused by Save and by the backend alike.
func testNames(t *testing.T, s nous.Store) {
	ctx := context.Background()
	labels := map[string]string{"app": "support", "user": "42"}
	const name = "user 42/chat 7: ünïcode, ../.., \\ and spaces"
	c := named(t, name, labels)
	must(t, c.Save(ctx, s))
	info, got := checkNamed(t, s, c, name, labels)

	// More turns through the loaded context keep the name.
	must(t, got.AddMessage(nous.UserMessage("and more")))
	must(t, got.Save(ctx, s))
	if again, err := s.Lookup(ctx, name); err != nil || again.ID != c.Log().ID() || again.Head != int64(got.Log().Len()) {
		t.Fatalf("Lookup after a second save: %v head %d, %v", again.ID, again.Head, err)
	}

	// Another log under the name: nothing stored.
	other := named(t, name, nil)
	refused(t, "a second log of the name", other, nous.ErrConflict, func() error { return other.Save(ctx, s) })
	if _, err := s.Read(ctx, other.Log().ID(), 0); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("the refused log was stored: %v", err)
	}

	// A fork: no name, the labels.
	fork := got.Clone()
	must(t, fork.Save(ctx, s))
	if f := infoOf(t, s, fork.Log().ID()); f.Name != "" || !maps.Equal(f.Labels, labels) {
		t.Fatalf("a fork stored with name %q labels %v, want none and %v", f.Name, f.Labels, labels)
	}
	if again, err := s.Lookup(ctx, name); err != nil || again.ID != c.Log().ID() {
		t.Fatalf("Lookup after a fork was saved: %v, %v", again.ID, err)
	}

	for _, missing := range []string{"", "no such name", name + " ", "nul \x00", "bad \xff", strings.Repeat("x", nous.MaxNameBytes+1)} {
		if _, err := s.Lookup(ctx, missing); !errors.Is(err, nous.ErrNotFound) {
			t.Fatalf("Lookup(%q): %v, want ErrNotFound", missing, err)
		}
	}
	if _, err := nous.LoadByName(ctx, s, "no such name"); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("LoadByName of no log: %v, want ErrNotFound", err)
	}

	// Deleted: the name is free, for a log of its own.
	must(t, s.Delete(ctx, c.Log().ID()))
	if _, err := s.Lookup(ctx, name); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("Lookup of a deleted log's name: %v, want ErrNotFound", err)
	}
	must(t, other.Save(ctx, s))
	if again, err := s.Lookup(ctx, name); err != nil || again.ID != other.Log().ID() || len(again.Labels) != 0 {
		t.Fatalf("Lookup of the name taken again: %v %v, %v", again.ID, again.Labels, err)
	}

	// Names at the bounds, and past them.
	checkNameBounds(t, s, info)
}

// checkNamed checks the log c saved to s, of name and labels (whose
// "app" label is "support"): Lookup finds it by name, with its labels and
// head; List reports them; LoadByName loads it as it is, with them; and
// the info Lookup returns is the caller's, whose labels may be written
// without changing the store's. It returns what Lookup found, and the
// context LoadByName loaded.
func checkNamed(t *testing.T, s nous.Store, c *nous.Context, name string, labels map[string]string) (nous.LogInfo, *nous.Context) {
	t.Helper()
	ctx := context.Background()
	info, err := s.Lookup(ctx, name)
	must(t, err)
	if info.ID != c.Log().ID() || info.Name != name || !maps.Equal(info.Labels, labels) || info.Head != int64(c.Log().Len()) {
		t.Fatalf("Lookup(%q) = %s %q %v head %d, want %s with its labels %v, head %d", name, info.ID, info.Name, info.Labels, info.Head, c.Log().ID(), labels, c.Log().Len())
	}
	if listed := infoOf(t, s, c.Log().ID()); listed.Name != name || !maps.Equal(listed.Labels, labels) {
		t.Fatalf("List reports name %q labels %v, want %q %v", listed.Name, listed.Labels, name, labels)
	}
	got, err := nous.LoadByName(ctx, s, name)
	must(t, err)
	sameContext(t, c, got)
	if got.Log().Name() != name || !maps.Equal(got.Log().Labels(), labels) {
		t.Fatalf("loaded with name %q labels %v", got.Log().Name(), got.Log().Labels())
	}
	info.Labels["app"] = "scribbled" // the caller's copy
	if again, err := s.Lookup(ctx, name); err != nil || again.Labels["app"] != "support" {
		t.Fatalf("Lookup after its result was written: %v %v", again.Labels, err)
	}
	return info, got
}

// checkNameBounds checks names and labels at their bounds, which s stores,
// and past them, which Save refuses and so does the backend's Append of a
// first batch of them (its times info's, a stored log's): each an error
// wrapping [nous.ErrInvalidName].
func checkNameBounds(t *testing.T, s nous.Store, info nous.LogInfo) {
	t.Helper()
	ctx := context.Background()
	long := strings.Repeat("é", nous.MaxNameBytes/2)
	must(t, named(t, long, map[string]string{long: long}).Save(ctx, s))
	if info, err := s.Lookup(ctx, long); err != nil || info.Labels[long] != long {
		t.Fatalf("a name of %d bytes: %v", len(long), err)
	}
	many := map[string]string{}
	for i := range nous.MaxLabels {
		many[fmt.Sprint("k", i)] = ""
	}
	must(t, named(t, "many labels", many).Save(ctx, s))
	tooMany := maps.Clone(many)
	tooMany["one more"] = ""
	for what, bad := range map[string]*nous.Context{
		"a name too long":      named(t, long+"x", nil),
		"a name of bad UTF-8":  named(t, "bad \xff", nil),
		"a name with a NUL":    named(t, "nul \x00", nil),
		"an empty label key":   named(t, "empty key", map[string]string{"": "v"}),
		"a label value of NUL": named(t, "nul value", map[string]string{"k": "\x00"}),
		"too many labels":      named(t, "too many", tooMany),
	} {
		refused(t, what, bad, nous.ErrInvalidName, func() error { return bad.Save(ctx, s) })
		// The backend refuses it too.
		b := nous.Batch{Info: nous.LogInfo{ID: bad.Log().ID(), Head: 0, Incarnation: uuid.New(), Name: bad.Log().Name(), Labels: bad.Log().Labels(),
			CreatedAt: info.CreatedAt, UpdatedAt: info.UpdatedAt}, State: []byte(`{}`)}
		if err := s.Append(ctx, b); !errors.Is(err, nous.ErrInvalidName) {
			t.Fatalf("Append of %s: %v, want ErrInvalidName", what, err)
		}
	}
}

// Contexts racing to create one name through the store's handles: exactly
// one save wins; the others conflict and store nothing; the winner's log
// is the one Lookup finds.
func testNamesRace(t *testing.T, handles []nous.Store) {
	ctx := context.Background()
	const racers = 8
	const name = "the one session"
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, racers)
	errs := make([]error, racers)
	for i := range racers {
		c := named(t, name, map[string]string{"racer": fmt.Sprint(i)})
		ids[i] = c.Log().ID()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Save(ctx, handles[i%len(handles)])
		}()
	}
	wg.Wait()
	var won []int
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, i)
		case !errors.Is(err, nous.ErrConflict):
			t.Fatalf("racer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d racers created the name, want 1", len(won))
	}
	for _, h := range handles {
		info, err := h.Lookup(ctx, name)
		must(t, err)
		if info.ID != ids[won[0]] {
			t.Fatalf("Lookup finds %s, the winner is %s", info.ID, ids[won[0]])
		}
		n := 0
		for info, err := range h.List(ctx, nous.ListOptions{}) {
			must(t, err)
			if info.Name == name {
				n++
			}
			if i := slices.Index(ids, info.ID); i >= 0 && i != won[0] {
				t.Fatalf("the refused racer %d's log is stored", i)
			}
		}
		if n != 1 {
			t.Fatalf("%d logs listed with the name", n)
		}
	}
}

// List selects by labels: the logs whose labels hold every pair asked for,
// in ID order, Limit counting those selected, After a cursor over them.
func testListLabels(t *testing.T, s nous.Store) {
	ctx := context.Background()
	sets := []map[string]string{
		{"app": "a", "user": "1"}, {"app": "a", "user": "2"}, {"app": "b", "user": "1"},
		nil, {"app": "a"}, {"app": "a", "user": "1", "tier": "gold"}, {"user": "1"},
	}
	var ids []uuid.UUID
	for i, labels := range sets {
		name := "" // every other log has a name: names do not change what labels select
		if i%2 == 0 {
			name = fmt.Sprint("log ", i)
		}
		c := named(t, name, labels)
		must(t, c.Save(ctx, s))
		ids = append(ids, c.Log().ID())
	}
	list := func(opts nous.ListOptions) []uuid.UUID {
		var out []uuid.UUID
		for info, err := range s.List(ctx, opts) {
			must(t, err)
			if !info.HasLabels(opts.Labels) {
				t.Fatalf("List(%v) yields %s with labels %v", opts.Labels, info.ID, info.Labels)
			}
			out = append(out, info.ID)
		}
		return out
	}
	pick := func(is ...int) []uuid.UUID {
		var out []uuid.UUID
		for _, i := range is {
			out = append(out, ids[i])
		}
		return out
	}
	for _, tt := range []struct {
		labels map[string]string
		want   []uuid.UUID
	}{
		{map[string]string{"app": "a"}, pick(0, 1, 4, 5)},
		{map[string]string{"app": "a", "user": "1"}, pick(0, 5)},
		{map[string]string{"user": "1"}, pick(0, 2, 5, 6)},
		{map[string]string{"tier": "gold", "app": "a", "user": "1"}, pick(5)},
		{map[string]string{"app": "c"}, nil},
		{map[string]string{"app": ""}, nil},
		{map[string]string{"app": "\x00"}, nil}, // labels no log can hold select nothing
		{map[string]string{"app": "\xff"}, nil},
		{map[string]string{}, ids},
	} {
		if got := list(nous.ListOptions{Labels: tt.labels}); !slices.Equal(got, tt.want) {
			t.Fatalf("List(labels %v) = %v, want %v", tt.labels, got, tt.want)
		}
	}
	app := map[string]string{"app": "a"}
	if got := list(nous.ListOptions{Labels: app, Limit: 2}); !slices.Equal(got, pick(0, 1)) {
		t.Fatalf("List(app=a, limit 2) = %v", got)
	}
	if got := list(nous.ListOptions{Labels: app, After: ids[1], Limit: 1}); !slices.Equal(got, pick(4)) {
		t.Fatalf("List(app=a, after the second, limit 1) = %v", got)
	}
}

// A name and labels come back through a reopened handle, and a name a log
// held before the store was reopened is still its.
func testNamesReopen(t *testing.T, s nous.Store, reopen func(t *testing.T, s nous.Store) nous.Store) {
	ctx := context.Background()
	labels := map[string]string{"app": "x"}
	c := named(t, "kept across a reopen", labels)
	must(t, c.Save(ctx, s))
	s = reopen(t, s)
	got, err := nous.LoadByName(ctx, s, "kept across a reopen")
	must(t, err)
	sameContext(t, c, got)
	if !maps.Equal(got.Log().Labels(), labels) {
		t.Fatalf("labels after a reopen: %v", got.Log().Labels())
	}
	dup := named(t, "kept across a reopen", nil)
	refused(t, "the name after a reopen", dup, nous.ErrConflict, func() error { return dup.Save(ctx, s) })
}
