package lapack_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
	"gonum.org/v1/gonum/mat"
)

const eps = 0x1p-52

func solvers(t testing.TB) map[string]lapack.Eigensolver {
	s := map[string]lapack.Eigensolver{"go": lapack.Go}
	if lapack.HaveNative {
		s["native"] = lapack.Native
	}
	return s
}

func randSym(rng *rand.Rand, n int) *mat.SymDense {
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	return a
}

// residual returns ‖AV − VΛ‖_F / (‖A‖_F·n·ε).
func residual(a *mat.SymDense, e lapack.Eigen) float64 {
	n := a.SymmetricDim()
	var av mat.Dense
	av.Mul(a, e.Vectors)
	for j, l := range e.Values {
		for i := 0; i < n; i++ {
			av.Set(i, j, av.At(i, j)-l*e.Vectors.At(i, j))
		}
	}
	return mat.Norm(&av, 2) / (mat.Norm(a, 2) * float64(n) * eps)
}

func BenchmarkSymEig(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{100, 400, 1000} {
		a := randSym(rng, n)
		for name, s := range solvers(b) {
			for _, r := range []struct {
				name string
				r    lapack.Range
			}{{"all", lapack.AllRange()}, {"top1", lapack.TopK(n, 1)}, {"negative", lapack.NegativePart(0)}} {
				b.Run(fmt.Sprintf("impl=%s/range=%s/n=%d", name, r.name, n), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := s.SymEig(a, r.r, true); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// Example computes the negative part of a symmetric matrix, the operation at
// the heart of FrobMetric's dual.
func Example() {
	a := mat.NewSymDense(3, []float64{
		2, 0, 0,
		0, -1, 0,
		0, 0, 3,
	})
	e, err := lapack.Go.SymEig(a, lapack.NegativePart(0), true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("negative eigenvalues: %v\n", e.Values)
	// Eigenvectors are determined up to sign.
	fmt.Printf("|eigenvector|: [%.0f %.0f %.0f]\n", math.Abs(e.Vectors.At(0, 0)), math.Abs(e.Vectors.At(1, 0)), math.Abs(e.Vectors.At(2, 0)))
	// Output:
	// negative eigenvalues: [-1]
	// |eigenvector|: [0 1 0]
}

// TestConformance runs the dense eigensolver suite on every solver.
func TestConformance(t *testing.T) {
	for name, s := range solvers(t) {
		t.Run(name, func(t *testing.T) { lapacktest.TestEigensolver(t, s) })
	}
}

// TestNativeMatchesGo checks that the native and pure-Go solvers agree.
func TestNativeMatchesGo(t *testing.T) {
	if !lapack.HaveNative {
		t.Skip("native LAPACK not compiled in")
	}
	lapacktest.TestAgree(t, lapack.Native, lapack.Go)
}
