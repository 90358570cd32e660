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
		// The leading rows only: the same values, bit for bit.
		for _, h := range []int{1, tc.n / 2, max(1, tc.n-blockRows/3)} {
			head := mat.NewDense(h, tc.cols, nil)
			head.Apply(func(int, int, float64) float64 { return 7 }, head)
			g.LaplacianMulDense(head, x)
			if !mat.Equal(head, got.Slice(0, h, 0, tc.cols)) {
				t.Fatalf("n=%d: the first %d rows of L x differ from the whole product's", tc.n, h)
			}
		}
		// Single precision: the same order of float32 operations as a
		// row-by-row float32 product, so again exactly equal.
		x32 := make([]float32, tc.n*tc.cols)
		for i := range x32 {
			x32[i] = float32(x.RawMatrix().Data[i])
		}
		got32 := make([]float32, len(x32))
		for i := range got32 {
			got32[i] = 7 // must be overwritten
		}
		g.LaplacianMulDense32(got32, x32, tc.cols)
		want32 := make([]float32, tc.cols)
		for i := 0; i < tc.n; i++ {
			clear(want32)
			for p := lap.Indptr[i]; p < lap.Indptr[i+1]; p++ {
				if lap.Data[p] == 0 {
					continue
				}
				for k := range want32 {
					want32[k] += float32(float32(lap.Data[p]) * x32[lap.Ind[p]*tc.cols+k])
				}
			}
			for k, v := range want32 {
				if got32[i*tc.cols+k] != v {
					t.Fatalf("n=%d: float32 (L x)[%d,%d] = %v, row-by-row %v", tc.n, i, k, got32[i*tc.cols+k], v)
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

// TestActiveRows checks that ActiveRows lists exactly the rows of L_W with a
// nonzero entry (pairs whose weights cancel leave their rows inactive), and
// that LaplacianMulRows over them reproduces those rows of
// LaplacianMulDense exactly while every other row of the product is zero.
func TestActiveRows(t *testing.T) {
	const n, cols = 3000, 5
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := make([]Pair, 0, 4000)
	for len(pairs) < 4000 {
		a, b := rng.IntN(n), rng.IntN(n)
		if a != b {
			pairs = append(pairs, Pair{a, b})
		}
	}
	// The same pair twice with opposite weights: its entries cancel to zero.
	pairs = append(pairs, Pair{7, 11}, Pair{11, 7})
	g, err := NewPairGraph(n, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.ActiveRows()) != 0 {
		t.Fatalf("%d active rows before any weights were set", len(g.ActiveRows()))
	}
	w := make([]float64, len(pairs))
	for k := range w {
		if rng.Float64() < 0.05 {
			w[k] = rng.NormFloat64()
		}
	}
	w[len(w)-2], w[len(w)-1] = 0.5, -0.5
	if err := g.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(n, cols, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < cols; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	full := mat.NewDense(n, cols, nil)
	g.LaplacianMulDense(full, x)
	lap := g.Laplacian()
	act := g.ActiveRows()
	k := 0
	for i := 0; i < n; i++ {
		nz := false
		for s := lap.Indptr[i]; s < lap.Indptr[i+1]; s++ {
			nz = nz || lap.Data[s] != 0
		}
		isAct := k < len(act) && act[k] == i
		if nz != isAct {
			t.Fatalf("row %d: nonzero entries %v, listed active %v", i, nz, isAct)
		}
		if isAct {
			k++
		} else if mat.Norm(full.RowView(i), 2) != 0 {
			t.Fatalf("inactive row %d of L_W·x is nonzero", i)
		}
	}
	if len(act) == 0 || len(act) > n/2 {
		t.Fatalf("%d active rows of %d: want a sparse nonempty set", len(act), n)
	}
	rows := mat.NewDense(len(act), cols, nil)
	g.LaplacianMulRows(rows, act, x)
	for k, i := range act {
		for j := 0; j < cols; j++ {
			if rows.At(k, j) != full.At(i, j) {
				t.Fatalf("row %d col %d: %v, want %v", i, j, rows.At(k, j), full.At(i, j))
			}
		}
	}
}
