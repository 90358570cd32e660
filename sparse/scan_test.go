package sparse

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNextBelow32 checks the vectorised scan of the k-NN screen against the
// portable loop: the same index for every start, row length (full vectors
// and tails) and threshold, with ties at the threshold and NaNs.
func TestNextBelow32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 41; n++ {
		row, rv := make([]float32, n), make([]float32, n+3)
		for trial := 0; trial < 30; trial++ {
			for j := range row {
				row[j] = float32(rng.IntN(8)) / 4
				rv[j] = float32(rng.IntN(16)) / 4
			}
			if n > 0 && trial%5 == 0 {
				row[rng.IntN(n)] = float32(math.NaN())
			}
			qv := float32(rng.IntN(4)) / 4
			worst := float32(rng.IntN(12)) / 4
			if trial%7 == 0 {
				worst = float32(math.Inf(1))
			}
			for from := 0; from <= n; from++ {
				want := nextBelow(row, rv, qv, worst, from)
				if got := nextBelow32(row, rv, qv, worst, from); got != want {
					t.Fatalf("n=%d from=%d worst=%v: nextBelow32 = %d, nextBelow = %d", n, from, worst, got, want)
				}
			}
		}
	}
}
