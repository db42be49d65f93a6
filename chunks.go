package nous

import "slices"

// The log stores events in chunks of chunkSize: the full ones, which are
// never written again, and the partly filled tail. A fork shares both with
// its parent, clipped, so that neither can see what the other appends; the
// fork copies the tail (at most one chunk) when it first appends.
const (
	chunkBits = 9
	chunkSize = 1 << chunkBits
)

// chunks is an append-only sequence of values stored in chunks of chunkSize,
// so that appending never copies what is already stored, and a copy of it
// clipped by clip shares everything with it.
type chunks[T any] struct {
	full [][]T // full chunks, each of chunkSize values
	tail []T   // the last chunk, not full
}

// len returns the number of values stored.
func (c *chunks[T]) len() int64 { return int64(len(c.full))<<chunkBits + int64(len(c.tail)) }

// at returns the value at index i, 0 <= i < len.
func (c *chunks[T]) at(i int64) *T {
	if ci := int(i >> chunkBits); ci < len(c.full) {
		return &c.full[ci][i&(chunkSize-1)]
	}
	return &c.tail[i&(chunkSize-1)]
}

// chunk returns the chunk that holds index i, 0 <= i < len.
func (c *chunks[T]) chunk(i int64) []T {
	if ci := int(i >> chunkBits); ci < len(c.full) {
		return c.full[ci]
	}
	return c.tail
}

// push appends *v and returns its index.
func (c *chunks[T]) push(v *T) int64 {
	if len(c.tail) == chunkSize {
		c.full = append(c.full, c.tail)
		c.tail = nil
	}
	if len(c.tail) == cap(c.tail) {
		// The first chunk grows by doubling, so that a short log stays
		// small; a fork's tail, clipped, is copied before it is written.
		n := chunkSize
		if len(c.full) == 0 {
			n = min(max(2*cap(c.tail), 8), chunkSize)
		}
		grown := make([]T, len(c.tail), n)
		copy(grown, c.tail)
		c.tail = grown
	}
	c.tail = append(c.tail, *v)
	return c.len() - 1
}

// clip returns a copy of c that shares every value stored and that appends
// to either cannot write where the other reads.
func (c *chunks[T]) clip() chunks[T] {
	return chunks[T]{full: slices.Clip(c.full), tail: slices.Clip(c.tail)}
}

// prefix returns the first n values of c, clipped, so that an append on
// either side cannot write where the other would read.
func (c *chunks[T]) prefix(n int64) chunks[T] {
	full := int(n >> chunkBits)
	var out chunks[T]
	if full <= len(c.full) {
		out.full = c.full[:full:full]
	} else { // the tail is full, and in the prefix
		out.full = append(slices.Clip(c.full), c.tail)
	}
	if rest := int(n & (chunkSize - 1)); rest > 0 {
		out.tail = slices.Clip(c.chunk(n - 1)[:rest])
	}
	return out
}
