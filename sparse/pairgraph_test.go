package sparse

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLaplacianMulDense compares the cache-blocked product with a plain
// row-by-row product over the CSR Laplacian, on a graph spanning several
// row blocks with repeated pairs and weights of both signs. Every output
// row is summed in the same order, so the two agree exactly.
func TestLaplacianMulDense(t *testing.T) {
	for _, tc := range []struct{ n, pairs, cols int }{
		{5, 6, 3},
		{2*blockRows + 123, 40000, 7},
		{blockRows, 9000, 1},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), 9))
		pairs := make([]Pair, 0, tc.pairs)
		for len(pairs) < tc.pairs {
			a, b := rng.IntN(tc.n), rng.IntN(tc.n)
			if a != b {
				pairs = append(pairs, Pair{a, b})
			}
		}
		pairs = append(pairs, Pair{pairs[0].B, pairs[0].A}) // a repeat, reversed
		g, err := NewPairGraph(tc.n, pairs)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(pairs))
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		if err := g.SetWeights(w); err != nil {
			t.Fatal(err)
		}
		x := mat.NewDense(tc.n, tc.cols, nil)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.cols; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		got := mat.NewDense(tc.n, tc.cols, nil)
		got.Apply(func(int, int, float64) float64 { return 7 }, got) // must be overwritten
		g.LaplacianMulDense(got, x)
		lap := g.Laplacian()
		want := make([]float64, tc.cols)
		for i := 0; i < tc.n; i++ {
			for k := range want {
				want[k] = 0
			}
			for p := lap.Indptr[i]; p < lap.Indptr[i+1]; p++ {
				for k := range want {
					want[k] += lap.Data[p] * x.At(lap.Ind[p], k)
				}
			}
			for k, v := range want {
				if got.At(i, k) != v {
					t.Fatalf("n=%d: (L x)[%d,%d] = %v, row-by-row %v", tc.n, i, k, got.At(i, k), v)
				}
			}
		}
		// The Laplacian itself: rows sum to zero, off-diagonals are −Σ w.
		for i := 0; i < tc.n; i++ {
			var s float64
			for p := lap.Indptr[i]; p < lap.Indptr[i+1]; p++ {
				s += lap.Data[p]
			}
			if s > 1e-12*float64(tc.pairs) || s < -1e-12*float64(tc.pairs) {
				t.Fatalf("row %d of L sums to %v", i, s)
			}
		}
	}
}
