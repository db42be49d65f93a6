package filestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// Every rule of the suite holds when every save rewrites its log's file:
// racing writers through two handles, Watch, forks, names, lost replies.
func TestConformanceRewriting(t *testing.T) {
	filestore.RewriteAlways(t)
	conformance(t)
}

// stateSize is a store that remembers the size of the last state
// document it was given.
type stateSize struct {
	nous.Store
	state int
}

func (s *stateSize) Append(ctx context.Context, b nous.Batch) error {
	s.state = len(b.State)
	return s.Store.Append(ctx, b)
}

// eventBytes returns the bytes of c's events, as a store keeps them.
func eventBytes(t *testing.T, c *nous.Context) int {
	t.Helper()
	n := 0
	for i := range c.Log().Len() {
		b, err := c.AppendEventJSON(nil, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	return n
}

// A log whose deps change a 20 KB value at every save holds its events and
// about one state, not a state per save: after 1,000 saves the file is
// within twice its events' bytes and one state document, and within that
// bound at every save once it is past the size below which no file is
// rewritten. It loads as saved, and a reopened store goes on.
func TestBoundedGrowth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs := open(t, dir, filestore.WithoutSync())
	s := &stateSize{Store: fs}
	c := nous.NewContext(nous.WithDeps(map[string]any{"notes": ""}))
	name := filepath.Join(dir, c.Log().ID().String()+".log")
	saves := 1000
	if testing.Short() {
		saves = 300
	}
	var largest float64
	seen, events := 0, 0 // the events counted, and their bytes
	for i := range saves {
		if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
			t.Fatal(err)
		}
		c.Deps["notes"] = strings.Repeat(fmt.Sprintf("%07d ", i), 20<<10/8) // 20 KB, all of it changed
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		for ; seen < c.Log().Len(); seen++ {
			b, err := c.AppendEventJSON(nil, int64(seen+1))
			if err != nil {
				t.Fatal(err)
			}
			events += len(b)
		}
		state := s.state
		ratio := float64(fi.Size()) / float64(state+events)
		if fi.Size() <= 64<<10 {
			continue
		}
		largest = max(largest, ratio)
		if ratio > 2 {
			t.Fatalf("save %d: a file of %d bytes for %d bytes of events and a state of %d: %.2fx, over 2x", i+1, fi.Size(), events, state, ratio)
		}
	}
	t.Logf("the file, past 64 KiB, at most %.2fx its events and one state", largest)
	if events != eventBytes(t, c) {
		t.Fatalf("counted %d bytes of events, they are %d", events, eventBytes(t, c))
	}
	got, err := nous.Load(ctx, s, c.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.Serialize()
	if doc, _ := got.Serialize(); string(doc) != string(want) {
		t.Fatal("the log rewritten loads otherwise than saved")
	}
	fs.Close()
	fs = open(t, dir)
	again, err := nous.Load(ctx, fs, c.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := again.Serialize(); string(doc) != string(want) {
		t.Fatal("the log rewritten loads otherwise after a reopen")
	}
	if err := again.AddMessage(nous.UserMessage("after the reopen")); err != nil {
		t.Fatal(err)
	}
	if err := again.Save(ctx, fs); err != nil {
		t.Fatal(err)
	}
}

// rewrittenSaves returns a context saved n times, its file rewritten at
// save k (counting from 1) and appended to otherwise, with the bytes of
// its log file and the context's document after each save from k on.
func rewrittenSaves(t *testing.T, dir string, n, k int) (*nous.Context, [][]byte, []string) {
	t.Helper()
	s := open(t, dir, filestore.WithoutSync())
	c := nous.NewContext()
	c.SetBatchKey("the first")
	var files [][]byte
	var docs []string
	for i := range n {
		if i+1 == k {
			filestore.RewriteAlways(t)
		} else {
			filestore.RewriteNever(t)
		}
		if err := c.AddMessage(nous.UserMessage(fmt.Sprintf("turn %d \x00", i))); err != nil {
			t.Fatal(err)
		}
		c.IncrementIteration()
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if i+1 < k {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, c.Log().ID().String()+".log"))
		if err != nil {
			t.Fatal(err)
		}
		if i+1 == k && filestore.FileVersion(b) != 5 {
			t.Fatalf("the rewritten file is of version %d, want 5", filestore.FileVersion(b))
		}
		files = append(files, b)
		doc, err := c.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	s.Close()
	if len(files[0]) >= len(files[len(files)-1]) || !strings.HasPrefix(string(files[len(files)-1]), string(files[0])) {
		t.Fatal("the saves after the rewrite did not append to it")
	}
	return c, files, docs
}

// Cutting a rewritten log file at every byte offset, then opening and
// loading, gives the context of the last save whose bytes are all there
// (the rewrite's, or one appended after it), ErrCorrupt inside the
// rewritten frame (a file appears whole, by a rename), and a later save
// works, its batch keys kept.
func TestRewrittenTruncatedAtEveryOffset(t *testing.T) {
	c, files, docs := rewrittenSaves(t, t.TempDir(), 5, 3)
	checkCuts(t, c.Log().ID(), files, docs, func(t *testing.T, cut int, got *nous.Context) {
		if !got.HasBatch("the first") {
			t.Fatalf("cut at %d: the first batch's key is lost", cut)
		}
	})
}

// Flipping any byte of a rewritten log file gives ErrCorrupt, or, in the
// last frame only, a cut to the save before it: never another context.
func TestRewrittenEveryByteFlipped(t *testing.T) {
	c, files, docs := rewrittenSaves(t, t.TempDir(), 4, 2)
	checkFlips(t, c.Log().ID(), files, docs)
}

// Two handles of one directory take turns on one log, each save rewriting
// its file: each handle sees the other's file under the log's name, never
// the one it read before, whose inode the file that replaces it next may
// take once it is gone.
func TestRewritesByTwoHandles(t *testing.T) {
	if !filestore.Shared {
		t.Skip("one handle of a directory at a time here")
	}
	filestore.RewriteAlways(t)
	ctx := context.Background()
	dir := t.TempDir()
	stores := []*filestore.Store{open(t, dir, filestore.WithoutSync()), open(t, dir, filestore.WithoutSync())}
	c := nous.NewContext()
	if err := c.Save(ctx, stores[0]); err != nil {
		t.Fatal(err)
	}
	ctxs := []*nous.Context{c, nil}
	for i := range 300 {
		k := i / 2 % 2 // two turns each: the second rewrite may give its file the inode of the one the other handle read
		s := stores[k]
		if ctxs[k] == nil {
			var err error
			if ctxs[k], err = nous.Load(ctx, s, c.Log().ID()); err != nil {
				t.Fatal(err)
			}
		} else if err := ctxs[k].Refresh(ctx, s); err != nil {
			t.Fatalf("turn %d: refresh: %v", i, err)
		}
		if err := ctxs[k].AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
			t.Fatal(err)
		}
		if err := ctxs[k].Save(ctx, s); err != nil {
			t.Fatalf("turn %d: save: %v", i, err)
		}
	}
	got, err := nous.Load(ctx, stores[0], c.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 300 {
		t.Fatalf("%d messages, want 300", got.Len())
	}
}
