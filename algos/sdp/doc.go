// Package sdp solves Frobenius-norm regularised semidefinite programs
//
//	min ⟨C, X⟩ + (1/2σ)‖X‖²_F  s.t.  X ⪰ 0,  ⟨A_i, X⟩ ≤ b_i (or = b_i),
//
// the general problem of Section 4 of Shen, Kim, Liu, Wang and van den
// Hengel, "An Efficient Dual Approach to Distance Metric Learning". The A_i
// are given as sparse entries and signed rank-one terms (SymMatrix) and are
// never formed densely except on the dense path.
//
// Solve minimises the smooth Lagrange dual
//
//	min_u ½σ‖(C + Σ u_i A_i)_−‖²_F + bᵀu,  u_i ≥ 0 for inequalities,
//
// with the engine's L-BFGS-B (the shared driver of algos/internal/dualsolve)
// and recovers X = σ(C + Σ u_i A_i)_−, PSD by construction. The negative
// part comes from a dense symmetric eigensolver or, for large sparse
// problems with a low-rank solution, from the sparse Lanczos solver of the
// engine (Method), run on (C + Σ u_i A_i + sI)⁻¹ through a sparse LDLᵀ
// factorization when that is affordable, and at a tolerance that follows
// the progress of the solve (exact again for the certificate). A projected semismooth Newton-CG polish finishes solves
// that L-BFGS-B leaves short of the certificate. Every Solution carries its
// duality gap and largest constraint violation, and says whether it is
// certified.
//
// Package mvu builds approximate maximum variance unfolding on Solve.
package sdp

import "github.com/psdlearn/psdlearn/errs"

// The defaults of Options, each defined once.
const (
	// DefaultGapTol is the default relative duality gap at which Solve
	// stops: one order of magnitude inside the 1e-6 certificate asked of it.
	DefaultGapTol = 1e-7
	// DefaultFeasTol is the default largest relative violation of the hard
	// constraints at which Solve stops.
	DefaultFeasTol = 1e-6
	// DefaultMaxIter bounds the L-BFGS-B iterations of a solve.
	DefaultMaxIter = 20000
)

// ErrInput is wrapped by the errors about invalid problems and options; it
// matches errs.ErrInvalid.
var ErrInput = errs.New("sdp: invalid input", errs.ErrInvalid)
