package eval

import (
	"math"
	"testing"
)

// TestSpearman checks known rank correlations: monotone maps give ±1, a
// non-linear monotone map keeps 1, and a small hand-computed case with and
// without ties (ρ = 1 − 6Σd²/(n(n²−1)) without ties).
func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"increasing", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"decreasing", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"monotone non-linear", []float64{0.1, 1, 2, 5}, []float64{math.Exp(0.1), math.Exp(1), math.Exp(2), math.Exp(5)}, 1},
		// ranks (0,1,2,3,4) and (1,0,2,4,3): Σd² = 4, ρ = 1 − 24/120.
		{"swaps", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 3, 5, 4}, 0.8},
		// b's ties share rank 0.5: Pearson of (0,1,2) and (0.5,0.5,2).
		{"ties", []float64{1, 2, 3}, []float64{7, 7, 9}, math.Sqrt(3) / 2},
	} {
		if got := Spearman(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: ρ = %.15g, want %.15g", tc.name, got, tc.want)
		}
	}
}
