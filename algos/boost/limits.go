package boost

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
)

// MaxC is the largest PSDBoost trade-off C accepted. C is the cost of every
// slack variable of the restricted master LP, and the LP solvers take
// coefficients up to engine.LPMaxValue only (CLP aborts the process on an
// objective coefficient of 1e25 or more).
const MaxC = engine.LPMaxValue

// checkPSDOptions rejects a PSDBoost C beyond MaxC (NaN and infinities
// included) and an infinite ε, before any LP is built.
func checkPSDOptions(c, eps float64) error {
	if !(c <= MaxC) {
		return fmt.Errorf("%w: C = %g exceeds the largest value the LP solvers accept, %g (boost.MaxC)", ErrInvalid, c, float64(MaxC))
	}
	if math.IsInf(eps, 0) {
		return fmt.Errorf("%w: ε = %g, want a finite tolerance", ErrInvalid, eps)
	}
	return nil
}

// Memory estimates the bytes BoostMetric or PSDBoost needs for n points with
// d features, m triplets and at most iters rank-one terms (0: the default
// iteration limit of PSDBoost, the larger one): the D×D Gram matrix and its
// eigendecomposition when the dense eigensolver is used (about 3·D²), else
// the Lanczos basis (about 40·D); the data and its projections (2·N·D);
// every term's direction and margins (D + m per term; PSDBoost's LP column,
// held by the LP solver, adds about as much again as the margins, which
// is left out so that long runs that stop early are not refused), or, when
// that is more, the projections of the points on the terms that the
// totally corrective re-solves keep (2·N per term: their storage doubles
// as it grows); and the per-triplet vectors (about 20·m).
func Memory(n, d, m, iters int, dense bool) float64 {
	if iters <= 0 {
		iters = max(DefaultIters, DefaultPSDBoostIters)
	}
	b := limits.Words(2, n, d) + limits.Words(20, m) + limits.Words(iters, d) + limits.Words(iters, max(m, 2*n))
	if dense {
		return b + limits.Words(3, d, d)
	}
	return b + limits.Words(40, d)
}

// checkMemory applies limits.Check to Memory, before the pricer allocates.
func checkMemory(n, d, m, iters int, dense bool) error {
	if err := limits.Check(fmt.Sprintf("boosting on %d points × %d features (%d triplets, up to %d terms)", n, d, m, iters), Memory(n, d, m, iters, dense)); err != nil {
		return fmt.Errorf("boost: %w", err)
	}
	return nil
}
