package filestore

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nous-go/nous"
)

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
	deleted := false
	for _, err := range s.Watch(ctx, c.Log().ID(), 0) {
		if err != nil {
			break
		}
		if !deleted {
			if err := s.Delete(ctx, c.Log().ID()); err != nil {
				t.Fatal(err)
			}
			deleted = true
		}
	}
	s.mu.Lock()
	left := len(s.changed)
	s.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d channels left in s.changed after every Watch ended", left)
	}
}
