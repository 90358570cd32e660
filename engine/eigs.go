package engine

import (
	"fmt"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear operator A of dimension Dim().
// Apply overwrites dst with A·x; dst and x have length Dim() and do not alias.
// Apply must be safe to call repeatedly; it is never called concurrently by a solver.
type Operator interface {
	Dim() int
	Apply(dst, x []float64)
}

// BlockOperator is an Operator that can also apply itself to a block of
// vectors at once (for a sparse matrix, one pass over its entries for the
// whole block instead of one per column). BlockEigs uses ApplyBlock when the
// operator has it; Eigs applies column by column.
type BlockOperator interface {
	Operator
	// ApplyBlock overwrites dst (Dim()×c) with A·x (Dim()×c). It must not
	// modify x, which may be the solver's own copy of a basis block.
	ApplyBlock(dst, x *mat.Dense)
}

// RowApplier is an Operator that can compute a block of rows of its
// product alone: ApplyRows writes rows [lo, lo+len(dst)) of A·x into dst,
// for the whole vector x. A solver whose processes each own a block of
// rows (package distributed, PARPACK) applies such an operator without any
// process computing the whole product.
type RowApplier interface {
	Operator
	ApplyRows(dst, x []float64, lo int)
}

// Which selects the part of the spectrum to compute.
type Which int

const (
	LargestAlgebraic  Which = iota // LA: the k largest eigenvalues
	SmallestAlgebraic              // SA: the k smallest eigenvalues
	LargestMagnitude               // LM: the k eigenvalues largest in absolute value
	SmallestMagnitude              // SM: the k eigenvalues smallest in absolute value
	BothEnds                       // BE: k ≥ 2 eigenvalues, ⌊k/2⌋ from the low end and ⌈k/2⌉ from the high end
)

// String returns ARPACK's two-letter code for w.
func (w Which) String() string {
	switch w {
	case LargestAlgebraic:
		return "LA"
	case SmallestAlgebraic:
		return "SA"
	case LargestMagnitude:
		return "LM"
	case SmallestMagnitude:
		return "SM"
	case BothEnds:
		return "BE"
	}
	return fmt.Sprintf("Which(%d)", int(w))
}

// EigsOptions configures a sparse eigensolve (see Backend.Eigs). The zero value selects the defaults documented per field.
type EigsOptions struct {
	// NCV is the number of Lanczos basis vectors, k < NCV ≤ n.
	// Zero selects min(n, max(2k+1, k+30)): thirty vectors beyond k cut
	// the restarts on clustered spectra (package arpack, DefaultNCV).
	NCV int
	// Tol is the relative accuracy of the Ritz values: |λ − θ| ≤ Tol·|θ|
	// (ARPACK's criterion). Precisely, a Ritz pair (θ, x) is accepted when its
	// Lanczos residual estimate satisfies ‖A·x − θ·x‖ ≤ Tol·max(ε^(2/3), |θ|),
	// which bounds |λ − θ| by the same quantity (and by its square over the
	// gap to the rest of the spectrum). Zero selects machine precision 2⁻⁵³;
	// negative, NaN or infinite values are invalid.
	Tol float64
	// MaxIter bounds the number of implicit restarts. Zero selects max(300, 10·n/NCV) capped at 10000.
	MaxIter int
	// Seed fixes the random start vector (entries uniform in [−1, 1) from
	// PCG(Seed, ·)). The same seed, operator and options give the same result
	// from the same implementation. (arpack-ng itself starts from A·v₀.)
	Seed uint64
	// Start, when non-nil, is the start vector (length n); it overrides Seed.
	Start []float64
}

// EigsResult holds the computed eigenpairs, sorted by ascending eigenvalue.
type EigsResult struct {
	Values  []float64  // converged eigenvalues, ascending
	Vectors *mat.Dense // n×len(Values), orthonormal eigenvectors as columns; nil if Values is empty
	// Iterations is the number of implicit restarts (Arnoldi/Lanczos update iterations).
	Iterations int
	// OpApplies is the number of operator applications.
	OpApplies int
}

// EigsNotConvergedError reports that fewer than the requested eigenpairs converged
// within the iteration limit. The Result returned with it holds those that did.
type EigsNotConvergedError struct {
	Requested, Converged, Iterations int
}

// Error implements the error interface.
func (e *EigsNotConvergedError) Error() string {
	return fmt.Sprintf("eigensolver: %d of %d eigenpairs converged after %d iterations", e.Converged, e.Requested, e.Iterations)
}

// Is makes errors.Is(err, errs.ErrNotConverged) hold.
func (e *EigsNotConvergedError) Is(target error) bool { return target == errs.ErrNotConverged }
