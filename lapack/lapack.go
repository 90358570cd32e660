// Package lapack provides the dense symmetric eigensolvers and BLAS that the
// psdlearn engine builds on.
//
// Two implementations share one API. Native (cgo builds without the purego
// tag) calls LAPACKE dsyevr/dsyevd and OpenBLAS; for a value or index range
// dsyevr computes only the wanted eigenpairs (the negative part, the top k).
// Go is built on gonum and is always compiled; for a partial range it
// computes the whole spectrum and selects. HaveNative reports whether Native
// is available.
//
// Matrices are gonum types. Only the upper triangle of a symmetric input is
// read. Eigenvalues are returned in ascending order with the eigenvectors as
// the columns of an n×m matrix.
package lapack

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// RangeKind selects which eigenvalues a Range asks for.
type RangeKind int

const (
	// All asks for the whole spectrum.
	All RangeKind = iota
	// Values asks for the eigenvalues in the half-open interval (VL, VU].
	Values
	// Indices asks for the eigenvalues with ascending indices IL..IU (0-based, inclusive).
	Indices
)

// Range is a part of the spectrum of a symmetric matrix.
type Range struct {
	Kind   RangeKind
	VL, VU float64 // for Values: the interval (VL, VU]; ±Inf allowed
	IL, IU int     // for Indices: 0 ≤ IL ≤ IU < n
}

// AllRange is the whole spectrum.
func AllRange() Range { return Range{Kind: All} }

// NegativePart is the range of eigenvalues in (−∞, −tol]: the eigenpairs of (S)_−.
func NegativePart(tol float64) Range {
	return Range{Kind: Values, VL: math.Inf(-1), VU: -math.Abs(tol)}
}

// PositivePart is the range of eigenvalues in (tol, +∞): the eigenpairs of (S)_+.
func PositivePart(tol float64) Range { return Range{Kind: Values, VL: math.Abs(tol), VU: math.Inf(1)} }

// TopK is the range of the k largest eigenvalues of an n×n matrix.
func TopK(n, k int) Range { return Range{Kind: Indices, IL: n - k, IU: n - 1} }

// BottomK is the range of the k smallest eigenvalues.
func BottomK(k int) Range { return Range{Kind: Indices, IL: 0, IU: k - 1} }

// Eigen is a (partial) eigendecomposition.
type Eigen struct {
	Values  []float64  // ascending
	Vectors *mat.Dense // n×len(Values), orthonormal columns; nil if vectors were not requested or len(Values)==0
}

// Eigensolver computes dense symmetric eigendecompositions.
// Implementations are safe for concurrent use.
type Eigensolver interface {
	// SymEig computes the eigenvalues of a in the range r, and the eigenvectors if vectors is true.
	// a is not modified.
	SymEig(a mat.Symmetric, r Range, vectors bool) (Eigen, error)
}

// ErrInvalidArgument is wrapped by errors about arguments.
var ErrInvalidArgument = errs.New("lapack: invalid argument", errs.ErrInvalid)

// ErrNotFinite is wrapped when an input matrix holds NaN or ±Inf.
var ErrNotFinite = errs.New("lapack: matrix has NaN or Inf entries", errs.ErrInvalid)

// ConvergenceError reports LAPACK's failure to converge (info > 0).
type ConvergenceError struct {
	Routine string
	Info    int
}

func (e *ConvergenceError) Error() string {
	return fmt.Sprintf("lapack: %s failed to converge (info=%d)", e.Routine, e.Info)
}

// validate checks a and r and returns n.
func validate(a mat.Symmetric, r Range) (int, error) {
	if a == nil {
		return 0, fmt.Errorf("%w: nil matrix", ErrInvalidArgument)
	}
	n := a.SymmetricDim()
	if n == 0 {
		return 0, fmt.Errorf("%w: empty matrix", ErrInvalidArgument)
	}
	switch r.Kind {
	case All:
	case Values:
		if math.IsNaN(r.VL) || math.IsNaN(r.VU) || !(r.VL < r.VU) {
			return 0, fmt.Errorf("%w: value range (%g, %g] is empty or NaN", ErrInvalidArgument, r.VL, r.VU)
		}
	case Indices:
		if r.IL < 0 || r.IU < r.IL || r.IU >= n {
			return 0, fmt.Errorf("%w: index range [%d, %d] outside [0, %d)", ErrInvalidArgument, r.IL, r.IU, n)
		}
	default:
		return 0, fmt.Errorf("%w: unknown range kind %d", ErrInvalidArgument, r.Kind)
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%w (entry %d,%d)", ErrNotFinite, i, j)
			}
		}
	}
	return n, nil
}

// upperCopy returns the upper triangle of a in a fresh row-major n×n slice.
func upperCopy(a mat.Symmetric, n int) []float64 {
	out := make([]float64, n*n)
	if s, ok := a.(mat.RawSymmetricer); ok {
		raw := s.RawSymmetric()
		if raw.Uplo == blas.Upper {
			for i := 0; i < n; i++ {
				copy(out[i*n+i:i*n+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
			}
			return out
		}
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			out[i*n+j] = a.At(i, j)
		}
	}
	return out
}

// BLAS is a blas64 implementation. NativeBLAS is OpenBLAS through cgo when
// HaveNative, else gonum's pure-Go BLAS; GoBLAS is always gonum's.
type BLAS = blas.Float64
