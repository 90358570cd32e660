package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// BlockEigsOptions configures BlockEigs. The zero value selects the defaults
// documented per field.
type BlockEigsOptions struct {
	// Start, when non-nil, is a starting subspace (n×s, any s ≥ 1): the Ritz
	// vectors of a previous, nearby problem (BlockEigsResult.Subspace). Its
	// columns need not be orthonormal; columns beyond s are random.
	Start *mat.Dense
	// Guard is the number of block columns beyond k, which speed up the
	// convergence of the k-th pair and carry the next call's warm start.
	// Zero selects max(2, k/4); negative is invalid.
	Guard int
	// Tol is the residual tolerance: the pair (θ, x) is accepted when
	// ‖A·x − θ·x‖ ≤ Tol·‖A‖, with ‖A‖ estimated by the largest ‖A·v‖/‖v‖
	// of the operator products made. Then |λ − θ| ≤ Tol·‖A‖. Zero selects 1e-8;
	// values below 1e-14, NaN or infinite are invalid.
	Tol float64
	// Scale, when positive, replaces the estimate of ‖A‖ in the tolerance:
	// pairs are accepted when ‖A·x − θ·x‖ ≤ Tol·Scale (a caller that knows
	// the scale of the eigenvalues it needs, as the SDP dual does).
	Scale float64
	// MaxIter bounds the number of block iterations. Zero selects 1000.
	MaxIter int
	// Seed fixes the random columns of the starting block.
	Seed uint64
}

// BlockEigsResult holds the k wanted eigenpairs (sorted ascending, as from
// Eigs) and the subspace to warm-start the next call with.
type BlockEigsResult struct {
	EigsResult
	// Subspace is the whole block of Ritz vectors (k + guard columns,
	// orthonormal): the Start of the next, nearby problem.
	Subspace *mat.Dense
	// Residuals are ‖A·x_i − θ_i·x_i‖ of the returned pairs, recomputed
	// with fresh operator products.
	Residuals []float64
	// Norm is the scale the tolerance was relative to: Scale, or the
	// estimate of ‖A‖.
	Norm float64
}

// BlockEigs computes k eigenpairs of the symmetric operator op at the end of
// the spectrum chosen by which (SmallestAlgebraic or LargestAlgebraic) by
// the locally optimal block preconditioned conjugate gradient method
// (LOBPCG, Knyazev 2001) without preconditioner, with soft locking: every
// iteration runs the Rayleigh–Ritz procedure on [X, W, P] — the block, the
// residuals of its unconverged columns and the previous directions — each
// part orthonormalised against the others (with the rank-revealing
// orthonormalisation of Hetmaniuk and Lehoucq, which drops directions that
// have become dependent), and converged columns leave W and P but stay in
// the block. Unlike implicitly restarted Lanczos, which starts from one
// vector, it starts from a subspace: consecutive, nearby problems (the
// eigenproblems of a dual solver's evaluations) warm-start from the previous
// call's Subspace and need a few iterations instead of a cold solve.
//
// The dense work (tall-skinny products, the small Rayleigh–Ritz
// eigenproblems) runs on b's BLAS and SymEig, so the native backend's
// OpenBLAS and LAPACK and the pure-Go backend's gonum give the two twins of
// the same algorithm. The returned pairs' residuals are recomputed with
// fresh operator products before they are accepted. ctx is checked before
// every block of operator products. If MaxIter is reached the result holds
// the current Ritz pairs with an *EigsNotConvergedError.
func BlockEigs(ctx context.Context, b Backend, op Operator, k int, which Which, opt BlockEigsOptions) (BlockEigsResult, error) {
	var res BlockEigsResult
	if op == nil {
		return res, fmt.Errorf("engine: BlockEigs: nil operator: %w", ErrDimension)
	}
	n := op.Dim()
	guard := opt.Guard
	if guard == 0 {
		guard = max(2, k/4)
	}
	switch {
	case n < 1:
		return res, fmt.Errorf("engine: BlockEigs: operator of dimension %d: %w", n, ErrDimension)
	case k < 1 || k > n:
		return res, fmt.Errorf("engine: BlockEigs: k = %d for dimension %d: %w", k, n, ErrDimension)
	case guard < 0:
		return res, fmt.Errorf("engine: BlockEigs: Guard = %d: %w", opt.Guard, ErrDimension)
	case which != SmallestAlgebraic && which != LargestAlgebraic:
		return res, fmt.Errorf("engine: BlockEigs: which = %v, want SA or LA: %w", which, ErrDimension)
	case opt.Tol != 0 && !(opt.Tol >= 1e-14 && opt.Tol < math.Inf(1)):
		return res, fmt.Errorf("engine: BlockEigs: Tol = %g: %w", opt.Tol, ErrNotFinite)
	case !(opt.Scale >= 0 && opt.Scale < math.Inf(1)):
		return res, fmt.Errorf("engine: BlockEigs: Scale = %g: %w", opt.Scale, ErrNotFinite)
	case opt.MaxIter < 0:
		return res, fmt.Errorf("engine: BlockEigs: MaxIter = %d: %w", opt.MaxIter, ErrDimension)
	}
	if opt.Start != nil {
		if r, c := opt.Start.Dims(); r != n || c < 1 {
			return res, fmt.Errorf("engine: BlockEigs: Start is %d×%d for dimension %d: %w", r, c, n, ErrDimension)
		}
	}
	m := min(n, k+guard)
	tol := opt.Tol
	if tol == 0 {
		tol = 1e-8
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = 1000
	}
	s := &lobpcg{ctx: ctx, b: b, impl: b.BLAS(), op: op, n: n, sign: 1, given: opt.Scale}
	if which == LargestAlgebraic {
		s.sign = -1 // the smallest of −A
	}

	// The starting block: Start's columns, then random ones.
	x := mat.NewDense(n, m, nil)
	used := 0
	if opt.Start != nil {
		_, c := opt.Start.Dims()
		used = min(c, m)
		x.Slice(0, n, 0, used).(*mat.Dense).Copy(opt.Start.Slice(0, n, 0, used))
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x10bc9))
	for j := used; j < m; j++ {
		for i := 0; i < n; i++ {
			x.Set(i, j, 2*rng.Float64()-1)
		}
	}
	x = s.orthonormalize(x, nil)
	for x == nil || colsOf(x) < m {
		// The start was rank deficient: top up with random columns.
		have := 0
		if x != nil {
			have = colsOf(x)
		}
		y := mat.NewDense(n, m, nil)
		if have > 0 {
			y.Slice(0, n, 0, have).(*mat.Dense).Copy(x)
		}
		for j := have; j < m; j++ {
			for i := 0; i < n; i++ {
				y.Set(i, j, 2*rng.Float64()-1)
			}
		}
		x = s.orthonormalize(y, nil)
	}
	ax, err := s.apply(x)
	if err != nil {
		return res, err
	}
	theta, x, ax, err := s.rayleighRitz([]*mat.Dense{x}, []*mat.Dense{ax}, m)
	if err != nil {
		return res, err
	}
	var p, ap *mat.Dense
	r := mat.NewDense(n, m, nil)
	rnorm := make([]float64, m)
	for it := 1; ; it++ {
		s.residuals(r, rnorm, x, ax, theta)
		lim := tol * s.scale(opt.Scale)
		done := true
		var active []int
		for j := 0; j < m; j++ {
			if rnorm[j] > lim {
				active = append(active, j)
				if j < k {
					done = false
				}
			}
		}
		if done {
			// Accept only on residuals from fresh products: the block's
			// A·X is carried by recurrence.
			if ax, err = s.apply(x); err != nil {
				return res, err
			}
			s.residuals(r, rnorm, x, ax, theta)
			if slicesMax(rnorm[:k]) <= tol*s.scale(opt.Scale) {
				res.Iterations = it
				break
			}
			continue
		}
		if it > maxIter {
			res.Iterations = it - 1
			s.fill(&res, x, theta, rnorm, k)
			return res, &EigsNotConvergedError{Requested: k, Converged: countBelow(rnorm[:k], lim), Iterations: it - 1}
		}
		// W: the active residuals, orthonormal and orthogonal to X.
		w := mat.NewDense(n, len(active), nil)
		for t, j := range active {
			for i := 0; i < n; i++ {
				w.Set(i, t, r.At(i, j))
			}
		}
		w = s.orthonormalize(w, []*mat.Dense{x})
		if w == nil {
			// The residuals lie in span X to rounding: nothing to add.
			res.Iterations = it
			break
		}
		aw, err := s.apply(w)
		if err != nil {
			return res, err
		}
		basis, images := []*mat.Dense{x, w}, []*mat.Dense{ax, aw}
		if p != nil {
			var ap2 *mat.Dense
			var amp float64
			p, ap2, amp = s.orthonormalizePair(p, ap, []*mat.Dense{x, w}, []*mat.Dense{ax, aw})
			if p != nil && amp > 2 {
				// The orthonormalisation magnified P's directions, and with
				// them the rounding of the carried A·P: recompute it, or the
				// error compounds from one iteration to the next and spoils
				// the Rayleigh–Ritz values.
				if ap2, err = s.apply(p); err != nil {
					return res, err
				}
			}
			if p != nil {
				basis, images = append(basis, p), append(images, ap2)
			}
		}
		var c *mat.Dense
		theta, c, err = s.rayleighRitzCoef(basis, images, m)
		if err != nil {
			return res, err
		}
		xNew, axNew := combine(s.impl, basis, c), combine(s.impl, images, c)
		// P: the part of the update outside X, for the active columns.
		ca := mat.NewDense(rowsOf(c)-m, len(active), nil)
		for t, j := range active {
			for i := m; i < rowsOf(c); i++ {
				ca.Set(i-m, t, c.At(i, j))
			}
		}
		p, ap = combine(s.impl, basis[1:], ca), combine(s.impl, images[1:], ca)
		x, ax = xNew, axNew
		if it%25 == 0 {
			// Refresh A·X from fresh products now and then: the recurrence
			// accumulates rounding.
			if ax, err = s.apply(x); err != nil {
				return res, err
			}
		}
	}
	s.fill(&res, x, theta, rnorm, k)
	return res, nil
}
