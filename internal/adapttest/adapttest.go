// Package adapttest holds the test helpers of the provider adapters: a fake
// provider API on an httptest server, and golden request bodies.
package adapttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
	"github.com/nous-go/nous/internal/viewgen"
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

// Fill is one way an adapter makes a request of a context: Do returns the
// request (params, contents) or the adapter's error; Check returns what is
// wrong with a request made, "" for nothing.
type Fill struct {
	Name  string
	Do    func(c *nous.Context) (request any, err error)
	Check func(request any, body []byte) string
}

// Property runs each fill on n random conversations (viewgen.Context, with
// the random stream stream). A fill refuses exactly the views whose pairing
// fails (its error wrapping nous.ErrUnpaired), and others only with an
// *adapt.Error wrapping one of sentinels; every request it makes passes
// Check. So that the test can fail, each fill must make at least a third of
// the requests and refuse at least a tenth.
func Property(t *testing.T, stream uint64, n int, sentinels []error, fills ...Fill) {
	t.Helper()
	made, refused := make([]int, len(fills)), make([]int, len(fills))
	for seed := range uint64(n) {
		c := viewgen.Context(rand.New(rand.NewPCG(seed, stream)))
		paired := c.CheckToolPairing() == nil
		for k, f := range fills {
			req, err := f.Do(c)
			if err == nil {
				if !paired {
					t.Fatalf("seed %d: %s took a view whose pairing fails: %v", seed, f.Name, c.CheckToolPairing())
				}
				made[k]++
				body, err := json.Marshal(req)
				Must(t, err)
				if problem := f.Check(req, body); problem != "" {
					t.Fatalf("seed %d: %s: %s\n%s", seed, f.Name, problem, body)
				}
				continue
			}
			refused[k]++
			var e *adapt.Error
			switch {
			case !errors.As(err, &e):
				t.Fatalf("seed %d: %s: %v is not an *Error", seed, f.Name, err)
			case errors.Is(err, nous.ErrUnpaired) == paired:
				t.Fatalf("seed %d: %s says %v, the pairing check %v", seed, f.Name, err, c.CheckToolPairing())
			case !slices.ContainsFunc(slices.Concat(sentinels, []error{nous.ErrUnpaired}), func(s error) bool { return errors.Is(err, s) }):
				t.Fatalf("seed %d: %s: %v wraps no sentinel", seed, f.Name, err)
			}
		}
	}
	for k, f := range fills {
		if made[k] < n/3 || refused[k] < n/10 {
			t.Errorf("%s: %d requests made, %d refused of %d: the conversations no longer cover both", f.Name, made[k], refused[k], n)
		}
	}
}

// RoundTrip returns c through its JSON, as a store keeps it.
func RoundTrip(t testing.TB, c *nous.Context) *nous.Context {
	t.Helper()
	data, err := c.Serialize()
	Must(t, err)
	d, err := nous.Deserialize(data)
	Must(t, err)
	return d
}

// Refill puts m, a message an adapter made of a response, in a context
// after a user message, with its calls answered, and fills a request of it
// with do: the adapter either refuses it with an *adapt.Error, or fills a
// request that encodes, and the same one again after a JSON round trip of
// the context. It is the property every adapter's fuzz target checks.
func Refill(t *testing.T, m nous.Message, do func(c *nous.Context) (request any, err error)) {
	t.Helper()
	c := nous.NewContext()
	if c.AddMessage(nous.UserMessage("q")) != nil || c.AddMessage(m) != nil {
		return
	}
	for _, tc := range m.ToolCalls {
		if c.AddMessage(nous.ToolMessage(tc.ID, tc.Name, "ok")) != nil {
			return
		}
	}
	first, err := do(c)
	if err != nil {
		if e := (*adapt.Error)(nil); !errors.As(err, &e) {
			t.Fatalf("%v, not an *Error", err)
		}
		return
	}
	a, err := json.Marshal(first)
	if err != nil {
		t.Fatalf("the request does not encode: %v", err)
	}
	again, err := do(RoundTrip(t, c))
	if err != nil {
		t.Fatalf("after a round trip of the context: %v", err)
	}
	if b, _ := json.Marshal(again); !bytes.Equal(a, b) {
		t.Fatalf("the request changed in a round trip of the context:\n%s\n%s", a, b)
	}
}

// SameSet reports whether a and b hold the same strings, in any order.
func SameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
