// Package arpack computes a few eigenpairs of a large symmetric operator with
// the restarted Lanczos method.
//
// Two implementations share one API: Native drives arpack-ng's
// reverse-communication dsaupd_c/dseupd_c (implicitly restarted Lanczos, mode
// 1, exact shifts) through cgo — present only in cgo builds without the
// purego tag — and Go is a pure-Go thick-restart Lanczos method with full
// reorthogonalisation, always compiled. Thick restart keeping the Ritz vectors
// that ARPACK keeps is, in exact arithmetic, equivalent to ARPACK's implicit
// restart with exact shifts; the two use the same convergence test, so for the same Tol
// they deliver eigenpairs of the same accuracy (the test suite checks that
// they agree to 1e-8 on analytic and real-data problems).
//
// BySize composes two solvers by the size of a solve's Lanczos basis; the
// native engine backend runs Native up to NativeMaxBasisBytes and Go above,
// where Go is the faster one.
//
// The operator is only ever applied to vectors (y ← A·x): it may be a sparse
// matrix, a dense one or matrix-free (package sparse has all three). Both
// implementations are deterministic for a seed.
//
// ARPACK keeps Fortran SAVE state between reverse-communication calls, so the
// native solver holds one process-wide lock for the whole of a solve: solves
// from many goroutines are safe but run one at a time. The pure-Go solver
// keeps all state per call and runs concurrent solves in parallel.
//
// Argument errors are reported before any work starts (wrapping
// ErrInvalidArgument); non-convergence returns the converged pairs with a
// *NotConvergedError; other arpack-ng failures are *Error values.
//
// Limitations shared by both (single-vector Lanczos): an eigenvalue of
// multiplicity m is found m times only through rounding and restarts, so
// when exact multiplicities are known (say, the null space of a graph
// Laplacian with several components) deflate them explicitly. The smallest
// eigenvalues of a Laplacian converge slowly in mode 1 with SmallestAlgebraic;
// running LargestAlgebraic on σI − A (sparse.Shifted) is often much faster.
package arpack

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
)

// The operator, options and result types are the engine's (the algorithms
// use them through the engine without importing this package).
type (
	// Operator is a symmetric linear operator A of dimension Dim().
	Operator = engine.Operator
	// Which selects the part of the spectrum to compute.
	Which = engine.Which
	// Options configures a solve.
	Options = engine.EigsOptions
	// Result holds the computed eigenpairs, sorted by ascending eigenvalue.
	Result = engine.EigsResult
	// NotConvergedError reports that fewer than the requested eigenpairs
	// converged within the iteration limit.
	NotConvergedError = engine.EigsNotConvergedError
)

// The parts of the spectrum.
const (
	LargestAlgebraic  = engine.LargestAlgebraic
	SmallestAlgebraic = engine.SmallestAlgebraic
	LargestMagnitude  = engine.LargestMagnitude
	SmallestMagnitude = engine.SmallestMagnitude
	BothEnds          = engine.BothEnds
)

// Solver computes k eigenpairs of a symmetric operator.
// Implementations are safe for concurrent use.
type Solver interface {
	// Eigs returns k eigenpairs of op from the part of the spectrum selected by which.
	// It requires 0 < k < op.Dim(). On non-convergence it returns the pairs that
	// did converge together with a *NotConvergedError. ctx is checked before
	// every operator application: a cancelled ctx stops the solve there and
	// returns no eigenpairs (an unfinished run has none certified to Tol)
	// with an error wrapping ctx.Err().
	Eigs(ctx context.Context, op Operator, k int, which Which, opt Options) (Result, error)
}

// ErrInvalidArgument is wrapped by every error about arguments caught before a solve starts.
var ErrInvalidArgument = errs.New("arpack: invalid argument", errs.ErrInvalid)

// ErrNotFinite is wrapped by the error returned when the operator produces NaN or ±Inf.
var ErrNotFinite = errs.New("arpack: operator produced NaN or Inf", errs.ErrInvalid)

// Error is an error code returned by arpack-ng's dsaupd or dseupd other than
// non-convergence (info = 1, reported as *NotConvergedError). Argument errors
// are caught in Go before ARPACK is called, so the codes seen here are those
// ARPACK finds during a solve: 3 (no shifts could be applied; increase NCV),
// −8 (the tridiagonal eigensolver dsteqr failed), −9 (the operator maps the
// start vector to zero: arpack-ng starts from A·v₀), −9999 (no Lanczos
// factorisation could be built), −14 and −17 (dseupd found no or a different
// number of converged Ritz values). For info = 3 the converged pairs are
// returned with the error. The pure-Go solver reports its equivalent failures
// the same way (Routine "lanczos", Info −9999: no new basis direction could be
// found; Routine "dsyev", Info −8).
type Error struct {
	Routine string // "dsaupd", "dseupd", or for the pure-Go solver "lanczos", "dsyev"
	Info    int
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("arpack: %s: info = %d: %s", e.Routine, e.Info, infoText(e.Info))
}

func infoText(info int) string {
	switch info {
	case 1:
		return "maximum number of iterations taken"
	case 3:
		return "no shifts could be applied during an implicit restart; increase NCV"
	case -1:
		return "N must be positive"
	case -2:
		return "NEV must be positive"
	case -3:
		return "NCV must satisfy NEV < NCV ≤ N"
	case -4:
		return "the iteration limit must be positive"
	case -5:
		return "WHICH must be one of LM, SM, LA, SA, BE"
	case -6:
		return "BMAT must be I or G"
	case -7:
		return "the work array WORKL is too short"
	case -8:
		return "the tridiagonal eigensolver dsteqr failed"
	case -9:
		return "the starting vector is zero (arpack-ng starts from A·v0, so the operator maps the start vector to 0)"
	case -10:
		return "IPARAM(7) must be 1, 2, 3, 4 or 5"
	case -11:
		return "IPARAM(7) = 1 and BMAT = G are incompatible"
	case -12:
		return "IPARAM(1) must be 0 or 1"
	case -13:
		return "NEV = 1 and WHICH = BE are incompatible"
	case -14:
		return "dsaupd did not find any eigenvalues to sufficient accuracy"
	case -15:
		return "HOWMNY must be A or S when RVEC is true"
	case -16:
		return "HOWMNY = S is not implemented"
	case -17:
		return "dseupd counted a different number of converged Ritz values than dsaupd"
	case -9999:
		return "could not build a Lanczos factorisation"
	}
	return "unknown error code"
}
