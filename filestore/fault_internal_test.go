package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// A failed write or fsync fails the save, poisons the log for the handle
// (no retry: its file's end is unknown), and a store opened again holds the
// log as of the acknowledged saves, or with the failed one whole, never
// part of it; saves then go on.
func TestFaults(t *testing.T) {
	for _, op := range []string{"write", "sync"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			s, fs := openRecorded(t, dir)
			ctx := context.Background()
			c := nous.NewContext()
			saveTurns(t, s, c, "one", "two")
			acked, err := c.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			injected := errors.New("injected " + op + " failure")
			fs.failing(op, injected)
			if err := c.AddMessage(nous.UserMessage("three")); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(ctx, s); !errors.Is(err, injected) {
				t.Fatalf("save with a failed %s: %v", op, err)
			}
			fs.failing("", nil)
			if err := c.Save(ctx, s); err == nil {
				t.Fatal("a poisoned log saved again without a reopen")
			}
			s.Close()

			s, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := nous.Load(ctx, s, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			doc, err := got.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			whole, _ := c.Serialize()
			if string(doc) != string(acked) && string(doc) != string(whole) {
				t.Fatalf("reopened after a failed %s: neither the acknowledged log nor the whole failed save", op)
			}
			if err := got.AddMessage(nous.UserMessage("four")); err != nil {
				t.Fatal(err)
			}
			if err := got.Save(ctx, s); err != nil {
				t.Fatalf("save after the reopen: %v", err)
			}
		})
	}
}

// openRecorded opens the store in dir, writing through a testFS.
func openRecorded(t *testing.T, dir string, opts ...Option) (*Store, *testFS) {
	t.Helper()
	s, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	fs := newTestFS()
	s.fs = fs
	return s, fs
}

// saveTurns adds a user message of each text to c and saves it to s.
func saveTurns(t *testing.T, s *Store, c *nous.Context, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if err := c.AddMessage(nous.UserMessage(text)); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// A first save whose file write fails leaves no log and no temporary
// file, and the save can be retried; one whose directory fsync fails after
// the rename poisons the log (its name may not survive a crash) until the
// store is opened again, which finds it, and the context's retry then
// stores nothing twice.
func TestCreateFaults(t *testing.T) {
	ctx := context.Background()
	for _, op := range []string{"create", "syncdir"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			injected := errors.New("injected " + op + " failure")
			fs := newTestFS()
			s.fs = fs
			fs.failing(op, injected)
			c := nous.NewContext()
			if err := c.AddMessage(nous.UserMessage("one")); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(ctx, s); !errors.Is(err, injected) {
				t.Fatalf("first save with a failed %s: %v", op, err)
			}
			fs.failing("", nil)
			tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
			if len(tmps) != 0 {
				t.Fatalf("temporary files left: %v", tmps)
			}
			if op == "syncdir" {
				if err := c.Save(ctx, s); err == nil {
					t.Fatal("a poisoned log saved again without a reopen")
				}
				s.Close()
				if s, err = Open(dir); err != nil {
					t.Fatal(err)
				}
			}
			defer s.Close()
			if err := c.Save(ctx, s); err != nil {
				t.Fatalf("the retried save: %v", err)
			}
			got, err := nous.Load(ctx, s, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != 1 || got.Log().Len() != 2 {
				t.Fatalf("loaded %d messages, %d events, want 1 and 2 (the message and its batch event)", got.Len(), got.Log().Len())
			}
		})
	}
}

// A save that returns nil is on disk: every byte written to the log's file
// is covered by an fsync before it returns, and a new log's file, written
// aside and fsynced, is renamed into place and its directory fsynced
// before the first save returns. Without sync, nothing is fsynced.
func TestSavesAreDurable(t *testing.T) {
	ctx := context.Background()
	for _, noSync := range []bool{false, true} {
		var opts []Option
		if noSync {
			opts = append(opts, WithoutSync())
		}
		s, fs := openRecorded(t, t.TempDir(), opts...)
		c := nous.NewContext()
		name := c.Log().ID().String() + suffix
		for i := range 4 {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
				t.Fatal(err)
			}
			before := fs.count()
			if err := c.Save(ctx, s); err != nil {
				t.Fatal(err)
			}
			ops := fs.since(before)
			switch {
			case noSync:
				if hasInOrder(ops, "sync") || hasInOrder(ops, "syncdir") {
					t.Fatalf("save %d without sync: %v", i, ops)
				}
			case i == 0:
				tmp := ""
				if len(ops) > 0 {
					tmp = strings.TrimPrefix(ops[0], "write ")
				}
				if !strings.HasPrefix(tmp, name+".") || !strings.HasSuffix(tmp, ".tmp") ||
					!hasInOrder(ops, "write "+tmp, "sync "+tmp, "link "+tmp+" "+name, "syncdir") {
					t.Fatalf("the first save: %v; want the file written aside, fsynced, linked into place, its directory fsynced", ops)
				}
			default:
				if !hasInOrder(ops, "write "+name, "sync "+name) {
					t.Fatalf("save %d: %v; want its frame written, then fsynced", i, ops)
				}
			}
			if u := fs.unsynced(); !noSync && len(u) > 0 {
				t.Fatalf("save %d returned with bytes no fsync covered: %v", i, u)
			}
		}
		s.Close()
	}
}

// A rewrite is durable before the save returns: the new file written
// aside, fsynced, renamed over the log's, the directory fsynced, every
// byte covered by an fsync.
func TestRewriteIsDurable(t *testing.T) {
	setRewrite(t, 0, [2]int64{0, 1})
	ctx := context.Background()
	s, fs := openRecorded(t, t.TempDir())
	defer s.Close()
	c := nous.NewContext()
	name := c.Log().ID().String() + suffix
	for i := range 3 {
		if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
			t.Fatal(err)
		}
		before := fs.count()
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
		ops := fs.since(before)
		if i > 0 {
			tmp := ""
			if len(ops) > 0 {
				tmp = strings.TrimPrefix(ops[0], "write ")
			}
			if !strings.HasPrefix(tmp, name+".") || !strings.HasSuffix(tmp, ".tmp") ||
				!hasInOrder(ops, "write "+tmp, "sync "+tmp, "rename "+tmp+" "+name, "syncdir") {
				t.Fatalf("save %d: %v; want the file written aside, fsynced, renamed over the log's, its directory fsynced", i, ops)
			}
		}
		if u := fs.unsynced(); len(u) > 0 {
			t.Fatalf("save %d returned with bytes no fsync covered: %v", i, u)
		}
	}
}

// A rewrite that fails before its file takes the log's name (the new
// file's write or the rename) leaves the log's file as it was and the save
// to an append, which stores it; no temporary file stays. One whose
// directory fsync fails poisons the log until the store is opened again,
// which finds the rewritten file, and the context's retry stores nothing
// twice.
func TestRewriteFaults(t *testing.T) {
	setRewrite(t, 0, [2]int64{0, 1})
	ctx := context.Background()
	for _, op := range []string{"create", "rename", "syncdir"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			s, fs := openRecorded(t, dir)
			c := nous.NewContext()
			saveTurns(t, s, c, "one", "two")
			injected := errors.New("injected " + op + " failure")
			fs.failing(op, injected)
			if err := c.AddMessage(nous.UserMessage("three")); err != nil {
				t.Fatal(err)
			}
			err := c.Save(ctx, s)
			fs.failing("", nil)
			if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) != 0 {
				t.Fatalf("temporary files left: %v", tmps)
			}
			if op != "syncdir" {
				if err != nil {
					t.Fatalf("a save whose rewrite failed at %s: %v, want it appended", op, err)
				}
				raw, err := os.ReadFile(s.path(c.Log().ID()))
				if err != nil {
					t.Fatal(err)
				}
				if lf, err := parseLog(raw); err != nil || len(lf.frames) != 2 || lf.info.Head != int64(c.Log().Len()) {
					t.Fatalf("after a failed rewrite: %d frames, head %d, %v; want the rewritten frame and one appended", len(lf.frames), lf.info.Head, err)
				}
			} else {
				if !errors.Is(err, injected) {
					t.Fatalf("a save whose rewrite's directory fsync failed: %v", err)
				}
				if err := c.Save(ctx, s); err == nil {
					t.Fatal("a poisoned log saved again without a reopen")
				}
				s.Close()
				if s, err = Open(dir); err != nil {
					t.Fatal(err)
				}
				if err := c.Save(ctx, s); err != nil {
					t.Fatalf("the retry after a reopen: %v", err)
				}
			}
			defer s.Close()
			got, err := nous.Load(ctx, s, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			want, _ := c.Serialize()
			if doc, _ := got.Serialize(); string(doc) != string(want) {
				t.Fatalf("loaded otherwise than saved after a failed %s", op)
			}
		})
	}
}
