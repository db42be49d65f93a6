package nous

import (
	"slices"
	"testing"
)

// A view and its fork (a clone's) share their entries until one of them
// writes: a write on either side, the first after the fork included, and
// then an append on the other side, leave each side with its own entries,
// though the original's entries have room past its length, as a grown
// view's do. A write in place makes the writer's entries its own, so that
// its next write copies nothing.
func TestViewForkWritesApart(t *testing.T) {
	writes := []struct {
		name    string
		write   func(v *view)
		want    []int64
		inPlace bool // the write changes entries the fork can see, so it copies them first
	}{
		{"push", func(v *view) { v.put(slot{at: len(v.entries), ok: true}, 9) }, []int64{0, 1, 2, 3, 9}, false},
		{"replace", func(v *view) { v.put(slot{at: 1, n: 2, ok: true}, 9) }, []int64{0, 9, 3}, true},
		{"insert", func(v *view) { v.put(slot{at: 1, ok: true}, 8); v.put(slot{at: 2, ok: true}, 9) }, []int64{0, 8, 9, 1, 2, 3}, true},
	}
	for _, tt := range writes {
		for _, side := range []string{"original", "fork"} {
			t.Run(tt.name+" on the "+side, func(t *testing.T) {
				v := view{entries: append(make([]int64, 0, 16), 0, 1, 2, 3)}
				d := v.fork()
				w, other := &v, &d
				if side == "fork" {
					w, other = &d, &v
				}
				tt.write(w)
				if !slices.Equal(other.entries, []int64{0, 1, 2, 3}) {
					t.Fatalf("the %s's write reached the other side: %v", side, other.entries)
				}
				inPlaceShared := tt.inPlace && w.shared
				other.put(slot{at: len(other.entries), ok: true}, 7)
				if !slices.Equal(w.entries, tt.want) {
					t.Fatalf("the writer's entries, after an append on the other side: %v, want %v", w.entries, tt.want)
				}
				if !slices.Equal(other.entries, []int64{0, 1, 2, 3, 7}) {
					t.Fatalf("the other side's entries after its append: %v", other.entries)
				}
				if inPlaceShared {
					t.Fatal("after a write in place the writer's entries are still marked shared: its next write copies them again")
				}
			})
		}
	}
}
