// Package linesearch finds the weight of a new term in BoostMetric's
// stage-wise step: the root of the derivative f = g′ of the convex objective
// g along the term, given f and its first two derivatives at any weight.
// One routine serves the one-process learner (algos/boost) and the
// distributed one (package distributed), whose derivatives are sums over every rank's
// triplets, so that both take the same steps.
package linesearch

import "math"

// MaxSteps bounds the evaluations of Root in BoostMetric's step (the
// one-process and the distributed learner alike).
const MaxSteps = 200

// UnboundedMargin is the capped weight of a term that separates every
// triplet (f has no root): the step takes the weight w with
// min_r w·H_r = UnboundedMargin.
const UnboundedMargin = 30

// Deriv returns f(w), f′(w) and f″(w); an error (a failed reduction across
// processes) ends the search.
type Deriv func(w float64) (f, f1, f2 float64, err error)

// Root returns the root w > 0 of the increasing function f by Halley's
// method, cubically convergent, safeguarded by Newton steps and bisection
// inside the bracket [lo, hi] with f(lo) < 0 ≤ f(hi), and by doubling (from
// at least 1/hmax, hmax the largest |margin| of the term) while no hi is
// known. It stops when |f| ≤ 1e-12·|f(0)|, when the bracket is below
// 1e-15 relative, or after maxSteps evaluations. It returns 0 when
// f(0) ≥ 0 (no descent), and the last point below the root with unbounded
// true when w grows past 1e300 (f has no root in floating point).
func Root(deriv Deriv, hmax float64, maxSteps int) (w float64, unbounded bool, err error) {
	f, f1, f2, err := deriv(0)
	if err != nil {
		return 0, false, err
	}
	if f >= 0 {
		return 0, false, nil
	}
	tol := 1e-12 * math.Abs(f)
	lo, hi := 0.0, math.Inf(1)
	for k := 0; k < maxSteps; k++ {
		if math.Abs(f) <= tol {
			return w, false, nil
		}
		if f < 0 {
			lo = w
		} else {
			hi = w
		}
		if !math.IsInf(hi, 1) && hi-lo <= 1e-15*hi {
			break
		}
		inside := func(v float64) bool { return v > lo && v < hi }
		next := math.NaN()
		if den := 2*f1*f1 - f*f2; f1 > 0 && den > 0 {
			next = w - 2*f*f1/den // Halley
		}
		if !inside(next) && f1 > 0 {
			next = w - f/f1 // Newton
		}
		if !inside(next) {
			if math.IsInf(hi, 1) {
				next = math.Max(2*lo, 1/hmax)
			} else {
				next = 0.5 * (lo + hi)
			}
		}
		if math.IsInf(next, 0) || next > 1e300 {
			return lo, true, nil
		}
		w = next
		if f, f1, f2, err = deriv(w); err != nil {
			return 0, false, err
		}
	}
	return w, false, nil
}
