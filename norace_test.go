//go:build !race

// The race detector changes what allocates, so allocation counts are checked
// only without it.

package nous_test

import (
	"testing"

	"github.com/nous-go/nous"
)

var noraceSink int

// TestAllDoesNotAllocate checks that walking the view with All allocates
// nothing, whatever the view holds and however the overlay shows in it.
func TestAllDoesNotAllocate(t *testing.T) {
	views := map[string]func(t *testing.T) *nous.Context{
		"empty": func(t *testing.T) *nous.Context { return nous.NewContext() },
		"zero":  func(t *testing.T) *nous.Context { return &nous.Context{} },
		"plain": func(t *testing.T) *nous.Context {
			c := nous.NewContext()
			for range 100 {
				mustAddAll(t, c, mUser("u"), mAssistant("a"))
			}
			return c
		},
		"maps and slices": func(t *testing.T) *nous.Context {
			c := nous.NewContext()
			for range 50 {
				mustAddAll(t, c, fullMessage(), mUser("u"))
			}
			return c
		},
		"overlaid": func(t *testing.T) *nous.Context {
			c := nous.NewContext()
			mustAddAll(t, c, mSystem("s"), mUser("u"))
			c.SetSystemPromptOverlay("o")
			return c
		},
		"synthetic": func(t *testing.T) *nous.Context {
			c := nous.NewContext()
			mustAddAll(t, c, mUser("u"), mUser("v"))
			c.SetSystemPromptOverlay("o")
			return c
		},
		"replaced and cloned": func(t *testing.T) *nous.Context {
			c := nous.NewContext()
			for range 600 {
				mustAddAll(t, c, mUser("u"))
			}
			if err := c.ReplaceMessageRange(10, 500, mUser("summary")); err != nil {
				t.Fatal(err)
			}
			d := c.Clone()
			mustAddAll(t, d, mUser("d"))
			return d
		},
	}
	for name, build := range views {
		t.Run(name, func(t *testing.T) {
			c := build(t)
			n := 0
			allocs := testing.AllocsPerRun(100, func() {
				for i, m := range c.All() {
					n += i + len(m.Content) + len(m.Parts)
				}
			})
			noraceSink = n
			if allocs != 0 {
				t.Errorf("All allocates %v times per walk, want 0", allocs)
			}
			allocs = testing.AllocsPerRun(100, func() {
				for _, m := range c.All() {
					n += len(m.Content)
					break
				}
			})
			noraceSink = n
			if allocs != 0 {
				t.Errorf("All with an early break allocates %v times, want 0", allocs)
			}
		})
	}
}

// TestCloneDoesNotCopyTheLog checks that Clone shares the log and the view
// instead of copying them: it costs as many allocations for a long
// conversation as for a short one, and only a few.
func TestCloneDoesNotCopyTheLog(t *testing.T) {
	cloneAllocs := func(n int) float64 {
		c := nous.NewContext()
		for range n {
			mustAddAll(t, c, fullMessage())
		}
		var d *nous.Context
		allocs := testing.AllocsPerRun(20, func() { d = c.Clone() })
		noraceSink = d.Len()
		return allocs
	}
	short, long := cloneAllocs(10), cloneAllocs(5000)
	if long != short {
		t.Errorf("Clone of 5000 messages allocates %v times, of 10 messages %v times: it copies per message", long, short)
	}
	if long > 10 {
		t.Errorf("Clone allocates %v times, want at most 10", long)
	}
}
