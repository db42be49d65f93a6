package filestore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// checkCache verifies that s.cached is the sum of e.bytes over the list, and
// each listed e.bytes is what the entry holds now.
func checkCache(t *testing.T, s *Store, step string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum int64
	for el := s.recent.Front(); el != nil; el = el.Next() {
		id := el.Value.(uuid.UUID)
		e := s.logs[id]
		if e == nil {
			t.Fatalf("%s: listed log %s not in s.logs", step, id)
		}
		want := int64(len(e.file.state)) + sumBytes(e.file.calls) + int64(len(e.file.frames))*16 + int64(len(e.file.keys))*keyBytes
		if e.bytes != want {
			t.Fatalf("%s: log %s counted %d, holds %d", step, id, e.bytes, want)
		}
		sum += e.bytes
	}
	if sum != s.cached || len(s.elems) != s.recent.Len() {
		t.Fatalf("%s: cached %d, sum over list %d (elems %d, list %d)", step, s.cached, sum, len(s.elems), s.recent.Len())
	}
}

func TestCacheAccountingRandom(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), WithoutSync(), WithCacheLimit(3, 4000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seed := reftest.Seed(t)
	rng := rand.New(rand.NewSource(int64(seed)))
	ctxs := make([]*nous.Context, 5)
	for i := range ctxs {
		ctxs[i] = nous.NewContext()
	}
	for step := range 2000 {
		i := rng.Intn(len(ctxs))
		c := ctxs[i]
		op := rng.Intn(6)
		switch op {
		case 0, 1: // a new call
			c.AddToolCall(nous.ToolCall{ID: fmt.Sprint("c", step), Name: "f", Arguments: json.RawMessage(`{"x":"` + strings.Repeat("y", rng.Intn(600)) + `"}`)})
		case 2: // a state that grows or shrinks
			c.MergeDeps(map[string]any{"blob": strings.Repeat("w", rng.Intn(3000))})
		case 3: // a state back to small
			delete(c.Deps, "blob")
		case 4: // delete, and start again
			s.Delete(ctx, c.Log().ID())
			ctxs[i] = nous.NewContext()
			c = ctxs[i]
		case 5: // read it
			nous.Load(ctx, s, c.Log().ID())
		}
		c.AddMessage(nous.UserMessage(fmt.Sprint("m", step)))
		if err := c.Save(ctx, s); err != nil {
			t.Fatalf("step %d op %d: %v", step, op, err)
		}
		checkCache(t, s, fmt.Sprint("step ", step, " op ", op))
	}
}
