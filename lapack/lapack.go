// Package lapack provides the dense symmetric eigensolvers and BLAS that the
// psdlearn engine builds on.
//
// Two implementations share one API. Native (cgo builds without the purego
// tag) calls LAPACKE dsyevr/dsyevd and OpenBLAS; for a value or index range
// dsyevr computes only the wanted eigenpairs (the negative part, the top k).
// Go is built on gonum and is always compiled; for a few eigenpairs at
// either end of the spectrum (TopK, BottomK) it runs the engine's block
// Krylov–Schur method on the dense matrix, and for other ranges it
// computes the whole spectrum and selects. HaveNative reports whether
// Native is available.
//
// Matrices are gonum types. Only the upper triangle of a symmetric input is
// read. Eigenvalues are returned in ascending order with the eigenvectors as
// the columns of an n×m matrix.
package lapack

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// The spectrum ranges and the decomposition type are the engine's (the
// algorithms use them through the engine without importing this package).
type (
	// RangeKind selects which eigenvalues a Range asks for.
	RangeKind = engine.EigRangeKind
	// Range is a part of the spectrum of a symmetric matrix.
	Range = engine.EigRange
	// Eigen is a (partial) eigendecomposition.
	Eigen = engine.Eigen
)

// The kinds of Range.
const (
	All     = engine.RangeAll
	Values  = engine.RangeValues
	Indices = engine.RangeIndices
)

// Ranges (see the engine's functions of the same names).
var (
	AllRange     = engine.AllRange
	NegativePart = engine.NegativePart
	PositivePart = engine.PositivePart
	TopK         = engine.TopK
	BottomK      = engine.BottomK
)

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

// Error implements the error interface.
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
