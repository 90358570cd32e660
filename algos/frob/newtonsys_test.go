package frob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/blas"
)

// TestCholesky factors random SPD matrices of sizes around the block and
// split thresholds and checks the backward error ‖A − L Lᵀ‖/(‖A‖·n·ε) and a
// solve, on both backends' BLAS.
func TestCholesky(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, n := range []int{1, 5, 96, 97, 300, 700} {
			a, anorm := randomSPD(n, uint64(n))
			l := append([]float64(nil), a...)
			if !cholesky(b.BLAS(), n, l) {
				t.Fatalf("%s n=%d: factorisation failed on an SPD matrix", b.Name(), n)
			}
			var worst float64
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					var s float64
					for k := 0; k <= j; k++ {
						s += l[i*n+k] * l[j*n+k]
					}
					worst = math.Max(worst, math.Abs(s-a[i*n+j]))
				}
			}
			if res := worst / (anorm * float64(n) * 0x1p-52); res > 1 {
				t.Errorf("%s n=%d: backward error %.3g (n·ε units)", b.Name(), n, res)
			}
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(i%7) - 3
			}
			rhs := make([]float64, n)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					rhs[i] += a[i*n+j] * x[j]
				}
			}
			cholSolve(b.BLAS(), n, l, rhs)
			for i := range x {
				if math.Abs(rhs[i]-x[i]) > 1e-8*(1+math.Abs(x[i])) {
					t.Fatalf("%s n=%d: solve x[%d] = %v, want %v", b.Name(), n, i, rhs[i], x[i])
				}
			}
		}
		// Not positive definite: reported, not a panic.
		a := []float64{1, 2, 2, 1}
		if cholesky(b.BLAS(), 2, a) {
			t.Errorf("%s: an indefinite matrix factored", b.Name())
		}
	}
}

// randomSPD returns the n×n row-major matrix G Gᵀ + n·I, G standard normal
// (seeded), and its largest entry in magnitude.
func randomSPD(n int, seed uint64) (a []float64, anorm float64) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	g := make([]float64, n*n)
	for i := range g {
		g[i] = rnd.NormFloat64()
	}
	a = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += g[i*n+k] * g[j*n+k]
			}
			if i == j {
				s += float64(n)
			}
			a[i*n+j] = s
			anorm = math.Max(anorm, math.Abs(s))
		}
	}
	return a, anorm
}

// TestCholSolveCols solves A X = B for blocks of columns on both sides of
// the split threshold (one block per core above it) and checks every
// column's residual ‖A x̂ − b‖∞ against ‖A‖·‖x̂‖·n·ε, so that a column
// solved in another column's place or left out fails.
func TestCholSolveCols(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, n := range []int{40, 300} {
			a, anorm := randomSPD(n, uint64(n)+7)
			l := append([]float64(nil), a...)
			if !cholesky(b.BLAS(), n, l) {
				t.Fatalf("%s n=%d: factorisation failed", b.Name(), n)
			}
			for _, nc := range []int{1, 2*cholColsMin - 1, 2 * cholColsMin, 2*cholColsMin + 5, 301} {
				rnd := rand.New(rand.NewPCG(uint64(nc), 2))
				rhs := make([]float64, n*nc)
				for i := range rhs {
					rhs[i] = rnd.NormFloat64()
				}
				x := append([]float64(nil), rhs...)
				cholSolveCols(b.BLAS(), n, nc, l, x)
				for j := 0; j < nc; j++ {
					var res, xmax float64
					for i := 0; i < n; i++ {
						xmax = math.Max(xmax, math.Abs(x[i*nc+j]))
					}
					for i := 0; i < n; i++ {
						s := -rhs[i*nc+j]
						for k := 0; k < n; k++ {
							s += a[i*n+k] * x[k*nc+j]
						}
						res = math.Max(res, math.Abs(s))
					}
					if r := res / (anorm * xmax * float64(n) * float64(n) * 0x1p-52); !(r <= 1) {
						t.Fatalf("%s n=%d nc=%d column %d: residual %.3g (‖A‖·‖x‖·n²·ε units)", b.Name(), n, nc, j, r)
					}
				}
			}
		}
	}
}

// BenchmarkCholesky factors an SPD matrix of the size of a face-Newton
// step's free block on MNIST (about 4,600 candidates) and solves for 1,000
// held columns, as boxNewton does, on the native backend's BLAS (with
// -short, a 512×512 matrix and 100 columns).
func BenchmarkCholesky(b *testing.B) {
	n, nc := 4608, 1000
	if testing.Short() {
		n, nc = 512, 100
	}
	nb, err := engine.Get("native")
	if err != nil {
		b.Skip("no native backend:", err)
	}
	impl := nb.BLAS()
	// A = G Gᵀ + n·I, G standard normal (seeded), by the BLAS.
	rnd := rand.New(rand.NewPCG(3, 1))
	g := make([]float64, n*n)
	for i := range g {
		g[i] = rnd.NormFloat64()
	}
	a := make([]float64, n*n)
	impl.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, g, n, g, n, 0, a, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += float64(n)
	}
	l := make([]float64, n*n)
	rhs := make([]float64, n*nc)
	for i := range rhs {
		rhs[i] = float64(i%11) - 5
	}
	x := make([]float64, n*nc)
	b.Run("factor", func(b *testing.B) {
		for b.Loop() {
			copy(l, a)
			if !cholesky(impl, n, l) {
				b.Fatal("not positive definite")
			}
		}
	})
	b.Run("solve", func(b *testing.B) {
		for b.Loop() {
			copy(x, rhs)
			cholSolveCols(impl, n, nc, l, x)
		}
	})
}
