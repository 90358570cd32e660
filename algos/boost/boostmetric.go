package boost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/corrective"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/internal/linesearch"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// The defaults of Options, each defined once (the distributed learner and
// the root package's estimators use them too).
const (
	// DefaultNu is BoostMetric's trace regulariser ν.
	DefaultNu = 1e-7
	// DefaultIters bounds BoostMetric's rank-one terms.
	DefaultIters = 500
	// DefaultPSDBoostIters bounds PSDBoost's pricing rounds.
	DefaultPSDBoostIters = 1000
	// DefaultEps is PSDBoost's stopping tolerance λmax(Â(u)) ≤ π + Eps.
	DefaultEps = 1e-7
	// DefaultTol is BoostMetric's relative stopping tolerance.
	DefaultTol = 1e-8
)

// defaultViolFrac sets PSDBoost's default C = 1/(defaultViolFrac·m).
const defaultViolFrac = 0.1

// boostMetric learns X = Σ_j w_j v_j v_jᵀ by minimising the exponential loss
// log Σ_r exp(−ρ_r) + ν·1ᵀw or the logistic loss Σ_r log(1 + exp(−ρ_r)) + ν·1ᵀw
// of the margins ρ = H w over w ≥ 0, adding one rank-one term per iteration:
// the leading eigenvector v of Â(u) for the triplet weights u of the current
// solution (u ∝ exp(−ρ) for the exponential loss, u_r = 1/(1 + exp(ρ_r)) for
// the logistic loss). It stops when λmax(Â(u)) < ν + Tol·λ₁ (no term can
// decrease the objective by more than rounding: at the optimum λmax = ν, which
// the iterates approach from above) or after opt.Iters terms.
//
// Stage-wise mode sets the new weight by an exact line search (a safeguarded
// Newton iteration on the derivative of the objective, bracketed by
// bisection, with all quantities in log-sum-exp form) and keeps the earlier
// weights; corrective mode re-minimises the objective over all the weights
// with the backend's L-BFGS-B, warm-started from the previous weights and
// the new term's line-search weight and capped at a few iterations per term
// (the last re-solve, and one whose weights pass the stopping test, run to
// full accuracy), so the objective strictly decreases at every iteration.
//
// On cancellation BoostMetric returns the best iterate so far — the metric of
// the last completed iteration (the objective never increases, so it is also
// the best), with Stop = StopCancelled; no terms if none completed — and an
// error wrapping ctx.Err(). The context is checked before every iteration and
// inside the eigensolver and L-BFGS-B, so it returns within one iteration.
func boostMetric(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*Result, error) {
	if err := validate(x, ts); err != nil {
		return nil, err
	}
	if opt.Loss != Exp && opt.Loss != Logistic {
		return nil, fmt.Errorf("%w: BoostMetric needs the exponential or logistic loss, got %v (use PSDBoost for the hinge loss)", ErrInvalid, opt.Loss)
	}
	if opt.Mode != Stagewise && opt.Mode != Corrective {
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalid, opt.Mode)
	}
	nu := opt.Nu
	if nu == 0 {
		nu = DefaultNu
	}
	if !(nu > 0) || math.IsInf(nu, 0) {
		return nil, errs.Option(fmt.Errorf("%w: ν = %g must be positive and finite", ErrInvalid, nu))
	}
	iters := opt.Iters
	if iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want ≥ 0 (0 selects the default)", ErrInvalid, iters)
	}
	if iters == 0 {
		iters = DefaultIters
	}
	tol := opt.Tol
	switch {
	case tol == 0:
		tol = DefaultTol
	case tol < 0:
		tol = 0
	}
	var stopAt float64 // ν + tol·λ₁
	b := engine.Or(opt.Backend)
	pr, err := newPricer(b, x, ts, opt)
	if err != nil {
		return nil, err
	}
	_, d := x.Dims()
	m := ts.Len()
	loss := opt.Loss
	rho := make([]float64, m)
	u := make([]float64, m)
	tripletWeights(loss, rho, u)
	res := &Result{Pi: math.NaN(), DualityGap: math.NaN(), SDPGap: math.NaN(), Stop: StopIterations}
	var (
		vs    [][]float64
		ws    []float64
		tm    terms // the terms' margins (corrective mode)
		rough bool  // the weights come from a bounded corrective re-solve
	)
	if opt.Mode == Corrective {
		tm = newTerms(pr)
	}
	mixed, err := pr.useMixed(opt.Precision, opt.Iters)
	if err != nil {
		return nil, err
	}
	// finish stores the terms of the last completed iteration in res.
	finish := func() {
		// Drop terms whose weight ended at zero (corrective mode): X is unchanged.
		var keepV [][]float64
		var keepW []float64
		for j, w := range ws {
			if w > 0 {
				keepV = append(keepV, vs[j])
				keepW = append(keepW, w)
			}
		}
		res.V, res.W = packTerms(d, keepV), keepW
		res.Objective = objective(loss, rho, nu, ws)
		res.Phases = pr.phases
	}
	cancelled := func(err error) (*Result, error) {
		res.Stop = StopCancelled
		finish()
		return res, ctxError(ctx, err)
	}
	for it := 1; it <= iters; it++ {
		if ctx.Err() != nil {
			return cancelled(nil)
		}
		var h []float64 // the margins of v, when pricing computed them
		var lambda float64
		var v []float64
		if mixed && it > 1 && !pr.double {
			lambda, v, h, err = priceSingle(ctx, pr, u, stopAt)
			if err == nil && h != nil {
				res.SingleIterations++
			}
		} else {
			lambda, v, err = pr.top(ctx, u)
		}
		if err != nil {
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		res.Lambda = append(res.Lambda, lambda)
		if it == 1 {
			stopAt = nu + tol*math.Abs(lambda)
		}
		if lambda < stopAt && rough {
			// The stopping test holds at weights of a bounded re-solve:
			// finish it to full accuracy, then price its duals again.
			var unbounded bool
			rough = false
			ws, unbounded, err = correct(ctx, b, loss, tm, ws, nu, rho, correctiveFinalIter)
			if err != nil {
				marginsOf0(tm, rho, ws)
				if ctx.Err() != nil {
					return cancelled(err)
				}
				return nil, err
			}
			res.Curve[len(res.Curve)-1] = withTrace(tripletWeights(loss, rho, u), nu, ws)
			if unbounded {
				res.Stop = StopUnbounded
				break
			}
			if lambda, v, err = pr.top(ctx, u); err != nil {
				if ctx.Err() != nil {
					return cancelled(err)
				}
				return nil, err
			}
			h = nil // v changed
			res.Lambda[len(res.Lambda)-1] = lambda
		}
		if lambda < stopAt {
			res.Stop = StopConverged
			break
		}
		if h == nil {
			h = make([]float64, m)
			if err := pr.margins(h, v); err != nil {
				return nil, err
			}
		}
		vs = appendTerm(vs, v)
		var weight float64
		unbounded := false
		tw := time.Now()
		switch opt.Mode {
		case Stagewise:
			weight, unbounded = lineSearch(loss, rho, h, nu)
			ws = append(ws, weight)
			for r := range rho {
				rho[r] += weight * h[r]
			}
		case Corrective:
			// Warm start: the previous weights and the new term at its
			// exact line-search weight, which is the stage-wise step, so
			// the bounded re-solve can only improve on it.
			weight, unbounded = lineSearch(loss, rho, h, nu)
			tm.add(v, h)
			ws = append(ws, weight)
			if unbounded {
				for r := range rho {
					rho[r] += weight * h[r]
				}
				break
			}
			maxIter := correctiveMaxIter
			if it == iters {
				maxIter = correctiveFinalIter
			}
			var nw []float64
			nw, unbounded, err = correct(ctx, b, loss, tm, ws, nu, rho, maxIter)
			rough = maxIter < correctiveFinalIter
			if err != nil {
				// Back to the last completed iteration: drop the new term
				// and restore the margins of the weights before.
				j := len(ws) - 1
				vs, ws = vs[:j], ws[:j]
				tm.truncate(j)
				marginsOf0(tm, rho, ws)
				if ctx.Err() != nil {
					return cancelled(err)
				}
				return nil, err
			}
			ws = nw
			weight = ws[len(ws)-1]
		}
		pr.phases.Weights += since(tw)
		obj := withTrace(tripletWeights(loss, rho, u), nu, ws) // one log-sum-exp pass for both
		res.Curve = append(res.Curve, obj)
		res.Iterations = it
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "boostmetric", Iteration: it, Objective: obj, Gap: math.NaN(),
				Message: fmt.Sprintf("iter %d  λmax %.6g  w %.6g  objective %.10g", it, lambda, weight, obj)})
		}
		if unbounded {
			res.Stop = StopUnbounded
			break
		}
		if opt.Monitor != nil && opt.Monitor.Due(it) {
			finish()
			if opt.Monitor.Check(it, res) {
				res.Stop = StopMonitor
				break
			}
		}
		if it == iters && opt.Extend != nil {
			// The limit is reached: ask whether to go on.
			finish()
			if more := opt.Extend(it, res); more > 0 {
				iters += more
			}
		}
	}
	finish()
	if opt.Monitor != nil {
		return opt.Monitor.Keep(res), nil
	}
	return res, nil
}

// priceSingle prices in single precision (see Precision) and returns the
// direction with its double-precision margins h and the larger of the
// single-precision λmax and the direction's exact Rayleigh quotient (a lower
// bound of λmax), or, when the direction
// cannot be kept (its exact Rayleigh quotient Σ_r u_r h_r is below stopAt
// or below mixedEdgeRatio of the single-precision λmax), the double-precision
// pricing with h nil, after which the pricer stays in double.
func priceSingle(ctx context.Context, pr *pricer, u []float64, stopAt float64) (lambda float64, v, h []float64, err error) {
	if lambda, v, err = pr.topSingle(ctx, u); err != nil {
		return 0, nil, nil, err
	}
	h = make([]float64, len(u))
	if err := pr.margins(h, v); err != nil {
		return 0, nil, nil, err
	}
	if e := edge(u, h); e >= stopAt && e >= mixedEdgeRatio*lambda {
		// λmax ≥ e ≥ stopAt: reporting at least e keeps the caller's
		// stopping test (λ < stopAt) from firing on a single-precision λ
		// that rounding put below the threshold.
		return max(lambda, e), v, h, nil
	}
	pr.double = true
	lambda, v, err = pr.top(ctx, u)
	return lambda, v, nil, err
}

// ctxError returns the error of a run stopped because ctx is done: err when it
// already wraps ctx.Err() (it says where the run stopped), else ctx.Err()
// wrapped.
func ctxError(ctx context.Context, err error) error {
	if err != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("boost: %w", ctx.Err())
}

// marginsOf0 restores the margins of the weights w of the terms tm in rho
// (zero without terms), ignoring the evaluator's error: it only fails on
// dimensions that the earlier successful evaluations have checked.
func marginsOf0(tm terms, rho, w []float64) {
	if len(w) == 0 {
		for r := range rho {
			rho[r] = 0
		}
		return
	}
	_, _ = tm.margins(rho, w)
}

// marginsOf sets rho to the margins Σ_j w_j H_j of the weights w on the
// terms with margins hs and returns tr X = Σ_j w_j.
func marginsOf(rho []float64, hs [][]float64, w []float64) float64 {
	for r := range rho {
		rho[r] = 0
	}
	var tr float64
	for j, hj := range hs {
		tr += w[j]
		if w[j] == 0 {
			continue
		}
		for r, v := range hj {
			rho[r] += w[j] * v
		}
	}
	return tr
}

// tripletWeights sets u from the margins by the KKT conditions: u = softmax(−ρ)
// for the exponential loss, u_r = σ(−ρ_r) = 1/(1 + exp(ρ_r)) for the logistic
// loss. It returns the objective's loss term at rho (see lossTerm), which
// the exponential loss computes on the way.
func tripletWeights(loss Loss, rho, u []float64) float64 {
	switch loss {
	case Exp:
		lse := logSumExpNeg(rho)
		forChunks(len(rho), func(_, lo, hi int) {
			f64.ExpNeg(u[lo:hi], rho[lo:hi], lse)
		})
		return lse
	case Logistic:
		forChunks(len(rho), func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				u[r] = sigmoidNeg(rho[r])
			}
		})
	}
	return lossTerm(loss, rho)
}

// objective returns the primal objective at margins rho and weights w.
func objective(loss Loss, rho []float64, nu float64, w []float64) float64 {
	return withTrace(lossTerm(loss, rho), nu, w)
}

// lossTerm is the objective's loss at margins rho: log Σ exp(−ρ_r) for the
// exponential loss, Σ log(1 + exp(−ρ_r)) for the logistic loss.
func lossTerm(loss Loss, rho []float64) float64 {
	if loss == Exp {
		return logSumExpNeg(rho)
	}
	return softplusSum(rho)
}

// withTrace adds the trace penalty ν·1ᵀw to a loss term.
func withTrace(lossTerm, nu float64, w []float64) float64 {
	var tr float64
	for _, v := range w {
		tr += v
	}
	return lossTerm + nu*tr
}

// logSumExpNeg returns log Σ_r exp(−ρ_r) without overflow.
func logSumExpNeg(rho []float64) float64 {
	return expSums(rho, nil, 0).LogSum()
}

// sigmoidNeg returns σ(−t) = 1/(1 + exp(t)).
func sigmoidNeg(t float64) float64 {
	if t >= 0 {
		e := math.Exp(-t)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(t))
}

// softplus returns log(1 + exp(t)).
func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

// lineSearch returns the weight w > 0 of a new term with margins h that
// minimises the loss of ρ + w h plus ν w, i.e. the root of f = g' with
//
//	exp:      f(w) = ν − Σ_r h_r e_r / Σ_r e_r,  e_r = u_r exp(−w h_r)  (u ∝ exp(−ρ))
//	logistic: f(w) = ν − Σ_r h_r σ(−(ρ_r + w h_r))
//
// f is increasing (g is convex) and f(0) < 0 because Σ_r u_r h_r = λmax ≥ ν.
// Each evaluation of f, f′ and f″ is one pass over the triplets (one
// exponential per triplet), so the root is found by Halley's method
// (linesearch.Root, shared with the distributed learner). On letters it
// takes 7 passes per iteration where bracketing and Newton took 9.5. With the
// exponential loss and min_r h_r ≥ ν there is no root (the objective
// decreases without bound): it returns the capped weight
// unboundedMargin / min_r h_r and true.
func lineSearch(loss Loss, rho, h []float64, nu float64) (float64, bool) {
	// Plain comparisons (the margins are finite): math.Min and math.Max,
	// which handle NaN and signed zeros, made this serial loop a tenth of
	// an iteration on letters.
	hmin, hmax := math.Inf(1), 0.0
	for _, v := range h {
		if v < hmin {
			hmin = v
		}
		if a := math.Abs(v); a > hmax {
			hmax = a
		}
	}
	if hmax == 0 {
		return 0, false
	}
	if loss == Exp && hmin >= nu {
		return linesearch.UnboundedMargin / hmin, true
	}
	// deriv returns f, f′ and f″ at w.
	deriv := func(w float64) (f, f1, f2 float64) {
		if loss == Exp {
			return expSums(rho, h, w).Deriv(nu)
		}
		g1, g2, g3 := logisticSums(rho, h, w)
		return nu - g1, g2, g3
	}
	w, unbounded, _ := linesearch.Root(func(w float64) (float64, float64, float64, error) {
		f, f1, f2 := deriv(w)
		return f, f1, f2, nil
	}, hmax, linesearch.MaxSteps)
	return w, unbounded
}

// correct minimises the loss of ρ = Σ_j w_j H_j plus ν 1ᵀw over w ≥ 0 with
// the backend's L-BFGS-B from w0 (at most maxIter iterations), writes the
// margins of the solution into rho and returns the weights. The margins and
// the gradient come from ts (see newTerms: O(N·D² + pairs·D) per evaluation
// for small D, whatever the number of terms). A solve that stops short of
// its tolerances is accepted when it did not increase the objective (the
// line search of L-BFGS-B only accepts decreasing steps).
//
// With the exponential loss the problem has no minimiser once some w has
// min_r ρ_r > ν·1ᵀw (every triplet satisfied with a margin above ν per unit
// trace): log Σ exp(−tρ) + tν1ᵀw → −∞ as t → ∞. The solve stops at the first
// such iterate and correct reports unbounded = true.
//
// When ctx is cancelled it returns an error wrapping ctx.Err(); rho then
// holds the margins of some trial point and w0 is unchanged.
func correct(ctx context.Context, b engine.Backend, loss Loss, ts terms, w0 []float64, nu float64, rho []float64, maxIter int) (w []float64, unbounded bool, err error) {
	m := len(rho)
	p := make([]float64, m)
	var (
		evalErr error
		lastW   []float64 // the last point evaluated
		lastSep bool      // and whether its margins separate (exponential loss)
	)
	f := func(w, grad []float64) float64 {
		tr, err := ts.margins(rho, w)
		if err != nil {
			evalErr = err
			return math.NaN()
		}
		lastW = append(lastW[:0], w...)
		lastSep = loss == Exp && separates(rho, tr, nu)
		var val float64
		switch loss {
		case Exp:
			lse := logSumExpNeg(rho)
			forChunks(len(rho), func(_, lo, hi int) {
				f64.ExpNeg(p[lo:hi], rho[lo:hi], lse)
			})
			val = lse
		default:
			for r, q := range rho {
				p[r] = sigmoidNeg(q)
				val += softplus(-q)
			}
		}
		if err := ts.dots(grad, p); err != nil {
			evalErr = err
			return math.NaN()
		}
		for j := range grad {
			grad[j] = nu - grad[j]
		}
		return val + nu*tr
	}
	lower := make([]float64, len(w0))
	grad := make([]float64, len(w0))
	f0 := f(w0, grad)
	if evalErr != nil {
		return nil, false, evalErr
	}
	settings := corrective.Settings(maxIter)
	if loss == Exp {
		g := make([]float64, m)
		settings.Callback = func(it engine.MinimizeIteration) bool {
			if slices.Equal(it.X, lastW) { // the usual case: no second evaluation
				unbounded = lastSep
				return !unbounded
			}
			tr, err := ts.margins(g, it.X)
			if err != nil {
				evalErr = err
				return false
			}
			unbounded = separates(g, tr, nu)
			return !unbounded
		}
	}
	res, err := b.Minimize(ctx, engine.Problem{Func: f, Lower: lower}, w0, settings)
	if evalErr != nil {
		return nil, false, evalErr
	}
	if err != nil && ctx.Err() != nil {
		return nil, false, fmt.Errorf("boost: totally corrective step: %w", ctx.Err())
	}
	if w, err = corrective.Accept(res, err, f0); err != nil {
		return nil, false, fmt.Errorf("boost: totally corrective step: %w", err)
	}
	f(w, grad) // leaves the margins of w in rho
	if evalErr != nil {
		return nil, false, evalErr
	}
	return w, unbounded, nil
}

// separates reports whether min_r g_r > ν·tr > 0 for the margins g of
// weights with trace tr.
func separates(g []float64, tr, nu float64) bool {
	if !(tr > 0) {
		return false
	}
	for _, v := range g {
		if !(v > nu*tr) {
			return false
		}
	}
	return true
}
