package lapack_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
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

func TestSymEigRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for name, s := range solvers(t) {
		for _, n := range []int{1, 10, 150} {
			a := randSym(rng, n)
			for _, tc := range []struct {
				name string
				r    lapack.Range
			}{
				{"all", lapack.AllRange()},
				{"negative", lapack.NegativePart(0)},
				{"positive", lapack.PositivePart(0.5)},
				{"top", lapack.TopK(n, 1)},
				{"middle", lapack.Range{Kind: lapack.Indices, IL: n / 3, IU: n / 2}},
				{"interval", lapack.Range{Kind: lapack.Values, VL: -1, VU: 1}},
			} {
				t.Run(fmt.Sprintf("%s/n=%d/%s", name, n, tc.name), func(t *testing.T) {
					e, err := s.SymEig(a, tc.r, true)
					if err != nil {
						t.Fatal(err)
					}
					for i := 1; i < len(e.Values); i++ {
						if e.Values[i] < e.Values[i-1] {
							t.Fatal("eigenvalues not ascending")
						}
					}
					if tc.r.Kind == lapack.Values {
						for _, v := range e.Values {
							if v <= tc.r.VL || v > tc.r.VU {
								t.Fatalf("eigenvalue %v outside (%v, %v]", v, tc.r.VL, tc.r.VU)
							}
						}
					}
					if len(e.Values) > 0 {
						if r := residual(a, e); r > 10 {
							t.Errorf("residual %.2f nε‖A‖", r)
						}
					}
				})
			}
		}
	}
}

func TestNativeMatchesGo(t *testing.T) {
	if !lapack.HaveNative {
		t.Skip("native LAPACK not compiled in")
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{2, 40, 257} {
		a := randSym(rng, n)
		for _, r := range []lapack.Range{lapack.AllRange(), lapack.NegativePart(0), lapack.TopK(n, min(5, n))} {
			en, err := lapack.Native.SymEig(a, r, false)
			if err != nil {
				t.Fatal(err)
			}
			eg, err := lapack.Go.SymEig(a, r, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(en.Values) != len(eg.Values) {
				t.Fatalf("n=%d: %d native vs %d Go eigenvalues", n, len(en.Values), len(eg.Values))
			}
			norm := mat.Norm(a, 2)
			for i := range en.Values {
				if d := math.Abs(en.Values[i]-eg.Values[i]) / (norm * float64(n) * eps); d > 10 {
					t.Errorf("n=%d λ[%d]: native %v, Go %v (%.1f nε‖A‖)", n, i, en.Values[i], eg.Values[i], d)
				}
			}
		}
	}
}

// TestSymEigEmptyAndOneSidedRanges covers value ranges that hold no
// eigenvalue or have an infinite end, with and without vectors, across the
// sizes where the native solver switches between MRRR and divide and
// conquer. (Native dstemr once crashed on an empty (−∞, 0] range for n ≥ 8.)
func TestSymEigEmptyAndOneSidedRanges(t *testing.T) {
	for name, s := range solvers(t) {
		for _, n := range []int{1, 7, 8, 9, 40, 200} {
			// Tridiagonal with eigenvalues in [0.8, n+0.2]: positive definite.
			a := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				a.SetSym(i, i, float64(i+1))
				if i+1 < n {
					a.SetSym(i, i+1, 0.1)
				}
			}
			for _, tc := range []struct {
				r    lapack.Range
				want int
			}{
				{lapack.NegativePart(0), 0},
				{lapack.Range{Kind: lapack.Values, VL: float64(n) + 1, VU: math.Inf(1)}, 0},
				{lapack.PositivePart(0), n},
				{lapack.Range{Kind: lapack.Values, VL: math.Inf(-1), VU: 1.5}, 1},
			} {
				for _, vec := range []bool{false, true} {
					e, err := s.SymEig(a, tc.r, vec)
					if err != nil {
						t.Fatalf("%s n=%d range (%v, %v] vectors=%v: %v", name, n, tc.r.VL, tc.r.VU, vec, err)
					}
					if len(e.Values) != tc.want {
						t.Errorf("%s n=%d range (%v, %v] vectors=%v: %d eigenvalues, want %d", name, n, tc.r.VL, tc.r.VU, vec, len(e.Values), tc.want)
					}
					if vec && len(e.Values) > 0 {
						if r := residual(a, e); r > 10 {
							t.Errorf("%s n=%d: residual %.2f nε‖A‖", name, n, r)
						}
					}
				}
			}
		}
	}
}

func TestSymEigErrors(t *testing.T) {
	a := mat.NewSymDense(3, []float64{1, 2, 3, 2, 4, 5, 3, 5, math.NaN()})
	for name, s := range solvers(t) {
		if _, err := s.SymEig(a, lapack.AllRange(), true); !errors.Is(err, lapack.ErrNotFinite) {
			t.Errorf("%s: NaN input gave %v", name, err)
		}
		ok := mat.NewSymDense(2, []float64{1, 0, 0, 1})
		if _, err := s.SymEig(ok, lapack.Range{Kind: lapack.Indices, IL: 1, IU: 2}, true); !errors.Is(err, lapack.ErrInvalidArgument) {
			t.Errorf("%s: bad index range gave %v", name, err)
		}
		if _, err := s.SymEig(mat.NewSymDense(2, nil), lapack.NegativePart(0), true); err != nil {
			t.Errorf("%s: zero matrix: %v", name, err)
		}
	}
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
