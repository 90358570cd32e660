//go:build cgo && !purego

package lapack

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestBLASThreadsRestart checks that the thread pool init shuts down comes
// back when more threads are asked for: a product large enough for OpenBLAS
// to split over threads agrees with gonum's, then the default is restored.
func TestBLASThreadsRestart(t *testing.T) {
	const n = 400
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, n*n), make([]float64, n*n)
	for i := range a {
		a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	want := make([]float64, n*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, want, n)
	defer SetBLASThreads(BLASThreads())
	for _, threads := range []int{2, 1, 2} {
		SetBLASThreads(threads)
		if got := BLASThreads(); got != threads {
			t.Fatalf("BLASThreads = %d after SetBLASThreads(%d)", got, threads)
		}
		got := make([]float64, n*n)
		NativeBLAS.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, got, n)
		for i := range got {
			if d := got[i] - want[i]; d > 1e-10 || d < -1e-10 {
				t.Fatalf("threads %d: C[%d] = %v, gonum %v", threads, i, got[i], want[i])
			}
		}
	}
}
