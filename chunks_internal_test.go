package nous

import (
	"sync"
	"testing"
)

// The chunked store's promise, at every length around its growth and chunk
// boundaries: two clips of one store append independently, a clip taken
// before either appends keeps what it saw, and reading that clip on another
// goroutine while both append is not a race (run under -race).
func TestChunksClipAppendsApart(t *testing.T) {
	lengths := []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 1536}
	for _, n := range lengths {
		var a chunks[int64]
		for i := range int64(n) {
			if got := a.push(&i); got != i {
				t.Fatalf("n=%d: push of value %d returned index %d", n, i, got)
			}
		}
		b, frozen := a.clip(), a.clip()

		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // reads frozen while a and b append
			defer wg.Done()
			for i := range frozen.len() {
				if v := *frozen.at(i); v != i {
					t.Errorf("n=%d: frozen[%d] = %d while appending", n, i, v)
					return
				}
			}
		}()
		const more = 600 // past at least one chunk boundary on both sides
		for i := range int64(more) {
			x, y := -1-i, -1_000_000-i
			a.push(&x)
			b.push(&y)
		}
		wg.Wait()

		if frozen.len() != int64(n) {
			t.Fatalf("n=%d: frozen has %d values", n, frozen.len())
		}
		for i := range int64(n) {
			if *frozen.at(i) != i || *a.at(i) != i || *b.at(i) != i {
				t.Fatalf("n=%d: shared value %d changed: %d %d %d", n, i, *frozen.at(i), *a.at(i), *b.at(i))
			}
			if c := a.chunk(i); c[i&(chunkSize-1)] != i {
				t.Fatalf("n=%d: chunk of %d holds %d there", n, i, c[i&(chunkSize-1)])
			}
		}
		for i := range int64(more) {
			if *a.at(int64(n) + i) != -1-i || *b.at(int64(n) + i) != -1_000_000-i {
				t.Fatalf("n=%d: appended value %d crossed over", n, i)
			}
		}
		if a.len() != int64(n+more) || b.len() != int64(n+more) {
			t.Fatalf("n=%d: lengths %d and %d, want %d", n, a.len(), b.len(), n+more)
		}
	}
}
