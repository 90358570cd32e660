// Package lapacktest is the conformance suite of dense symmetric
// eigensolvers, in the manner of gonum's testlapack: lapack's native and
// pure-Go solvers run it, and so does every engine backend (through
// engine/enginetest). It checks real properties: residuals ‖AV − VΛ‖ in
// units of ‖A‖·n·ε, orthogonality of V, eigenvalues against the full
// spectrum and against matrices of known spectrum, the requested ranges,
// and the errors for invalid input.
package lapacktest

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack"
	"gonum.org/v1/gonum/mat"
)

const eps = 0x1p-52

// Tolerances, in units of n·ε·‖A‖ (residuals, eigenvalue agreement) and
// n·ε (orthogonality).
const (
	residualTol = 10.0
	orthoTol    = 10.0
	agreeTol    = 10.0
)

// RandSym returns a random symmetric n×n matrix with entries N(0,1).
func RandSym(rng *rand.Rand, n int) *mat.SymDense {
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	return a
}

// SymWithSpectrum returns Q diag(lambda) Qᵀ for a random orthogonal Q.
func SymWithSpectrum(rng *rand.Rand, lambda []float64) *mat.SymDense {
	n := len(lambda)
	var qr mat.QR
	qr.Factorize(mat.NewDense(n, n, randSlice(rng, n*n)))
	var q mat.Dense
	qr.QTo(&q)
	var ql mat.Dense
	ql.Scale(1, &q)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			ql.Set(i, j, q.At(i, j)*lambda[j])
		}
	}
	var full mat.Dense
	full.Mul(&ql, q.T())
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, 0.5*(full.At(i, j)+full.At(j, i)))
		}
	}
	return a
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

// EigResidual returns ‖AV − VΛ‖_F / (‖A‖_F · n · ε) and ‖VᵀV − I‖_F / (n · ε).
func EigResidual(a mat.Symmetric, e engine.Eigen) (res, orth float64) {
	n := a.SymmetricDim()
	m := len(e.Values)
	if m == 0 {
		return 0, 0
	}
	var av mat.Dense
	av.Mul(a, e.Vectors)
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			av.Set(i, j, av.At(i, j)-e.Vectors.At(i, j)*e.Values[j])
		}
	}
	var vtv mat.Dense
	vtv.Mul(e.Vectors.T(), e.Vectors)
	for i := 0; i < m; i++ {
		vtv.Set(i, i, vtv.At(i, i)-1)
	}
	anorm := mat.Norm(a, 2)
	if anorm == 0 {
		anorm = 1
	}
	return mat.Norm(&av, 2) / (anorm * float64(n) * eps), mat.Norm(&vtv, 2) / (float64(n) * eps)
}

func filter(v []float64, keep func(float64) bool) []float64 {
	var out []float64
	for _, x := range v {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// TestEigensolver runs the suite on impl.
func TestEigensolver(t *testing.T, impl engine.SymEigensolver) {
	rng := rand.New(rand.NewPCG(11, 12))
	t.Run("ranges", func(t *testing.T) {
		for _, n := range []int{1, 2, 7, 10, 64, 150, 200} {
			a := RandSym(rng, n)
			full, err := impl.SymEig(a, lapack.AllRange(), false)
			if err != nil {
				t.Fatalf("n=%d all values: %v", n, err)
			}
			if !sort.Float64sAreSorted(full.Values) {
				t.Fatalf("n=%d: eigenvalues not ascending", n)
			}
			all := full.Values
			for _, tc := range []struct {
				name string
				r    engine.EigRange
				want []float64
			}{
				{"all", lapack.AllRange(), all},
				{"negative", lapack.NegativePart(0), filter(all, func(v float64) bool { return v <= 0 })},
				{"positive", lapack.PositivePart(0), filter(all, func(v float64) bool { return v > 0 })},
				{"positive-above-0.5", lapack.PositivePart(0.5), filter(all, func(v float64) bool { return v > 0.5 })},
				{"interval", engine.EigRange{Kind: lapack.Values, VL: -1, VU: 1}, filter(all, func(v float64) bool { return v > -1 && v <= 1 })},
				{"top3", lapack.TopK(n, min(3, n)), all[n-min(3, n):]},
				{"bottom1", lapack.BottomK(1), all[:1]},
				{"middle", engine.EigRange{Kind: lapack.Indices, IL: n / 3, IU: n / 2}, all[n/3 : n/2+1]},
			} {
				e, err := impl.SymEig(a, tc.r, true)
				if err != nil {
					t.Fatalf("n=%d %s: %v", n, tc.name, err)
				}
				if len(e.Values) != len(tc.want) {
					t.Fatalf("n=%d %s: %d eigenvalues, want %d", n, tc.name, len(e.Values), len(tc.want))
				}
				anorm := math.Max(mat.Norm(a, 2), 1)
				for i := range tc.want {
					if d := math.Abs(e.Values[i]-tc.want[i]) / (anorm * float64(n) * eps); d > agreeTol {
						t.Errorf("n=%d %s: λ[%d] = %v, full spectrum has %v (%.1f nε‖A‖)", n, tc.name, i, e.Values[i], tc.want[i], d)
					}
				}
				if len(e.Values) > 0 {
					res, orth := EigResidual(a, e)
					if res > residualTol || orth > orthoTol {
						t.Errorf("n=%d %s: residual %.2f, orthogonality %.2f (units of nε)", n, tc.name, res, orth)
					}
				}
			}
		}
	})
	t.Run("known-spectrum", func(t *testing.T) {
		lambda := []float64{-3, -1e-3, 0, 0, 1e-8, 2, 2, 5, 1e3}
		a := SymWithSpectrum(rng, lambda)
		e, err := impl.SymEig(a, lapack.AllRange(), true)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range lambda {
			if math.Abs(e.Values[i]-v) > 100*1e3*eps*float64(len(lambda)) {
				t.Errorf("λ[%d] = %v, want %v", i, e.Values[i], v)
			}
		}
		neg, err := impl.SymEig(a, lapack.NegativePart(1e-6), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(neg.Values) != 2 {
			t.Fatalf("negative part: %d eigenvalues %v, want 2", len(neg.Values), neg.Values)
		}
	})
	// Value ranges that hold no eigenvalue or have an infinite end, with
	// and without vectors, across the sizes where the native solver
	// switches between MRRR and divide and conquer (native dstemr once
	// crashed on an empty (−∞, 0] range for n ≥ 8).
	t.Run("empty-and-one-sided", func(t *testing.T) {
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
				r    engine.EigRange
				want int
			}{
				{lapack.NegativePart(0), 0},
				{engine.EigRange{Kind: lapack.Values, VL: float64(n) + 1, VU: math.Inf(1)}, 0},
				{lapack.PositivePart(0), n},
				{engine.EigRange{Kind: lapack.Values, VL: math.Inf(-1), VU: 1.5}, 1},
			} {
				for _, vec := range []bool{false, true} {
					e, err := impl.SymEig(a, tc.r, vec)
					if err != nil {
						t.Fatalf("n=%d range (%v, %v] vectors=%v: %v", n, tc.r.VL, tc.r.VU, vec, err)
					}
					if len(e.Values) != tc.want {
						t.Errorf("n=%d range (%v, %v] vectors=%v: %d eigenvalues, want %d", n, tc.r.VL, tc.r.VU, vec, len(e.Values), tc.want)
					}
					if vec && len(e.Values) > 0 {
						if res, orth := EigResidual(a, e); res > residualTol || orth > orthoTol {
							t.Errorf("n=%d: residual %.2f, orthogonality %.2f", n, res, orth)
						}
					}
				}
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		nan := RandSym(rng, 4)
		nan.SetSym(1, 2, math.NaN())
		inf := RandSym(rng, 4)
		inf.SetSym(0, 0, math.Inf(1))
		ok := RandSym(rng, 4)
		for _, tc := range []struct {
			name string
			a    mat.Symmetric
			r    engine.EigRange
			want error
		}{
			{"nan", nan, lapack.AllRange(), lapack.ErrNotFinite},
			{"inf", inf, lapack.AllRange(), lapack.ErrNotFinite},
			{"empty-interval", ok, engine.EigRange{Kind: lapack.Values, VL: 1, VU: 1}, lapack.ErrInvalidArgument},
			{"index-out-of-range", ok, lapack.TopK(4, 5), lapack.ErrInvalidArgument},
			{"index-beyond-n", mat.NewSymDense(2, []float64{1, 0, 0, 1}), engine.EigRange{Kind: lapack.Indices, IL: 1, IU: 2}, lapack.ErrInvalidArgument},
			{"nil", nil, lapack.AllRange(), lapack.ErrInvalidArgument},
		} {
			if _, err := impl.SymEig(tc.a, tc.r, true); !errors.Is(err, tc.want) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
			}
		}
		if _, err := impl.SymEig(mat.NewSymDense(2, nil), lapack.NegativePart(0), true); err != nil {
			t.Errorf("zero matrix: %v", err)
		}
	})
}

// TestAgree checks that two eigensolvers give the same eigenvalues, to
// agreeTol·n·ε·‖A‖, and the same eigenvectors up to sign (to 1e-8; random
// matrices have simple eigenvalues), on random matrices and the usual
// ranges.
func TestAgree(t *testing.T, a, b engine.SymEigensolver) {
	for _, set := range []struct {
		seed1, seed2 uint64
		ns           []int
		topK         int
	}{
		{2, 2, []int{2, 40, 257}, 5},
		{21, 22, []int{3, 50, 300}, 2},
	} {
		rng := rand.New(rand.NewPCG(set.seed1, set.seed2))
		for _, n := range set.ns {
			m := RandSym(rng, n)
			for _, r := range []engine.EigRange{lapack.AllRange(), lapack.NegativePart(0), lapack.TopK(n, min(set.topK, n))} {
				ea, err := a.SymEig(m, r, true)
				if err != nil {
					t.Fatal(err)
				}
				eb, err := b.SymEig(m, r, true)
				if err != nil {
					t.Fatal(err)
				}
				if len(ea.Values) != len(eb.Values) {
					t.Fatalf("n=%d range %+v: %d vs %d eigenvalues", n, r, len(ea.Values), len(eb.Values))
				}
				norm := mat.Norm(m, 2)
				for i := range ea.Values {
					if d := math.Abs(ea.Values[i]-eb.Values[i]) / (norm * float64(n) * eps); d > agreeTol {
						t.Errorf("n=%d λ[%d]: %v vs %v (%.1f nε‖A‖)", n, i, ea.Values[i], eb.Values[i], d)
					}
					dot := 0.0
					for k := 0; k < n; k++ {
						dot += ea.Vectors.At(k, i) * eb.Vectors.At(k, i)
					}
					if math.Abs(math.Abs(dot)-1) > 1e-8 {
						t.Errorf("n=%d: eigenvector %d differs (|vᵀw| = %v)", n, i, math.Abs(dot))
					}
				}
			}
		}
	}
}
