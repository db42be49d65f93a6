package filestore

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// testFS is a file system that records every write, fsync, rename and
// directory fsync, and fails the operation it is told to: "create" (the
// write of a new file, half of which is written), "write" (an append, half
// written), "sync" or "syncdir".
type testFS struct {
	osFS
	mu      sync.Mutex
	fail    string
	err     error
	ops     []string          // "write NAME", "sync NAME", "rename FROM TO", "syncdir", in order
	written map[string]int    // bytes written to each file, by base name
	synced  map[string]int    // of those, bytes an fsync covered
	onSync  func(name string) // when set, called before each fsync of a file (and before its failure is read)
}

func newTestFS() *testFS { return &testFS{written: map[string]int{}, synced: map[string]int{}} }

// failing makes op fail with err from now on; "" fails nothing.
func (fs *testFS) failing(op string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fail, fs.err = op, err
}

// unsynced returns the files with bytes no fsync covered.
func (fs *testFS) unsynced() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []string
	for name, n := range fs.written {
		if fs.synced[name] != n {
			out = append(out, fmt.Sprintf("%s (%d of %d bytes synced)", name, fs.synced[name], n))
		}
	}
	return out
}

// since returns the operations recorded after the first n.
func (fs *testFS) since(n int) []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.ops[n:]...)
}

func (fs *testFS) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.ops)
}

func (fs *testFS) create(name string) (file, error) {
	f, err := fs.osFS.create(name)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	fs.written[filepath.Base(name)], fs.synced[filepath.Base(name)] = 0, 0
	fs.mu.Unlock()
	return &recordedFile{fs: fs, f: f, name: filepath.Base(name), op: "create"}, nil
}

func (fs *testFS) openAppend(name string) (file, error) {
	f, err := fs.osFS.openAppend(name)
	if err != nil {
		return nil, err
	}
	return &recordedFile{fs: fs, f: f, name: filepath.Base(name), op: "write"}, nil
}

func (fs *testFS) rename(from, to string) error {
	fs.mu.Lock()
	fail, ferr := fs.fail, fs.err
	fs.mu.Unlock()
	if fail == "rename" {
		return ferr
	}
	if err := fs.osFS.rename(from, to); err != nil {
		return err
	}
	fs.moved("rename", from, to)
	return nil
}

func (fs *testFS) link(from, to string) error {
	if err := fs.osFS.link(from, to); err != nil {
		return err
	}
	fs.moved("link", from, to) // the store removes from next
	return nil
}

// moved records op, which gave the file from the name to: its bytes
// written and synced go with it.
func (fs *testFS) moved(op, from, to string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	a, b := filepath.Base(from), filepath.Base(to)
	fs.written[b], fs.synced[b] = fs.written[a], fs.synced[a]
	delete(fs.written, a)
	delete(fs.synced, a)
	fs.ops = append(fs.ops, op+" "+a+" "+b)
}

func (fs *testFS) syncDir(dir string) error {
	fs.mu.Lock()
	fail, err := fs.fail, fs.err
	fs.mu.Unlock()
	if fail == "syncdir" {
		return err
	}
	if err := fs.osFS.syncDir(dir); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.ops = append(fs.ops, "syncdir")
	return nil
}

// recordedFile is a file of a testFS; op is the failure its writes obey.
type recordedFile struct {
	fs   *testFS
	f    file
	name string
	op   string
}

func (f *recordedFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	fail, ferr := f.fs.fail, f.fs.err
	f.fs.mu.Unlock()
	if fail == f.op {
		n, _ := f.f.Write(p[:len(p)/2])
		f.record(n)
		return n, ferr
	}
	n, err := f.f.Write(p)
	f.record(n)
	return n, err
}

func (f *recordedFile) record(n int) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.written[f.name] += n
	f.fs.ops = append(f.fs.ops, "write "+f.name)
}

func (f *recordedFile) Sync() error {
	f.fs.mu.Lock()
	hook := f.fs.onSync
	f.fs.mu.Unlock()
	if hook != nil {
		hook(f.name) // it may make this fsync fail
	}
	f.fs.mu.Lock()
	fail, ferr := f.fs.fail, f.fs.err
	f.fs.mu.Unlock()
	if fail == "sync" {
		return ferr
	}
	if err := f.f.Sync(); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.synced[f.name] = f.fs.written[f.name]
	f.fs.ops = append(f.fs.ops, "sync "+f.name)
	return nil
}

func (f *recordedFile) Close() error { return f.f.Close() }

// hasInOrder reports whether ops holds each of want, in that order, each a
// prefix of an operation.
func hasInOrder(ops []string, want ...string) bool {
	for _, op := range ops {
		if len(want) > 0 && strings.HasPrefix(op, want[0]) {
			want = want[1:]
		}
	}
	return len(want) == 0
}
