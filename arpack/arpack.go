// Package arpack computes a few eigenpairs of a large symmetric operator with
// the implicitly restarted Lanczos method.
//
// Two implementations share one API: Native drives arpack-ng's
// reverse-communication dsaupd_c/dseupd_c through cgo (present only in cgo
// builds without the purego tag), and Go is a pure-Go implicitly restarted
// Lanczos method with full reorthogonalisation that is always compiled.
//
// ARPACK keeps Fortran SAVE state between reverse-communication calls, so the
// native solver holds one process-wide lock for the whole of a solve: solves
// from many goroutines are safe but run one at a time.
package arpack

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear operator A of dimension Dim().
// Apply overwrites dst with A·x; dst and x have length Dim() and do not alias.
// Apply must be safe to call repeatedly; it is never called concurrently by a solver.
type Operator interface {
	Dim() int
	Apply(dst, x []float64)
}

// Which selects the part of the spectrum to compute.
type Which int

const (
	LargestAlgebraic  Which = iota // LA: the k largest eigenvalues
	SmallestAlgebraic              // SA: the k smallest eigenvalues
	LargestMagnitude               // LM: the k eigenvalues largest in absolute value
	SmallestMagnitude              // SM: the k eigenvalues smallest in absolute value
	BothEnds                       // BE: k eigenvalues, half from each end of the spectrum
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

// Options configures a solve. The zero value selects the defaults documented per field.
type Options struct {
	// NCV is the number of Lanczos basis vectors, k < NCV ≤ n.
	// Zero selects min(n, max(2k+1, 20)).
	NCV int
	// Tol is the relative accuracy of the Ritz values: |λ − θ| ≤ Tol·|θ|
	// (ARPACK's criterion). Zero selects machine precision.
	Tol float64
	// MaxIter bounds the number of implicit restarts. Zero selects max(300, 10·n/NCV) capped at 10000.
	MaxIter int
	// Seed fixes the random start vector. The same seed, operator and options
	// give the same result from the same implementation.
	Seed uint64
	// Start, when non-nil, is the start vector (length n); it overrides Seed.
	Start []float64
}

// Result holds the computed eigenpairs, sorted by ascending eigenvalue.
type Result struct {
	Values  []float64  // converged eigenvalues, ascending
	Vectors *mat.Dense // n×len(Values), unit-norm eigenvectors as columns
	// Iterations is the number of implicit restarts (Arnoldi/Lanczos update iterations).
	Iterations int
	// OpApplies is the number of operator applications.
	OpApplies int
}

// Solver computes k eigenpairs of a symmetric operator.
// Implementations are safe for concurrent use.
type Solver interface {
	// Eigs returns k eigenpairs of op from the part of the spectrum selected by which.
	// It requires 0 < k < op.Dim(). On non-convergence it returns the pairs that
	// did converge together with a *NotConvergedError. A cancelled ctx stops the
	// solve promptly with ctx.Err() wrapped.
	Eigs(ctx context.Context, op Operator, k int, which Which, opt Options) (Result, error)
}

// ErrInvalidArgument is wrapped by every error about arguments caught before a solve starts.
var ErrInvalidArgument = errors.New("arpack: invalid argument")

// NotConvergedError reports that fewer than the requested eigenpairs converged
// within the iteration limit. The Result returned with it holds those that did.
type NotConvergedError struct {
	Requested, Converged, Iterations int
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("arpack: %d of %d eigenpairs converged after %d iterations", e.Converged, e.Requested, e.Iterations)
}
