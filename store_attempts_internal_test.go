package nous

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/google/uuid"
)

// downStore is a store that cannot be reached.
type downStore struct{}

var errDown = errors.New("the store is down")

func (downStore) Append(context.Context, Batch) error { return errDown }
func (downStore) Read(context.Context, uuid.UUID, Position) (Stored, error) {
	return Stored{}, errDown
}
func (downStore) List(context.Context, ListOptions) iter.Seq2[LogInfo, error] { return nil }
func (downStore) Delete(context.Context, uuid.UUID) error                     { return errDown }

// Saves that fail against a store that is down keep no batch with events
// (the next save sends those events again) and at most maxAttempts without.
func TestFailedSavesKeepLittle(t *testing.T) {
	c := NewContext()
	for i := range 50 {
		if err := c.AddMessage(UserMessage(fmt.Sprint("turn ", i))); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(context.Background(), downStore{}); !errors.Is(err, errDown) {
			t.Fatalf("save: %v", err)
		}
	}
	if n := len(c.saved.attempts); n != 0 {
		t.Errorf("%d batches with events kept", n)
	}
	c = NewContext() // no events: every batch is state only
	for i := range 50 {
		c.Iteration = i + 1
		if err := c.Save(context.Background(), downStore{}); !errors.Is(err, errDown) {
			t.Fatalf("save: %v", err)
		}
	}
	if n := len(c.saved.attempts); n > maxAttempts {
		t.Errorf("%d batches without events kept, at most %d", n, maxAttempts)
	}
}
