// Package engine is the numerical back end of psdlearn. The algorithms call
// everything that costs — dense and sparse eigensolvers, the weighted Gram
// Xᵀ L_W X, pair quadratic forms, bound-constrained minimisation — through the
// Backend interface, and so run unchanged on either of two implementations:
//
//   - "native": OpenBLAS/LAPACKE, arpack-ng and the Fortran L-BFGS-B through
//     cgo (registered only in cgo builds without the purego tag);
//   - "go": pure Go on gonum, always available.
//
// Backends register themselves when package engine/backends is imported
// (the root package psdlearn and the command import it). Default returns
// "native" when it is compiled in and "go" otherwise; the
// PSDLEARN_BACKEND environment variable overrides it. Backends are stateless
// and safe for concurrent use.
package engine

import (
	"context"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// The types of the Backend interface (spectrum ranges, the sparse
// eigensolver's operator and options, the minimiser's problem and settings,
// linear programs) are defined in this package, so that algorithms depend on
// no binding package; the binding packages implement them (lapack, arpack,
// lbfgsb, lp) and engine/backends registers the composed backends.

type (
	// Pair is an index pair of data rows.
	Pair = sparse.Pair
	// PairGraph is a signed weight graph on data rows with a fixed pattern.
	PairGraph = sparse.PairGraph
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
	BLAS() blas.Float64
}

// ErrDimension is wrapped by errors about mismatched dimensions.
var ErrDimension = errs.New("engine: dimension mismatch", errs.ErrDimension)

// ErrNotFinite is wrapped by errors about NaN or Inf input.
var ErrNotFinite = errs.New("engine: input has NaN or Inf", errs.ErrInvalid)
