package engine

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// EigRangeKind selects which eigenvalues an EigRange asks for.
type EigRangeKind int

const (
	// RangeAll asks for the whole spectrum.
	RangeAll EigRangeKind = iota
	// RangeValues asks for the eigenvalues in the half-open interval (VL, VU].
	RangeValues
	// RangeIndices asks for the eigenvalues with ascending indices IL..IU (0-based, inclusive).
	RangeIndices
)

// EigRange is a part of the spectrum of a symmetric matrix.
type EigRange struct {
	Kind   EigRangeKind
	VL, VU float64 // for Values: the interval (VL, VU]; ±Inf allowed
	IL, IU int     // for Indices: 0 ≤ IL ≤ IU < n
}

// AllRange is the whole spectrum.
func AllRange() EigRange { return EigRange{Kind: RangeAll} }

// NegativePart is the range of eigenvalues in (−∞, −tol]: the eigenpairs of (S)_−.
func NegativePart(tol float64) EigRange {
	return EigRange{Kind: RangeValues, VL: math.Inf(-1), VU: -math.Abs(tol)}
}

// PositivePart is the range of eigenvalues in (tol, +∞): the eigenpairs of (S)_+.
func PositivePart(tol float64) EigRange {
	return EigRange{Kind: RangeValues, VL: math.Abs(tol), VU: math.Inf(1)}
}

// TopK is the range of the k largest eigenvalues of an n×n matrix.
func TopK(n, k int) EigRange { return EigRange{Kind: RangeIndices, IL: n - k, IU: n - 1} }

// BottomK is the range of the k smallest eigenvalues.
func BottomK(k int) EigRange { return EigRange{Kind: RangeIndices, IL: 0, IU: k - 1} }

// Eigen is a (partial) eigendecomposition.
type Eigen struct {
	Values  []float64  // ascending
	Vectors *mat.Dense // n×len(Values), orthonormal columns; nil if vectors were not requested or len(Values)==0
}
