package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// WithCacheLimit's byte bound counts tool calls at their size: 40 logs with
// one 1 MiB call each are not all kept under an 8 MiB bound.
func TestCacheBytesCountToolCalls(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, WithoutSync(), WithCacheLimit(0, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const logs, size = 40, 1 << 20
	args := json.RawMessage(`{"blob":"` + strings.Repeat("x", size) + `"}`)
	for range logs {
		c := nous.NewContext()
		if err := c.AddMessage(nous.UserMessage("one")); err != nil {
			t.Fatal(err)
		}
		c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Arguments: args})
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	var held int64
	for _, e := range s.logs {
		held += int64(len(e.file.state))
	}
	n := len(s.logs)
	s.mu.Unlock()
	if held > 2*(8<<20) {
		t.Fatalf("a cache bounded to 8 MiB keeps %d logs holding %d MiB of state", n, held>>20)
	}
}

// A log whose last write failed is kept apart from the cache's bounds: with
// WithCacheLimit(2, 0) and one such log, two healthy logs are kept.
func TestCachePoisonedApart(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), WithoutSync(), WithCacheLimit(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := nous.NewContext()
	p.AddMessage(nous.UserMessage("p"))
	if err := p.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected write failure")
	fs := newTestFS()
	s.fs = fs
	fs.failing("write", injected)
	p.AddMessage(nous.UserMessage("p2"))
	if err := p.Save(ctx, s); !errors.Is(err, injected) {
		t.Fatalf("poisoning save: %v", err)
	}
	fs.failing("", nil)
	for _, text := range []string{"a", "b"} {
		c := nous.NewContext()
		c.AddMessage(nous.UserMessage(text))
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	healthy := 0
	for _, e := range s.logs {
		if e.poisoned == nil {
			healthy++
		}
	}
	s.mu.Unlock()
	if healthy != 2 {
		t.Fatalf("a cache of 2 logs keeps %d healthy logs beside a poisoned one", healthy)
	}
	p.AddMessage(nous.UserMessage("p3"))
	if err := p.Save(ctx, s); err == nil {
		t.Fatal("a log whose write failed was saved to again before the store was opened again")
	}
}
