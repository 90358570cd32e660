package f32

import (
	"math/rand/v2"
	"testing"
)

// TestAxpy checks the vectorised loop against the portable one, bit for
// bit, for every length around the vector widths.
func TestAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 80; n++ {
		x, y := make([]float32, n), make([]float32, n+3)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for i := range y {
			y[i] = float32(rng.NormFloat64())
		}
		want := append([]float32(nil), y...)
		axpyGeneric(-0.37, x, want)
		got := append([]float32(nil), y...)
		Axpy(-0.37, x, got)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: y[%d] = %v, portable %v", n, i, got[i], want[i])
			}
		}
		for i := n; i < len(y); i++ {
			if got[i] != y[i] {
				t.Fatalf("n=%d: y[%d] beyond x changed", n, i)
			}
		}
	}
}
