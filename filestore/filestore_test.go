package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/storetest"
)

func open(t *testing.T, dir string, opts ...filestore.Option) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { conformance(t) }

// conformance runs the suite on stores in directories of their own, each
// reopened and opened a second time where processes share a directory.
func conformance(t *testing.T) {
	dirs := map[nous.Store]string{}
	opts := []storetest.Option{storetest.WithReopen(func(t *testing.T, s nous.Store) nous.Store {
		dir := dirs[s]
		s.(*filestore.Store).Close()
		again := open(t, dir)
		dirs[again] = dir
		return again
	})}
	if filestore.Shared {
		opts = append(opts, storetest.WithSecondHandle(func(t *testing.T, s nous.Store) nous.Store { return open(t, dirs[s]) }))
	}
	storetest.Run(t, func(t *testing.T) nous.Store {
		dir := t.TempDir()
		s := open(t, dir)
		dirs[s] = dir
		return s
	}, opts...)
}

func TestConformanceWithoutSync(t *testing.T) {
	storetest.Run(t, func(t *testing.T) nous.Store { return open(t, t.TempDir(), filestore.WithoutSync()) })
}

// saves returns a context saved n times, and the bytes of its log file
// after each save.
func saves(t *testing.T, dir string, n int) (*nous.Context, [][]byte, []string) {
	t.Helper()
	s := open(t, dir, filestore.WithoutSync())
	c := nous.NewContext()
	var files [][]byte
	var docs []string
	for i := range n {
		if err := c.AddMessage(nous.UserMessage(fmt.Sprintf("turn %d \x00", i))); err != nil {
			t.Fatal(err)
		}
		c.IncrementIteration()
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, c.Log().ID().String()+".log"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		doc, err := c.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	s.Close()
	return c, files, docs
}

// Cutting the log file at every byte offset, then opening and loading,
// gives the context of the last save whose bytes are all there, and a
// later save works.
func TestTruncatedAtEveryOffset(t *testing.T) {
	c, files, docs := saves(t, t.TempDir(), 4)
	checkCuts(t, c.Log().ID(), files, docs, nil)
}

// checkCuts cuts the last of files, the bytes of log id's file after the
// saves whose documents are docs, each a prefix of the next, at every byte
// offset, and checks that opening and loading gives the document of the
// last save whose bytes are all there, ErrCorrupt inside the file's first
// frame (a log file appears whole: written aside, then renamed), and that
// a later save works. check, when set, checks each context loaded.
func checkCuts(t *testing.T, id uuid.UUID, files [][]byte, docs []string, check func(t *testing.T, cut int, c *nous.Context)) {
	t.Helper()
	full := files[len(files)-1]
	for cut := 0; cut <= len(full); cut++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, id.String()+".log"), full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		s := open(t, dir, filestore.WithoutSync())
		want := -1 // the last save wholly present
		for i, f := range files {
			if len(f) <= cut {
				want = i
			}
		}
		got, err := nous.Load(context.Background(), s, id)
		if want < 0 {
			if !errors.Is(err, nous.ErrCorrupt) {
				t.Fatalf("cut at %d, inside the first frame: %v, want ErrCorrupt", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		doc, err := got.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if string(doc) != docs[want] {
			t.Fatalf("cut at %d: loaded a context that is not save %d", cut, want)
		}
		if check != nil {
			check(t, cut, got)
		}
		if err := got.AddMessage(nous.UserMessage("after the crash")); err != nil {
			t.Fatal(err)
		}
		if err := got.Save(context.Background(), s); err != nil {
			t.Fatalf("cut at %d: a save after recovery: %v", cut, err)
		}
		if _, err := nous.Load(context.Background(), s, id); err != nil {
			t.Fatalf("cut at %d: load after the save: %v", cut, err)
		}
	}
}

// Flipping any byte of a log file gives ErrCorrupt, or, in the last frame
// only, a torn-tail cut to the save before it: never another context, never
// an earlier save lost.
func TestEveryByteFlipped(t *testing.T) {
	c, files, docs := saves(t, t.TempDir(), 3)
	checkFlips(t, c.Log().ID(), files, docs)
}

// checkFlips flips each byte of the last of files, the bytes of log id's
// file after the saves whose documents are docs, and checks that loading
// gives ErrCorrupt, the last save, or, for a byte of the last frame, the
// save before it.
func checkFlips(t *testing.T, id uuid.UUID, files [][]byte, docs []string) {
	t.Helper()
	full := files[len(files)-1]
	for i := range full {
		dir := t.TempDir()
		b := append([]byte(nil), full...)
		b[i] ^= 0x41
		if err := os.WriteFile(filepath.Join(dir, id.String()+".log"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		s := open(t, dir, filestore.WithoutSync())
		got, err := nous.Load(context.Background(), s, id)
		switch {
		case errors.Is(err, nous.ErrCorrupt):
			continue
		case err != nil:
			t.Fatalf("flip at %d: %v, want ErrCorrupt or a cut", i, err)
		}
		doc, err := got.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		lastFrame := i >= len(files[len(files)-2])
		if string(doc) != docs[len(docs)-1] && !(lastFrame && string(doc) == docs[len(docs)-2]) {
			t.Fatalf("flip at %d: loaded a context that is not the last save, nor, for a flip in the last frame, the one before", i)
		}
	}
}

// Processes share a directory: a second process opens one this process
// holds. Only an exclusive lock of the directory, as a version of this
// package that kept a directory to one process takes, is ErrLocked.
func TestLocked(t *testing.T) {
	if os.Getenv("NOUS_FILESTORE_LOCK_CHILD") != "" {
		s, err := filestore.Open(os.Getenv("NOUS_FILESTORE_LOCK_CHILD"))
		if errors.Is(err, filestore.ErrLocked) {
			os.Exit(3)
		}
		if err != nil {
			os.Exit(2)
		}
		s.Close()
		os.Exit(0)
	}
	if !filestore.Shared {
		t.Skip("processes do not share a directory on this system")
	}
	dir := t.TempDir()
	child := func() int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLocked$")
		cmd.Env = append(os.Environ(), "NOUS_FILESTORE_LOCK_CHILD="+dir)
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if code := child(); code != 0 {
		t.Fatalf("a second process could not open a shared directory (exit %d)", code)
	}
	s.Close()
	release := filestore.LockExclusively(t, dir)
	if code := child(); code != 3 {
		t.Fatalf("a process opened a directory another holds exclusively (exit %d)", code)
	}
	release()
	if code := child(); code != 0 {
		t.Fatalf("a process could not open a released directory (exit %d)", code)
	}
}

// Watch yields what is stored, then every later save, then ctx's error.
func TestWatch(t *testing.T) {
	s := open(t, t.TempDir(), filestore.WithoutSync())
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		for _, text := range []string{"two", "three"} {
			time.Sleep(10 * time.Millisecond)
			if err := c.AddMessage(nous.UserMessage(text)); err != nil {
				panic(err)
			}
			if err := c.Save(context.Background(), s); err != nil {
				panic(err)
			}
		}
	}()
	var got []string
	for e, err := range s.Watch(ctx, c.Log().ID(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Message == nil { // a batch event
			continue
		}
		got = append(got, e.Message.Content)
		if len(got) == 3 {
			cancel()
			break
		}
	}
	if fmt.Sprint(got) != "[one two three]" {
		t.Fatalf("watched %v", got)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	var last error
	for _, err := range s.Watch(ctx, c.Log().ID(), int64(c.Log().Len())) {
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("Watch ended with %v, want ctx's error", last)
	}
}

// A reopened store holds what was saved.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("kept")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir)
	got, err := nous.Load(context.Background(), s, c.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := got.LastMessage(); m.Content != "kept" {
		t.Fatalf("reopened: %q", m.Content)
	}
	if _, err := nous.Load(context.Background(), s, uuid.Must(uuid.NewV7())); !errors.Is(err, nous.ErrNotFound) {
		t.Fatal(err)
	}
}

// A temporary file a crash left while creating a log is removed on Open
// once it is older than any write takes (a younger one may be another
// process's, being written), and the log it was for does not exist.
func TestOpenRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	id := uuid.Must(uuid.NewV7())
	old, young := filepath.Join(dir, id.String()+".log.0123456789ab.tmp"), filepath.Join(dir, id.String()+".log.ba9876543210.tmp")
	for _, tmp := range []string{old, young} {
		if err := os.WriteFile(tmp, []byte("NOUSLOG\x03half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old temporary file is still there: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Fatalf("a young temporary file was removed: %v", err)
	}
	if _, err := nous.Load(context.Background(), s, id); !errors.Is(err, nous.ErrNotFound) {
		t.Fatal(err)
	}
}

// A store keeps a bounded number of log files open between saves, however
// many logs it writes: those it appends to, and one per log it keeps read.
func TestOpenFilesAreBounded(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd to count open files")
		}
		return len(entries)
	}
	s := open(t, t.TempDir(), filestore.WithoutSync(), filestore.WithCacheLimit(20, 1<<30))
	before := fds()
	var ids []uuid.UUID
	for range 200 {
		c := nous.NewContext()
		for _, text := range []string{"one", "two"} {
			if err := c.AddMessage(nous.UserMessage(text)); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, c.Log().ID())
	}
	if opened := fds() - before; opened > 64+20+6 {
		t.Fatalf("%d files open after writing 200 logs", opened)
	}
	for _, id := range ids {
		if _, err := nous.Load(context.Background(), s, id); err != nil {
			t.Fatal(err)
		}
	}
}

// Zeros at the end of a log file, as a file system that made the file
// longer before writing the bytes leaves after a crash, are a torn tail:
// every whole save before them loads, and saves go on.
func TestZeroFilledTail(t *testing.T) {
	c, files, docs := saves(t, t.TempDir(), 3)
	id := c.Log().ID()
	for _, zeros := range []int{1, 11, 12, 13, 4096} {
		dir := t.TempDir()
		content := append(append([]byte(nil), files[len(files)-1]...), make([]byte, zeros)...)
		if err := os.WriteFile(filepath.Join(dir, id.String()+".log"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		s := open(t, dir, filestore.WithoutSync())
		got, err := nous.Load(context.Background(), s, id)
		if err != nil {
			t.Fatalf("%d zeros: %v", zeros, err)
		}
		doc, err := got.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if string(doc) != docs[len(docs)-1] {
			t.Fatalf("%d zeros: loaded a context that is not the last save", zeros)
		}
		if err := got.AddMessage(nous.UserMessage("after the crash")); err != nil {
			t.Fatal(err)
		}
		if err := got.Save(context.Background(), s); err != nil {
			t.Fatalf("%d zeros: a save after recovery: %v", zeros, err)
		}
	}
	// Zeros followed by anything else are damage.
	dir := t.TempDir()
	content := append(append(append([]byte(nil), files[len(files)-1]...), make([]byte, 100)...), 1)
	if err := os.WriteFile(filepath.Join(dir, id.String()+".log"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nous.Load(context.Background(), open(t, dir, filestore.WithoutSync()), id); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("zeros, then a byte: %v, want ErrCorrupt", err)
	}
}

// A log whose file is damaged can be deleted without being read; a batch
// of the nil log ID is refused.
func TestDeleteCorruptAndNilID(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, filestore.WithoutSync())
	id := uuid.Must(uuid.NewV7())
	if err := os.WriteFile(filepath.Join(dir, id.String()+".log"), []byte("NOUSLOG\x01 garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := nous.Load(ctx, s, id); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("load of a damaged file: %v", err)
	}
	if err := s.Delete(ctx, id); err != nil {
		t.Fatalf("delete of a damaged log: %v", err)
	}
	if _, err := nous.Load(ctx, s, id); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("load after the delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, id); !errors.Is(err, nous.ErrNotFound) {
		t.Fatalf("a second delete: %v, want ErrNotFound", err)
	}
	b := nous.Batch{Info: nous.LogInfo{UpdatedAt: time.Now()}, State: []byte(`{}`)}
	if err := s.Append(ctx, b); err == nil {
		t.Fatal("a batch of the nil log ID was stored")
	}
}

// A log file that holds another log (copied or renamed by hand) is
// ErrCorrupt, not that log under another ID.
func TestFileOfAnotherLog(t *testing.T) {
	c, files, _ := saves(t, t.TempDir(), 1)
	dir := t.TempDir()
	other := uuid.Must(uuid.NewV7())
	if err := os.WriteFile(filepath.Join(dir, other.String()+".log"), files[0], 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, filestore.WithoutSync())
	if _, err := nous.Load(context.Background(), s, other); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("load of a file that holds log %s: %v, want ErrCorrupt", c.Log().ID(), err)
	}
}

// Close ends every Watch with an error.
func TestCloseEndsWatch(t *testing.T) {
	s, err := filestore.Open(t.TempDir(), filestore.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		for _, err := range s.Watch(context.Background(), c.Log().ID(), 0) {
			if err != nil {
				ended <- err
				return
			}
		}
		ended <- nil
	}()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("Watch ended without an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Watch")
	}
}
