// Package engine is the numerical back end of psdlearn. The algorithms call
// everything that costs — dense and sparse eigensolvers, the weighted Gram
// Xᵀ L_W X, pair quadratic forms, bound-constrained minimisation — through the
// Backend interface, and so run unchanged on either of two implementations:
//
//   - "native": OpenBLAS/LAPACKE, arpack-ng and the Fortran L-BFGS-B through
//     cgo (registered only in cgo builds without the purego tag);
//   - "go": pure Go on gonum, always available.
//
// Default returns "native" when it is compiled in and "go" otherwise; the
// PSDLEARN_BACKEND environment variable overrides it. Backends are stateless
// and safe for concurrent use.
package engine

import (
	"context"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Types re-exported from the binding packages, so that algorithms import engine only.
type (
	// EigRange selects part of a symmetric spectrum (see lapack.Range).
	EigRange = lapack.Range
	// Eigen is a (partial) dense eigendecomposition, eigenvalues ascending.
	Eigen = lapack.Eigen
	// Pair is an index pair of data rows.
	Pair = sparse.Pair
	// PairGraph is a signed weight graph on data rows with a fixed pattern.
	PairGraph = sparse.PairGraph
	// Operator is a symmetric linear operator y ← A·x.
	Operator = arpack.Operator
	// Which selects the end of the spectrum for the sparse eigensolver.
	Which = arpack.Which
	// EigsOptions configures the sparse eigensolver.
	EigsOptions = arpack.Options
	// EigsResult holds sparse eigensolver output.
	EigsResult = arpack.Result
	// Problem is a bound-constrained minimisation problem.
	Problem = lbfgsb.Problem
	// MinimizeSettings configures bound-constrained minimisation.
	MinimizeSettings = lbfgsb.Settings
	// MinimizeResult is the outcome of bound-constrained minimisation.
	MinimizeResult = lbfgsb.Result
	// LPSolver creates linear programs that grow by columns.
	LPSolver = lp.Solver
	// LPModel is a linear program that grows by columns (warm re-solves).
	LPModel = lp.Model
	// LPProblem is a linear program in row-bound form.
	LPProblem = lp.Problem
	// LPColumn is one variable of a linear program.
	LPColumn = lp.Column
	// LPSolution is the primal and dual solution of a linear program.
	LPSolution = lp.Solution
	// MinimizeIteration is the state passed to a minimisation progress callback.
	MinimizeIteration = lbfgsb.Iteration
	// MinimizeNotConvergedError reports a minimisation that stopped early (with its best point).
	MinimizeNotConvergedError = lbfgsb.NotConvergedError
	// EigsNotConvergedError reports a sparse eigensolve with fewer converged pairs than asked.
	EigsNotConvergedError = arpack.NotConvergedError
)

// Spectrum ranges for SymEig and LP column constructors, re-exported so that
// algorithms import engine only.
var (
	// AllRange is the whole spectrum.
	AllRange = lapack.AllRange
	// NegativePart is the range (−∞, −tol] of the eigenpairs of (S)_−.
	NegativePart = lapack.NegativePart
	// PositivePart is the range (tol, ∞) of the eigenpairs of (S)_+.
	PositivePart = lapack.PositivePart
	// TopK is the range of the k largest eigenvalues of an n×n matrix.
	TopK = lapack.TopK
	// BottomK is the range of the k smallest eigenvalues.
	BottomK = lapack.BottomK
	// LPNonNegative returns the column of a variable x ≥ 0.
	LPNonNegative = lp.NonNegative
	// LPFree returns the column of an unbounded variable.
	LPFree = lp.Free
	// ErrLPTooLarge is wrapped by LP errors about a problem beyond the
	// backend's solver size limit (the pure-Go simplex keeps dense basis
	// matrices; see lp.GoMaxRows).
	ErrLPTooLarge = lp.ErrTooLarge
)

// Ends of the spectrum for Eigs.
const (
	LargestAlgebraic  = arpack.LargestAlgebraic
	SmallestAlgebraic = arpack.SmallestAlgebraic
	LargestMagnitude  = arpack.LargestMagnitude
	SmallestMagnitude = arpack.SmallestMagnitude
	BothEnds          = arpack.BothEnds
)

// Backend is the set of numerical kernels the algorithms use. All methods are
// safe for concurrent use. Methods return errors for invalid input; they do
// not panic on user data.
type Backend interface {
	// Name is the registry name of the backend ("native" or "go").
	Name() string

	// SymEig computes the eigenvalues of the symmetric a in range r (and the
	// eigenvectors if vectors is true), in ascending order. a is not modified.
	SymEig(a mat.Symmetric, r EigRange, vectors bool) (Eigen, error)

	// WeightedGram overwrites dst (D×D) with Xᵀ L_W X for the n×D data x and
	// the current weights of g: Σ_pairs w_ab (x_a − x_b)(x_a − x_b)ᵀ.
	WeightedGram(dst *mat.SymDense, x *mat.Dense, g *PairGraph) error

	// PairQuadForms writes (x_a − x_b)ᵀ M (x_a − x_b) for every pair into dst
	// (len(dst) == len(pairs)), for the n×D data x and the D×D symmetric m.
	PairQuadForms(dst []float64, x *mat.Dense, m mat.Symmetric, pairs []Pair) error

	// PairSqDists writes ‖z_a − z_b‖² for every pair into dst, for the rows of z.
	// With z = X·L it gives the quadratic forms of M = L Lᵀ in O(pairs·r).
	PairSqDists(dst []float64, z *mat.Dense, pairs []Pair) error

	// Eigs computes k eigenpairs of the symmetric operator op from the end of
	// the spectrum chosen by which (implicitly restarted Lanczos). ctx is
	// checked before every operator product; on cancellation Eigs returns no
	// eigenpairs and an error wrapping ctx.Err().
	Eigs(ctx context.Context, op Operator, k int, which Which, opt EigsOptions) (EigsResult, error)

	// Minimize minimises a smooth function under bounds with L-BFGS-B. ctx
	// is checked before every function evaluation; on cancellation Minimize
	// returns the best point so far and an error wrapping both ctx.Err() and
	// a *MinimizeNotConvergedError.
	Minimize(ctx context.Context, p Problem, x0 []float64, s MinimizeSettings) (MinimizeResult, error)

	// LP returns the backend's linear-programming solver (COIN-OR CLP for
	// native, a dense revised simplex with warm starts for go, meant for
	// problems of up to a few hundred rows). The go simplex checks the
	// context of a solve before every pivot; CLP only before and after the
	// solve, with a deadline as its time limit (see lp.Model).
	LP() LPSolver

	// BLAS returns the BLAS implementation of the backend for level-3 work in
	// the algorithms (OpenBLAS for native, gonum for go).
	BLAS() lapack.BLAS
}

// ErrDimension is wrapped by errors about mismatched dimensions.
var ErrDimension = errs.New("engine: dimension mismatch", errs.ErrDimension)

// ErrNotFinite is wrapped by errors about NaN or Inf input.
var ErrNotFinite = errs.New("engine: input has NaN or Inf", errs.ErrInvalid)
