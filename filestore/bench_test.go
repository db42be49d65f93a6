package filestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// turn adds one turn of five events: a turn start, a user message, an
// assistant message with a tool call, its result, an answer.
func turn(b testing.TB, c *nous.Context, i int) {
	call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	for _, err := range []error{
		c.LogEvent(nous.EventTurnStart, map[string]any{"turn": i}),
		c.AddMessage(nous.UserMessage(fmt.Sprintf("Question %d: what is the weather in Paris today?", i))),
		c.AddMessage(nous.AssistantMessage("", call)),
		c.AddMessage(nous.ToolMessage(call.ID, call.Name, `{"temp_c":21,"sky":"clear"}`)),
		c.AddMessage(nous.AssistantMessage("It is 21°C and clear.")),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// stored returns a store holding a context of n turns, saved once, and the
// context.
func stored(b *testing.B, n int, opts ...filestore.Option) (*filestore.Store, *nous.Context) {
	s, err := filestore.Open(b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	c := nous.NewContext()
	for i := range n {
		turn(b, c, i)
	}
	if err := c.Save(context.Background(), s); err != nil {
		b.Fatal(err)
	}
	return s, c
}

// BenchmarkSave saves one turn (five events) onto a log of n turns; the
// floors write the same number of bytes to a plain file.
func BenchmarkSave(b *testing.B) {
	for _, sync := range []bool{true, false} {
		for _, n := range []int{200, 20_000} { // 1k and 100k events
			b.Run(fmt.Sprintf("sync=%v/events=%dk", sync, n*5/1000), func(b *testing.B) {
				var opts []filestore.Option
				if !sync {
					opts = append(opts, filestore.WithoutSync())
				}
				s, c := stored(b, n, opts...)
				b.ReportAllocs()
				i := n
				for b.Loop() {
					turn(b, c, i)
					i++
					if err := c.Save(context.Background(), s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSaveFullCache saves one turn onto a log of 1k events while the
// store keeps 255 other logs read (its cache full): what the cache's
// bookkeeping adds to a save, without fsync.
func BenchmarkSaveFullCache(b *testing.B) {
	s, c := stored(b, 200, filestore.WithoutSync())
	for range 255 {
		o := nous.NewContext()
		turn(b, o, 0)
		if err := o.Save(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 200
	for b.Loop() {
		turn(b, c, i)
		i++
		if err := c.Save(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFloorWrite writes, and with sync fsyncs, the bytes one turn's
// frame holds to a plain file opened for each write, as a save opens its
// log's.
func BenchmarkFloorWrite(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			name := filepath.Join(b.TempDir(), "floor")
			payload := make([]byte, frameBytes(b))
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Write(payload); err != nil {
					b.Fatal(err)
				}
				if sync {
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
			}
		})
	}
}

// frameBytes measures the bytes a save of one turn appends.
func frameBytes(b *testing.B) int {
	dir := b.TempDir()
	s, err := filestore.Open(dir, filestore.WithoutSync())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := nous.NewContext()
	turn(b, c, 0)
	if err := c.Save(context.Background(), s); err != nil {
		b.Fatal(err)
	}
	name := filepath.Join(dir, c.Log().ID().String()+".log")
	before, _ := os.Stat(name)
	turn(b, c, 1)
	if err := c.Save(context.Background(), s); err != nil {
		b.Fatal(err)
	}
	after, _ := os.Stat(name)
	return int(after.Size() - before.Size())
}

// BenchmarkLoad loads a log of 10,000 events from a store opened anew, the
// file read from the page cache; BenchmarkFloorDeserialize reads the same
// context from its version 2 document in memory.
func BenchmarkLoad(b *testing.B) {
	s, c := stored(b, 2_000, filestore.WithoutSync())
	id := c.Log().ID()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nous.Load(context.Background(), s, id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorDeserialize(b *testing.B) {
	_, c := stored(b, 2_000, filestore.WithoutSync())
	data, err := c.Serialize()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nous.Deserialize(data); err != nil {
			b.Fatal(err)
		}
	}
}
