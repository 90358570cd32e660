package chunked

import (
	"runtime"
	"testing"
)

// TestForCoversOnce checks that every item is visited exactly once, by the
// chunk Bounds says, for sizes around the threshold and any GOMAXPROCS.
func TestForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		for _, m := range []int{0, 1, 7, 99, 100, 101, 1000} {
			seen := make([]int, m)
			owner := make([]int, m)
			b := For(m, 100, func(c, lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
					owner[i] = c
				}
			})
			if want := 1; m >= 100 {
				want = Chunks
				if len(b)-1 != want {
					t.Fatalf("m=%d: %d chunks, want %d", m, len(b)-1, want)
				}
			} else if len(b)-1 != want {
				t.Fatalf("m=%d: %d chunks, want %d", m, len(b)-1, want)
			}
			for i := range seen {
				if seen[i] != 1 || i < b[owner[i]] || i >= b[owner[i]+1] {
					t.Fatalf("procs=%d m=%d: item %d seen %d times by chunk %d", procs, m, i, seen[i], owner[i])
				}
			}
		}
	}
}
