package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Two watchers of one log; one ends; the next save still wakes the other.
func TestWatchOneOfTwoEnds(t *testing.T) {
	s, err := Open(t.TempDir(), WithoutSync(), WithCacheLimit(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := nous.NewContext()
	c.AddMessage(nous.UserMessage("one"))
	if err := c.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 10)
	ctx1, cancel1 := context.WithCancel(ctx)
	started := make(chan struct{}, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for e, err := range s.Watch(ctx1, c.Log().ID(), 0) {
			if err != nil {
				return
			}
			_ = e
			started <- struct{}{}
		}
	}()
	go func() {
		defer wg.Done()
		for e, err := range s.Watch(ctx, c.Log().ID(), 0) {
			if err != nil {
				return
			}
			if e.Seq == 1 {
				started <- struct{}{}
			}
			got <- e.Seq
		}
	}()
	for _, ch := range []<-chan struct{}{started, started} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("the watches did not start")
		}
	}
	select {
	case <-got:
	case <-ctx.Done():
		t.Fatal("the second watch yielded nothing")
	}
	cancel1()
	time.Sleep(50 * time.Millisecond)
	// other logs, to evict this one
	for range 3 {
		o := nous.NewContext()
		o.AddMessage(nous.UserMessage("x"))
		if err := o.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c.AddMessage(nous.UserMessage("two"))
	if err := c.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	select {
	case seq := <-got:
		if seq != 2 {
			t.Fatalf("got %d", seq)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the remaining watcher was not woken")
	}
	cancel()
	wg.Wait()
}

// Many logs, a cache of one, everything at once, under -race.
func TestTinyCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, WithoutSync(), WithCacheLimit(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 8
	ids := make([]uuid.UUID, n)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range n {
		c := nous.NewContext()
		ids[i] = c.Log().ID()
		c.AddMessage(nous.UserMessage("0"))
		if err := c.Save(ctx, s); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(c *nous.Context) {
			defer wg.Done()
			for k := 1; k < 60; k++ {
				c.AddMessage(nous.UserMessage(fmt.Sprint(k)))
				c.AddToolCall(nous.ToolCall{ID: fmt.Sprint(k), Name: "f"})
				if k%7 == 0 { // appended directly: recorded by the save
					c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: fmt.Sprint("direct", k), Name: "g", Arguments: json.RawMessage(fmt.Sprintf(`{"k":%d}`, k))})
				}
				if err := c.Save(ctx, s); err != nil {
					errs <- fmt.Errorf("save %d: %w", k, err)
					return
				}
				d, err := nous.Load(ctx, s, c.Log().ID())
				if err != nil {
					errs <- err
					return
				}
				a, aerr := c.Serialize()
				b, berr := d.Serialize()
				if aerr != nil || berr != nil || string(a) != string(b) {
					errs <- fmt.Errorf("log %s loads otherwise at %d", c.Log().ID(), k)
					return
				}
			}
		}(c)
		wg.Add(1)
		go func(id uuid.UUID) {
			defer wg.Done()
			want := int64(1)
			wctx, wcancel := context.WithTimeout(ctx, 50*time.Second)
			defer wcancel()
			for e, err := range s.Watch(wctx, id, 0) {
				if err != nil {
					if want != 60 {
						errs <- fmt.Errorf("watch ended at %d: %v", want, err)
					}
					return
				}
				if e.Seq != want {
					errs <- fmt.Errorf("watch: seq %d, want %d", e.Seq, want)
					return
				}
				want++
				if want == 60 {
					return
				}
			}
		}(ids[i])
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			for _, err := range s.List(ctx, nous.ListOptions{}) {
				if err != nil && !errors.Is(err, nous.ErrNotFound) {
					errs <- fmt.Errorf("list: %w", err)
					return
				}
			}
		}
	}()
	// delete and recreate extra logs
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := range 30 {
			c := nous.NewContext()
			c.AddMessage(nous.UserMessage("tmp"))
			if err := c.Save(ctx, s); err != nil {
				errs <- err
				return
			}
			if err := s.Delete(ctx, c.Log().ID()); err != nil {
				errs <- err
				return
			}
			c2, _ := nous.Deserialize(mustSer(c))
			_ = k
			if err := c2.Save(ctx, s); err != nil {
				errs <- fmt.Errorf("recreate: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.mu.Lock()
	if len(s.logs) > 2 || len(s.changed) != 0 {
		t.Errorf("%d logs cached, %d channels", len(s.logs), len(s.changed))
	}
	s.mu.Unlock()
}

func mustSer(c *nous.Context) []byte {
	b, err := c.Serialize()
	if err != nil {
		panic(err)
	}
	return b
}
