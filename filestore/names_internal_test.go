package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/nous-go/nous"
)

// A damaged name file (cut anywhere, any byte flipped, or the ID of
// another log, or of the log that holds the name but with another name
// after it) is an error wrapping nous.ErrCorrupt: a Lookup and a
// LoadByName of the name fail so, never give a log, and a new log of that
// name is refused and not made; the log that holds the name still loads
// by its ID, and is deleted.
func TestDamagedNameFile(t *testing.T) {
	const name = "user 42/chat 7"
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder := nous.NewContext(nous.WithLogName(name))
	other := nous.NewContext()
	saveTurns(t, s, holder, "one")
	saveTurns(t, s, other, "two")
	good, err := os.ReadFile(s.namePath(name))
	if err != nil {
		t.Fatal(err)
	}
	if string(good) != holder.Log().ID().String()+"\n"+name {
		t.Fatalf("the name file holds %q", good)
	}
	damaged := map[string][]byte{
		"empty":                {},
		"not an ID":            []byte("not an ID\n" + name),
		"the ID alone":         []byte(holder.Log().ID().String()),
		"the ID and a newline": []byte(holder.Log().ID().String() + "\n"),
		"another name":         []byte(holder.Log().ID().String() + "\nuser 42/chat 8"),
		"the name and more":    []byte(holder.Log().ID().String() + "\n" + name + "\n"),
		"another log's ID":     []byte(other.Log().ID().String() + "\nuser 42"),
		"the lines swapped":    []byte(name + "\n" + holder.Log().ID().String()),
	}
	for n := range len(good) {
		damaged[fmt.Sprintf("cut to %d bytes", n)] = good[:n]
		flipped := slices.Clone(good)
		flipped[n] ^= 0xff
		damaged[fmt.Sprintf("byte %d flipped", n)] = flipped
	}
	for what, content := range damaged {
		if err := os.WriteFile(s.namePath(name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		if info, err := s.Lookup(ctx, name); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: Lookup gives %v, %v; want ErrCorrupt", what, info.ID, err)
		}
		if _, err := nous.LoadByName(ctx, s, name); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: LoadByName: %v, want ErrCorrupt", what, err)
		}
		again := nous.NewContext(nous.WithLogName(name))
		if err := again.AddMessage(nous.UserMessage("again")); err != nil {
			t.Fatal(err)
		}
		if err := again.Save(ctx, s); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: a new log of the name: %v, want ErrCorrupt", what, err)
		}
		if _, err := nous.Load(ctx, s, again.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
			t.Errorf("%s: a new log of the name was refused, and made: %v", what, err)
		}
		if got, err := os.ReadFile(s.namePath(name)); err != nil || string(got) != string(content) {
			t.Errorf("%s: the name file was changed to %q (%v)", what, got, err)
		}
		if _, err := nous.Load(ctx, s, holder.Log().ID()); err != nil {
			t.Errorf("%s: the log that holds the name: %v", what, err)
		}
	}
	if err := s.Delete(ctx, holder.Log().ID()); err != nil {
		t.Fatalf("delete the log that holds a damaged name: %v", err)
	}
	if _, err := nous.Load(ctx, s, holder.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a log deleted: %v", err)
	}
}

// endsWhenWaited is a context that ends the first time anyone waits for
// it to end (calls Done): a wait that honours it gives up at once, and
// what never waits goes on as under a context that never ends.
type endsWhenWaited struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newEndsWhenWaited() *endsWhenWaited {
	return &endsWhenWaited{Context: context.Background(), done: make(chan struct{})}
}

func (c *endsWhenWaited) Done() <-chan struct{} {
	c.once.Do(func() { close(c.done) })
	return c.done
}

func (c *endsWhenWaited) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func (c *endsWhenWaited) waited() bool { return c.Err() != nil }

// A new named log waits for the lock of the names while another holder
// (a process creating or deleting a name) has it; a context that ends the
// wait fails the save with its error, and makes neither the log nor its
// name. Once the lock is free, the save goes through.
func TestCreateNamedGivesUpWaitingForTheNamesLock(t *testing.T) {
	if !shared {
		t.Skip("no lock of the names where processes do not share a directory")
	}
	const name = "waits for the names"
	dir := t.TempDir()
	s, err := Open(dir, WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder, err := os.OpenFile(filepath.Join(dir, namesDir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := lockFile(context.Background(), holder); err != nil {
		t.Fatal(err)
	}
	c := nous.NewContext(nous.WithLogName(name))
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	ctx := newEndsWhenWaited()
	if err := c.Save(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("a save while another holds the lock of the names, the wait ended: %v, want context.Canceled", err)
	}
	if !ctx.waited() {
		t.Fatal("the save did not wait for the lock of the names")
	}
	bg := context.Background()
	if _, err := s.Lookup(bg, name); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("the name after a save that gave up: %v, want ErrNotFound", err)
	}
	if _, err := nous.Load(bg, s, c.Log().ID()); !errors.Is(err, nous.ErrNotFound) {
		t.Errorf("the log after a save that gave up: %v, want ErrNotFound", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, namesDir, "*")); len(left) != 1 || filepath.Base(left[0]) != "LOCK" {
		t.Errorf("the names folder after a save that gave up: %q", left)
	}
	holder.Close()
	if err := c.Save(bg, s); err != nil {
		t.Fatalf("the save once the lock is free: %v", err)
	}
	got, err := nous.LoadByName(bg, s, name)
	if err != nil || got.Log().ID() != c.Log().ID() || got.Len() != 1 {
		t.Fatalf("LoadByName once saved: %v", err)
	}
}
