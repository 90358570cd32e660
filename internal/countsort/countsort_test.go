package countsort

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStable compares with the standard library's stable sort, for key
// ranges with many ties and with none.
func TestStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type item struct{ key, pos int }
	var count []int
	for _, keys := range []int{1, 3, 50, 1000} {
		for _, n := range []int{0, 1, 7, 500} {
			src := make([]item, n)
			for i := range src {
				src[i] = item{rng.IntN(keys), i}
			}
			want := slices.Clone(src)
			slices.SortStableFunc(want, func(a, b item) int { return a.key - b.key })
			got := make([]item, n)
			count = Stable(got, src, keys, func(e item) int { return e.key }, count)
			if !slices.Equal(got, want) {
				t.Fatalf("keys %d, n %d: %v, want %v", keys, n, got, want)
			}
		}
	}
}
