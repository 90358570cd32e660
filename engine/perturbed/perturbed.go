// Package perturbed wraps the parts of an engine backend so that every
// dense result they return is moved at the level of rounding: a test-only
// backend that stands in for another BLAS, LAPACK or eigensolver build.
//
// A result r becomes r·(1 + δ) with |δ| ≤ Rel = 4ε (plus the product's
// rounding), δ a hash of r's own bits, so the perturbation is deterministic
// and does not depend on where r sits in a call: the same arithmetic in the
// same order still gives the same bits, whatever the blocking (a row
// computed alone or in a block, on one process or on several). Exact zeros
// stay zero. Dot products, GEMM and SYRK also add their inner sums in
// another order (two halves, added last). Eigenvalues stay ascending.
// L-BFGS-B and the LP solver are passed through: their arithmetic is their
// own.
//
// A test that fails on this backend and passes on the one it wraps asserts
// the rounding of one library build, not mathematics. Build with the
// perturbed tag and set PSDLEARN_BACKEND=perturbed to run a suite on it
// (package engine/backends registers it as "perturbed" under that tag).
package perturbed

import (
	"context"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Rel is the largest relative perturbation of a result: 4ε.
const Rel = 4 * 0x1p-53

// Parts returns base with its dense eigensolver, sparse eigensolver and
// BLAS wrapped.
func Parts(base engine.Parts) engine.Parts {
	var b blas.Float64 = Blas{base.BLAS}
	if b32, ok := base.BLAS.(blas.Float32); ok {
		b = Blas32{Blas{base.BLAS}, b32}
	}
	return engine.Parts{Eig: eig{base.Eig}, Eigs: eigs{base.Eigs}, Min: base.Min, LP: base.LP, BLAS: b}
}

// Nudge returns x·(1 + δ), |δ| ≤ Rel, δ a function of x's sign and
// significand; zeros, infinities and NaN are returned unchanged.
func Nudge(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	// The hash reads the sign and the significand, not the exponent, so
	// Nudge(2ᵏ·x) = 2ᵏ·Nudge(x): scaling by a power of two stays exact, as
	// it is in any IEEE arithmetic (away from overflow and subnormals).
	h := mix(math.Float64bits(x) &^ (0x7ff << 52))
	s := float64(int64(h>>11)-1<<52) / (1 << 52) // in [−1, 1)
	return x * (1 + Rel*s)
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// nudgeVec nudges the n entries x[0], x[|inc|], … of a strided vector.
func nudgeVec(n int, x []float64, inc int) {
	if inc < 0 {
		inc = -inc
	}
	for k := 0; k < n; k++ {
		x[k*inc] = Nudge(x[k*inc])
	}
}

// nudgeMat nudges the m×n row-major matrix a with leading dimension lda.
func nudgeMat(m, n int, a []float64, lda int) {
	for i := 0; i < m; i++ {
		row := a[i*lda : i*lda+n]
		for j, v := range row {
			row[j] = Nudge(v)
		}
	}
}

// nudgeTri nudges the ul triangle of the n×n matrix a.
func nudgeTri(ul blas.Uplo, n int, a []float64, lda int) {
	for i := 0; i < n; i++ {
		lo, hi := i, n
		if ul == blas.Lower {
			lo, hi = 0, i+1
		}
		for j := lo; j < hi; j++ {
			a[i*lda+j] = Nudge(a[i*lda+j])
		}
	}
}

type eig struct{ base engine.SymEigensolver }

func (e eig) SymEig(a mat.Symmetric, r engine.EigRange, vectors bool) (engine.Eigen, error) {
	out, err := e.base.SymEig(a, r, vectors)
	nudgeEigen(out.Values, out.Vectors)
	return out, err
}

type eigs struct{ base engine.EigsSolver }

func (e eigs) Eigs(ctx context.Context, op engine.Operator, k int, which engine.Which, opt engine.EigsOptions) (engine.EigsResult, error) {
	out, err := e.base.Eigs(ctx, op, k, which, opt)
	nudgeEigen(out.Values, out.Vectors)
	return out, err
}

// nudgeEigen nudges eigenvalues (keeping them ascending) and eigenvectors.
func nudgeEigen(values []float64, vectors *mat.Dense) {
	for i, v := range values {
		values[i] = Nudge(v)
		if i > 0 && values[i] < values[i-1] {
			values[i] = values[i-1]
		}
	}
	if vectors != nil && !vectors.IsEmpty() {
		raw := vectors.RawMatrix()
		nudgeMat(raw.Rows, raw.Cols, raw.Data, raw.Stride)
	}
}
