package boost

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
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
// solved by the backend's LP solver (CLP for "native", in its dual form
// with one row per term and one bounded column per triplet; the pure-Go
// simplex for "go", in the primal form above) over a working set of
// triplets (those with small margins): every triplet whose margin falls
// below ρ is added before the master counts as solved, and the LP is
// warm-started after each added term or batch of triplets (see master). Its
// triplet weights u, zero outside the working set, are feasible
// (0 ≤ u ≤ C, 1ᵀu = 1) and optimal for the dual (D1) of the LP over all
// triplets, and its optimum is the dual value π = max_j Σ_r u_r H_rj.
// Pricing is an eigendecomposition of Â(u): if λmax ≤ π + ε no rank-one
// term has a positive reduced cost and X = Σ_j w_j v_j v_jᵀ solves the SDP
// to within ε; otherwise the eigenvectors with a positive reduced cost
// (opt.Columns of them at most; on the Lanczos path the leading one) become
// new columns, optionally priced at smoothed weights (opt.Stabilize; see
// colGen).
//
// Bounds. π is the value of a feasible X, a lower bound on the SDP optimum;
// for every feasible u that was priced λmax(Â(u)) is an upper bound (weak
// duality for min_u λmax(Â(u))). Result.Curve holds π after every iteration
// (it increases to the SDP optimum), Result.Lambda λmax at every weight
// vector priced, Result.U the priced weights with the smallest λmax and
// Result.SDPGap = λmax(Â(U)) − π, the certificate: the SDP optimum lies in
// [π, π + SDPGap]. Result.DualityGap is the duality gap of the last LP
// recomputed from its solution over all triplets. It stops when
// SDPGap ≤ ε, after opt.Iters iterations, or when every improving
// eigenvector is already a column of the master (the LP's tolerances).
//
// On cancellation PSDBoost returns the best iterate so far — the metric of
// the last restricted master problem solved (π never decreases, so it is also
// the best), with Stop = StopCancelled, SDPGap from the smallest bound priced
// so far, and no terms if no LP was solved — and an error wrapping
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
		eps = DefaultEps
	}
	if !(eps >= 0) {
		return nil, fmt.Errorf("%w: ε = %g", ErrInvalid, eps)
	}
	iters := opt.Iters
	if iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want ≥ 0 (0 selects the default)", ErrInvalid, iters)
	}
	if iters == 0 {
		iters = DefaultPSDBoostIters
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
	cols := opt.Columns
	if cols < 0 {
		return nil, fmt.Errorf("%w: Columns = %d, want ≥ 0 (0 selects the default)", ErrInvalid, cols)
	}
	if cols == 0 {
		cols = defaultColumns
	}
	alpha := opt.Stabilize
	if !(alpha < 1) {
		return nil, fmt.Errorf("%w: Stabilize = %g, want < 1 (0 selects the default, a negative value turns smoothing off)", ErrInvalid, alpha)
	}
	switch {
	case alpha == 0:
		alpha = defaultStabilize
	case alpha < 0:
		alpha = 0
	}

	u := make([]float64, m)
	for r := range u {
		u[r] = 1 / float64(m)
	}
	res := &Result{Stop: StopIterations, Pi: math.NaN(), DualityGap: math.NaN(), SDPGap: math.NaN()}
	cg := &colGen{pr: pr, m: m, eps: eps, cols: cols, alpha: alpha, ub: math.Inf(1)}
	var (
		ms     *master
		vs     [][]float64
		sol    masterSolution // the last master solution
		solved bool           // sol holds an optimal solution
		pi     = math.Inf(-1)
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
		w := sol.w // one weight per column of the LP
		res.U = append([]float64(nil), cg.uBest...)
		res.Pi = pi
		res.Objective = pi
		res.SDPGap = cg.ub - pi
		res.DualityGap = lpGap(ms.hs[:len(w)], w, sol.u, c)
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
	// The first column: the leading eigenvector at uniform weights (there is
	// no π yet to price the others against).
	vals, vecs, err := pr.topK(ctx, u, 1)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(err)
		}
		return nil, err
	}
	cg.bound(vals[0], u)
	res.Lambda = append(res.Lambda, vals[0])
	h0 := make([]float64, m)
	if err := pr.margins(h0, vecs[0]); err != nil {
		return nil, err
	}
	pending := []column{{v: vecs[0], h: h0}}
	for it := 1; ; it++ {
		if ctx.Err() != nil {
			return cancelled(nil)
		}
		// Add the priced columns to the master, as many as the memory
		// limit allows (the check before the run counted one per iteration).
		if room := termRoom(pr, m, len(vs)); room < len(pending) {
			if room <= 0 {
				res.Stop = StopMemory
				break
			}
			pending = pending[:room]
		}
		if ms == nil {
			col := pending[0]
			if opt.lpDual {
				ms, err = newMasterForm(solver, col.h, c, cmp.Or(opt.keep, defaultKeep), false)
			} else {
				ms, err = newMaster(solver, col.h, c, cmp.Or(opt.keep, defaultKeep))
			}
			if err != nil {
				return nil, fmt.Errorf("boost: restricted master: %w", err)
			}
			// A term may go termAge solves without weight: about the last
			// defaultTermAge·defaultColumns terms priced stay whatever the
			// columns per iteration. The pure-Go simplex's primal form
			// keeps every term: its dense basis, warm-started across
			// deleted columns, turned singular on standardised wine at
			// C = 0.05 (iteration 14), where keeping them solves.
			ms.termAge = max(defaultTermAge*defaultColumns/cols, defaultTermAge)
			if ms.primal && solver.Name() != "native" {
				ms.termAge = math.MaxInt
			}
			switch {
			case opt.termAge > 0:
				ms.termAge = opt.termAge
			case opt.termAge < 0:
				ms.termAge = math.MaxInt
			}
			vs = appendTerm(vs, col.v)
			pending = pending[1:]
		}
		hs := make([][]float64, len(pending))
		for k, col := range pending {
			hs[k] = col.h
		}
		if err := ms.addTerms(hs); err != nil {
			return nil, fmt.Errorf("boost: restricted master: %w", err)
		}
		for _, col := range pending {
			vs = appendTerm(vs, col.v)
		}
		next, err := ms.solve(ctx)
		if err != nil {
			err = fmt.Errorf("boost: restricted master (iteration %d): %w", it, err)
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		sol, solved = next, true
		vs = withoutTerms(vs, sol.dropped)
		pi = sol.pi
		copy(u, sol.u)
		res.Curve = append(res.Curve, pi)
		res.Iterations = it

		var lams []float64
		pending, lams, err = cg.price(ctx, u, pi, vs)
		res.Lambda = append(res.Lambda, lams...)
		if err != nil {
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "psdboost", Iteration: it, Objective: pi, Gap: cg.ub - pi,
				Message: fmt.Sprintf("iter %d  π %.10g  λmax %.10g  gap %.3g  +%d columns (%d terms; %d triplet columns, %d at C; %d LP pivots)", it, pi, cg.ub, cg.ub-pi, len(pending), len(vs), sol.lpCols, sol.up, sol.pivots)})
		}
		if cg.ub <= pi+eps {
			res.Stop = StopConverged
			break
		}
		if it >= iters {
			break
		}
		if len(pending) == 0 {
			// Every eigenvector with a positive reduced cost is already a
			// column of the LP, so its duals priced them above π + ε only
			// through the solver's tolerances: more columns cannot help.
			res.Stop = StopStalled
			break
		}
	}
	finish()
	return res, nil
}

// withoutTerms removes from vs the terms at the indices drop (ascending), as
// the master removed them.
func withoutTerms(vs [][]float64, drop []int) [][]float64 {
	if len(drop) == 0 {
		return vs
	}
	k := 0
	return compact(vs, func(j int) bool {
		if k < len(drop) && drop[k] == j {
			k++
			return false
		}
		return true
	})
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

// termRoom returns how many more rank-one terms PSDBoost can hold, beyond
// the have it holds, within the memory limit by the estimate of Memory
// (each term: its direction and its m margins); math.MaxInt without a
// limit.
func termRoom(pr *pricer, m, have int) int {
	lim, err := limits.MaxMemory()
	if err != nil || lim == limits.Unlimited {
		return math.MaxInt
	}
	per := Memory(pr.n, pr.d, m, 2, pr.dense) - Memory(pr.n, pr.d, m, 1, pr.dense)
	base := Memory(pr.n, pr.d, m, 1, pr.dense) - per
	return int((float64(lim)-base)/per) - have
}
