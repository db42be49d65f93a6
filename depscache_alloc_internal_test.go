//go:build !race

package nous

import (
	"fmt"
	"testing"
)

// A save writes again only the values of the deps that changed, and of a
// list that grew only what was appended: its encoding is the same for a
// list of any length.
func TestSavedStateEncodesWhatChanged(t *testing.T) {
	c := NewContext()
	for i := range 1000 {
		if err := NewContextUpdate().Append("cities", fmt.Sprint("city ", i)).Set("last", i).Apply(c); err != nil {
			t.Fatal(err)
		}
		c.savedState(newSanitizer(nil))
	}
	e := c.persist.depsCache.entries["cities"]
	if e == nil || len(e.was.([]any)) != 1000 {
		t.Fatal("the list is not cached")
	}
	allocs := testing.AllocsPerRun(50, func() {
		if err := NewContextUpdate().Append("cities", "one more").Apply(c); err != nil {
			t.Fatal(err)
		}
		c.savedState(newSanitizer(nil))
	})
	// A copy of the list's JSON, with the element appended, is the one
	// allocation that grows with it; the rest are a few per save, and
	// those of the deps_update event the Apply records and of its fold.
	if allocs > 60 {
		t.Fatalf("%.0f allocations a save", allocs)
	}
}
