package filestore

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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

// A Watch that ends leaves nothing behind in the store, also one of a log
// the store does not hold or of one deleted meanwhile.
func TestWatchLeavesNothing(t *testing.T) {
	s, err := Open(t.TempDir(), WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 100 {
		for range s.Watch(ctx, uuid.Must(uuid.NewV7()), 0) { // ErrNotFound at once
		}
	}
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	for _, err := range s.Watch(ctx, c.Log().ID(), 0) {
		if err != nil {
			break
		}
		if err := s.Delete(ctx, c.Log().ID()); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	left := len(s.changed)
	s.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d channels left in s.changed after every Watch ended", left)
	}
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
