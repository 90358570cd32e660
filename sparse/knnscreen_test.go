package sparse

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCandListKeepsBest offers random candidates, with many ties in
// distance, to lists of every capacity on both sides of sortedMax and checks
// after every offer that the list holds the best cap of those offered, its
// worst first.
func TestCandListKeepsBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for capacity := 1; capacity <= 3*sortedMax; capacity++ {
		h := make(candList, 0, capacity)
		var all []cand2
		for j := range 4 * capacity {
			c := cand2{float64(rng.IntN(2 * capacity)), j}
			all = append(all, c)
			if len(h) < capacity {
				h.push(c)
			} else if c.less(h[0]) {
				h.replaceTop(c)
			}
			want := slices.Clone(all)
			slices.SortFunc(want, cand2.compare)
			want = want[:min(len(want), capacity)]
			got := slices.Clone(h)
			slices.SortFunc(got, cand2.compare)
			if !slices.Equal(got, want) || h[0] != want[len(want)-1] {
				t.Fatalf("capacity %d after %d offers: list %v, want %v with %v first", capacity, j+1, h, want, want[len(want)-1])
			}
		}
	}
}
