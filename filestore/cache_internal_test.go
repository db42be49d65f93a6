package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nous-go/nous"
)

// The logs a store keeps read are bounded (here to 8 MiB): listing 40 logs
// whose state is 1 MiB each does not keep them all.
func TestCacheBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	const logs, size = 40, 1 << 20
	for range logs {
		c := nous.NewContext()
		c.SystemPrompt = strings.Repeat("x", size)
		if err := c.AddMessage(nous.UserMessage("one")); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(dir, WithoutSync(), WithCacheLimit(0, 8<<20)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for _, err := range s.List(ctx, nous.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if n != logs || kept > logs*size/4 {
		t.Fatalf("after listing %d logs, the store keeps %d MiB (%d entries cached)", n, kept>>20, len(s.logs))
	}
	runtime.KeepAlive(s)
}

// With a cache of two logs, saves and loads of ten logs in turn read the
// logs the cache forgot again from their files: every log loads as saved,
// and no more than two are kept.
func TestCacheLimitRereads(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), WithoutSync(), WithCacheLimit(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var cs []*nous.Context
	for range 10 {
		cs = append(cs, nous.NewContext())
	}
	for round := range 4 {
		for i, c := range cs {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", round, " of ", i))); err != nil {
				t.Fatal(err)
			}
			c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("c", round), Name: "f"})
			if err := c.Save(ctx, s); err != nil {
				t.Fatalf("round %d, log %d: %v", round, i, err)
			}
			if n := len(s.logs); n > 2 {
				t.Fatalf("%d logs kept, want at most 2", n)
			}
		}
	}
	for i, c := range cs {
		d, err := nous.Load(ctx, s, c.Log().ID())
		if err != nil {
			t.Fatal(err)
		}
		a, _ := c.Serialize()
		b, _ := d.Serialize()
		if !bytes.Equal(a, b) {
			t.Fatalf("log %d loads otherwise than saved", i)
		}
	}
}

// WithCacheLimit's byte bound counts what a log keeps in memory (its
// state, and the events stay on disk): 40 logs with a 1 MiB state each are
// not all kept under an 8 MiB bound, and a 1 MiB tool call costs nothing.
func TestCacheBytesBounded(t *testing.T) {
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
		c := nous.NewContext(nous.WithDeps(map[string]any{"blob": strings.Repeat("y", size)}))
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
	if held > 2*(8<<20) || n >= logs {
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
