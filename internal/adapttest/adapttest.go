// Package adapttest holds the test helpers of the provider adapters: a fake
// provider API on an httptest server, and golden request bodies.
package adapttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Fake is a provider API: it keeps the body of each request and answers
// with the next canned response, or with Default's for the request's path.
type Fake struct {
	Default func(path string) string

	mu        sync.Mutex
	Bodies    [][]byte
	responses []string
}

// Serve starts a Fake answering responses in turn on a server that closes
// when t ends, and returns it and the server's URL.
func Serve(t testing.TB, def func(path string) string, responses ...string) (*Fake, string) {
	f := &Fake{Default: def, responses: responses}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.Bodies = append(f.Bodies, body)
	resp := f.Default(r.URL.Path)
	if len(f.responses) > 0 {
		resp, f.responses = f.responses[0], f.responses[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, resp)
}

// Golden compares body, as JSON, with testdata/name.json, which update
// rewrites first.
func Golden(t testing.TB, update bool, name string, body []byte) {
	t.Helper()
	var indented bytes.Buffer
	Must(t, json.Indent(&indented, body, "", "  "))
	path := filepath.Join("testdata", name+".json")
	if update {
		Must(t, os.WriteFile(path, append(indented.Bytes(), '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !SameJSON(t, body, want) {
		t.Errorf("request body differs from %s:\n got %s\nwant %s", path, indented.Bytes(), want)
	}
}

// SameJSON reports whether a and b are the same JSON value.
func SameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	Must(t, json.Unmarshal(a, &x))
	Must(t, json.Unmarshal(b, &y))
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return bytes.Equal(p, q)
}

// Must fails t on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
