package boost

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// psdBoost solves the trace-one hinge-loss SDP
//
//	max ρ − C Σ_r ξ_r  s.t.  ⟨A_r, X⟩ ≥ ρ − ξ_r, ξ ≥ 0, X ⪰ 0, tr X = 1
//
// by column generation (Shen, Welsh and Wang, NIPS 2008; BoostMetric with
// the hinge loss). The restricted master problem is the LP in the weights of
// the rank-one terms found so far,
//
//	max ρ − C Σ_r ξ_r  s.t.  H_r w + ξ_r − ρ ≥ 0, 1ᵀw = 1, w, ξ ≥ 0,
//
// solved as a minimisation by the backend's LP solver (CLP for "native",
// the pure-Go simplex for "go") by row generation: only a working set of
// triplets (those with small margins) has rows, every triplet whose margin
// falls below ρ is added before the master counts as solved, and the LP is
// warm-started after each added column or batch of rows (see master). Its
// row duals, zero outside the working set, are the triplet weights u
// (0 ≤ u ≤ C, 1ᵀu = 1) of the LP over all triplets and its optimum is the
// dual value π = max_j Σ_r u_r H_rj of (D1). Pricing is the leading
// eigenpair (λ, v) of Â(u): if λ ≤ π + ε no rank-one term has a positive
// reduced cost and X = Σ_j w_j v_j v_jᵀ solves the SDP to within ε;
// otherwise v vᵀ becomes a new column. (The paper solves the dual (D1) and
// reads w from its multipliers; solving the primal LP gives the same pair of
// solutions and lets new terms enter as columns.)
//
// Result.Curve holds π after every iteration (it increases to the SDP
// optimum), Result.DualityGap the duality gap of the last LP recomputed from
// its solution over all triplets, and Result.SDPGap the final λ − π. It
// stops when λ ≤ π + ε (the certificate: u is feasible for the dual over
// all triplets, so the SDP optimum lies in [π, λ]), after opt.Iters
// iterations, or when pricing repeats a column already in the master.
//
// On cancellation PSDBoost returns the best iterate so far — the metric of
// the last restricted master problem solved (π never decreases, so it is also
// the best), with Stop = StopCancelled, SDPGap NaN if that iterate was not
// priced yet, and no terms if no LP was solved — and an error wrapping
// ctx.Err(). The context is checked before every iteration and inside the
// eigensolver and the LP solver, so it returns within one iteration (the
// native LP solver, CLP, notices a cancellation only when its solve ends; a
// deadline becomes its time limit).
func psdBoost(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*Result, error) {
	if err := validate(x, ts); err != nil {
		return nil, err
	}
	m := ts.Len()
	c := opt.C
	if c == 0 {
		c = 1 / (defaultViolFrac * float64(m))
	}
	if err := checkPSDOptions(c, opt.Eps); err != nil {
		return nil, err
	}
	if !(c*float64(m) >= 1) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("%w: C = %g is below 1/m = %g for %d triplets (the LP is unbounded)", ErrInvalid, c, 1/float64(m), m)
	}
	eps := opt.Eps
	if eps == 0 {
		eps = defaultEps
	}
	if !(eps >= 0) {
		return nil, fmt.Errorf("%w: ε = %g", ErrInvalid, eps)
	}
	iters := opt.Iters
	if iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want ≥ 0 (0 selects the default)", ErrInvalid, iters)
	}
	if iters == 0 {
		iters = defaultPSDIters
	}
	b := engine.Or(opt.Backend)
	solver := opt.lp
	if solver == nil {
		solver = b.LP()
	}
	pr, err := newPricer(b, x, ts, opt)
	if err != nil {
		return nil, err
	}
	_, d := x.Dims()

	u := make([]float64, m)
	for r := range u {
		u[r] = 1 / float64(m)
	}
	res := &Result{Stop: StopIterations, Pi: math.NaN(), DualityGap: math.NaN(), SDPGap: math.NaN()}
	var (
		ms     *master
		vs     [][]float64
		sol    masterSolution // the last master solution
		solved bool           // sol holds an optimal solution
		pi     = math.Inf(-1)
		lambda float64
		v      []float64
		priced bool // lambda, v price the duals u of sol
	)
	defer func() {
		if ms != nil {
			ms.close()
		}
	}()
	// finish stores the last solved restricted master problem in res.
	finish := func() {
		if !solved {
			return
		}
		w := sol.w // one weight per column of the LP (vs may hold one more)
		res.U = append([]float64(nil), u...)
		res.Pi = pi
		res.Objective = pi
		if priced {
			res.SDPGap = lambda - pi
		}
		res.DualityGap = lpGap(ms.hs[:len(w)], w, u, c)
		var keepV [][]float64
		var keepW []float64
		for j, wj := range w {
			if wj > 0 {
				keepV = append(keepV, vs[j])
				keepW = append(keepW, wj)
			}
		}
		res.V, res.W = packTerms(d, keepV), keepW
	}
	cancelled := func(err error) (*Result, error) {
		res.Stop = StopCancelled
		finish()
		return res, ctxError(ctx, err)
	}
	lambda, v, err = pr.top(ctx, u)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(err)
		}
		return nil, err
	}
	res.Lambda = append(res.Lambda, lambda)
	for it := 1; ; it++ {
		if ctx.Err() != nil {
			return cancelled(nil)
		}
		// Add v vᵀ as a term of the master.
		h := make([]float64, m)
		if err := pr.margins(h, v); err != nil {
			return nil, err
		}
		if ms == nil {
			ms, err = newMaster(solver, h, c)
		} else {
			err = ms.addTerm(h)
		}
		if err != nil {
			return nil, fmt.Errorf("boost: restricted master: %w", err)
		}
		vs = appendTerm(vs, v)
		next, err := ms.solve(ctx)
		if err != nil {
			err = fmt.Errorf("boost: restricted master (iteration %d): %w", it, err)
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		sol, solved, priced = next, true, false
		pi = sol.pi
		copy(u, sol.u)
		res.Curve = append(res.Curve, pi)
		res.Iterations = it

		lambda, v, err = pr.top(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		priced = true
		res.Lambda = append(res.Lambda, lambda)
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "psdboost", Iteration: it, Objective: pi, Gap: lambda - pi,
				Message: fmt.Sprintf("iter %d  π %.10g  λmax %.10g  gap %.3g  w %.4g", it, pi, lambda, lambda-pi, sol.w[it-1])})
		}
		if lambda <= pi+eps {
			res.Stop = StopConverged
			break
		}
		if it >= iters {
			break
		}
		if repeats(vs, v) {
			// The LP already holds this column, so its duals priced it at
			// λ > π + ε only through the solver's tolerances: more columns
			// cannot help.
			res.Stop = StopStalled
			break
		}
	}
	finish()
	return res, nil
}

// repeats reports whether v equals ± one of the columns in vs to rounding.
func repeats(vs [][]float64, v []float64) bool {
	for _, u := range vs {
		var dot float64
		for i := range u {
			dot += u[i] * v[i]
		}
		if math.Abs(dot) > 1-1e-12 {
			return true
		}
	}
	return false
}

// lpGap returns D(u) − P(w) for the restricted master problem with margin
// columns hs: the dual value D(u) = max_j Σ_r u_r H_rj of the triplet
// weights u and the primal value P(w) = max_ρ ρ − C Σ_r (ρ − (H w)_r)_+ of the
// term weights w, both recomputed here from scratch. For feasible u and w
// (1ᵀu = 1, 0 ≤ u ≤ C; 1ᵀw = 1, w ≥ 0) weak duality makes it ≥ 0, and it is
// 0 exactly at an optimal pair.
func lpGap(hs [][]float64, w, u []float64, c float64) float64 {
	m := len(u)
	dual := math.Inf(-1)
	for _, h := range hs {
		var s float64
		for r, v := range h {
			s += u[r] * v
		}
		dual = math.Max(dual, s)
	}
	return dual - primalValue(hs, w, c, m)
}

// primalValue returns max_ρ ρ − C Σ_r (ρ − g_r)_+ for the margins g = H w:
// the objective is concave and piecewise linear in ρ with slope 1 − C·#{g_r < ρ},
// so the maximum is at the k-th smallest margin with k = ⌈1/C⌉ (the first
// breakpoint where the slope turns non-positive).
func primalValue(hs [][]float64, w []float64, c float64, m int) float64 {
	g := make([]float64, m)
	for j, h := range hs {
		for r, v := range h {
			g[r] += w[j] * v
		}
	}
	sorted := append([]float64(nil), g...)
	sort.Float64s(sorted)
	k := int(math.Ceil(1/c - 1e-12)) // slope 1 − C·k ≤ 0 from the k-th breakpoint on
	if k < 1 {
		k = 1
	}
	if k > m {
		k = m
	}
	rho := sorted[k-1]
	val := rho
	for _, v := range g {
		if v < rho {
			val -= c * (rho - v)
		}
	}
	return val
}
