package filestore

import (
	"context"
	"errors"
	"testing"

	"github.com/nous-go/nous"
)

// A failed write or fsync fails the save, poisons the log for the handle
// (no retry: its file's end is unknown), and a store opened again holds the
// log as of the acknowledged saves, or with the failed one whole, never
// part of it; saves then go on.
func TestFaults(t *testing.T) {
	for _, op := range []string{"write", "sync"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			c := nous.NewContext()
			for _, text := range []string{"one", "two"} {
				if err := c.AddMessage(nous.UserMessage(text)); err != nil {
					t.Fatal(err)
				}
				if err := c.Save(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			acked, err := c.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			injected := errors.New("injected " + op + " failure")
			s.fault = func(o string) error {
				if o == op {
					return injected
				}
				return nil
			}
			if err := c.AddMessage(nous.UserMessage("three")); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(ctx, s); !errors.Is(err, injected) {
				t.Fatalf("save with a failed %s: %v", op, err)
			}
			s.fault = nil
			if err := c.Save(ctx, s); err == nil {
				t.Fatal("a poisoned log saved again without a reopen")
			}
			s.Close()

			s, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := nous.Load(ctx, s, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			doc, err := got.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			whole, _ := c.Serialize()
			if string(doc) != string(acked) && string(doc) != string(whole) {
				t.Fatalf("reopened after a failed %s: neither the acknowledged log nor the whole failed save", op)
			}
			if err := got.AddMessage(nous.UserMessage("four")); err != nil {
				t.Fatal(err)
			}
			if err := got.Save(ctx, s); err != nil {
				t.Fatalf("save after the reopen: %v", err)
			}
		})
	}
}
