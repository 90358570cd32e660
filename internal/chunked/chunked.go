// Package chunked runs reductions over many items on fixed chunks, so that
// partial results, and the order in which they are combined, depend only on
// the number of items: results are the same, bit for bit, for any GOMAXPROCS.
package chunked

import (
	"runtime"
	"sync"
)

// Chunks is the number of chunks of a reduction over at least min items.
const Chunks = 8

// Bounds returns the chunk bounds of m items: Chunks equal chunks when m is
// at least min, else a single chunk. Chunk c is [b[c], b[c+1]).
func Bounds(m, min int) []int {
	nc := 1
	if m >= min {
		nc = Chunks
	}
	b := make([]int, nc+1)
	for c := 0; c <= nc; c++ {
		b[c] = c * m / nc
	}
	return b
}

// For runs f on every chunk of Bounds(m, min), on up to GOMAXPROCS
// goroutines, and returns the bounds. f must only write what belongs to
// its chunk.
func For(m, min int, f func(c, lo, hi int)) []int {
	b := Bounds(m, min)
	nc := len(b) - 1
	p := runtime.GOMAXPROCS(0)
	if p > nc {
		p = nc
	}
	if p <= 1 {
		for c := 0; c < nc; c++ {
			f(c, b[c], b[c+1])
		}
		return b
	}
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for c := w; c < nc; c += p {
				f(c, b[c], b[c+1])
			}
		}(w)
	}
	wg.Wait()
	return b
}
