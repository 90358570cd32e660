package dualsolve

import (
	"context"
	"math"

	"github.com/psdlearn/psdlearn/engine"
)

// Recovery from a line search that fails at its start.
//
// L-BFGS-B's line search (Moré–Thuente) looks for a step that satisfies the
// strong Wolfe conditions within 20 evaluations. On a kinked dual such as
// MVU's, whose slope along the search direction stays at its initial value
// until an eigenvalue crosses zero and then grows by orders of magnitude
// within a step of 1e-6, no such step exists where the search looks: the
// round ends "abnormal" without accepting a step, from any start near the
// kink. A fresh L-BFGS-B round from the same point fails the same way. The
// driver then takes one projected steepest-descent step whose only
// requirement is sufficient decrease (Armijo), found by safeguarded
// backtracking, and starts the next round from there.

const (
	// armijoC1 is the sufficient-decrease constant of the recovery step.
	armijoC1 = 1e-4
	// recoverEvals bounds the evaluations of one recovery step.
	recoverEvals = 40
)

// descend takes a projected steepest-descent step from u (inside the box
// [lower, upper]) with Armijo backtracking along the projected path
// P(u − t·g). f0 and g are the objective and gradient at u. It returns the
// accepted point (nil if none) and its objective, and the number of
// evaluations made. It gives up when the decrease it could still detect
// falls below the rounding of f0 (the objective is then flat at the
// accuracy of its evaluations), after recoverEvals evaluations, or when ctx
// is cancelled. eval must be the problem's exact evaluation; the problem's
// cache then holds the last point evaluated.
func descend(ctx context.Context, eval func(x, grad []float64) (float64, error), u, g, lower, upper []float64, f0 float64) (x []float64, fx float64, evals int, err error) {
	n := len(u)
	var gn2 float64
	for i := range g {
		// Only the free directions of the projected gradient count.
		if (g[i] > 0 && u[i] <= lower[i]) || (g[i] < 0 && u[i] >= upper[i]) {
			continue
		}
		gn2 += g[i] * g[i]
	}
	if !(gn2 > 0) || math.IsInf(gn2, 0) {
		return nil, f0, 0, nil
	}
	// The first trial moves u by 1, as L-BFGS-B's first step does.
	t := 1 / math.Sqrt(gn2)
	floor := 8 * eps * math.Max(1, math.Abs(f0))
	x = make([]float64, n)
	grad := make([]float64, n)
	for evals < recoverEvals {
		if err := ctx.Err(); err != nil {
			return nil, f0, evals, err
		}
		// slope is gᵀ(x(t) − u) ≤ 0 on the projected path.
		var slope float64
		for i := range u {
			x[i] = math.Min(math.Max(u[i]-t*g[i], lower[i]), upper[i])
			slope += g[i] * (x[i] - u[i])
		}
		if !(-slope > floor) {
			return nil, f0, evals, nil // no decrease left to detect
		}
		f, err := eval(x, grad)
		evals++
		if err != nil {
			return nil, f0, evals, err
		}
		if f <= f0+armijoC1*slope {
			return x, f, evals, nil
		}
		// Minimiser of the quadratic through f0, the slope and f,
		// safeguarded to [t/100, t/2]: the kink can sit many orders of
		// magnitude below the first trial.
		next := t / 2
		if d := f - f0 - slope; d > 0 && !math.IsInf(f, 0) {
			next = -slope * t / (2 * d)
		}
		t = math.Min(math.Max(next, t/100), t/2)
	}
	return nil, f0, evals, nil
}

// eps is the unit roundoff of float64.
const eps = 0x1p-53

// recoverStep evaluates p at u and takes descend's step from there. It
// returns the accepted point (nil if none) and the evaluations made.
func recoverStep(ctx context.Context, p Problem, u []float64) (x []float64, evals int, err error) {
	g := make([]float64, len(u))
	f0, err := p.Eval(u, g)
	if err != nil {
		return nil, 1, err
	}
	x, _, ne, err := descend(ctx, p.Eval, u, g, p.Lower, p.Upper, f0)
	return x, 1 + ne, err
}

// minimizeScaled runs b.Minimize on p in the variables v = u/scale, so that
// L-BFGS-B's first step, which moves its start by 1, moves u by scale. Every
// later step is the same as without scaling: L-BFGS-B's initial Hessian
// θI adapts to the scale after one step, and a uniform scaling does not
// change the Cauchy point of a box. scale is a power of two, so x = scale·v
// is exact and the objective sees the points L-BFGS-B chose. The result is
// in the variables u.
func minimizeScaled(ctx context.Context, b engine.Backend, p engine.Problem, u0 []float64, set engine.MinimizeSettings, scale float64) (engine.MinimizeResult, error) {
	if scale == 1 {
		return b.Minimize(ctx, p, u0, set)
	}
	n := len(u0)
	div := func(a []float64) []float64 {
		out := make([]float64, len(a))
		for i, v := range a {
			out[i] = v / scale
		}
		return out
	}
	x := make([]float64, n)
	f := p.Func
	sp := engine.Problem{Lower: div(p.Lower), Upper: div(p.Upper), Func: func(v, grad []float64) float64 {
		for i, vi := range v {
			x[i] = vi * scale
		}
		fx := f(x, grad)
		for i := range grad {
			grad[i] *= scale
		}
		return fx
	}}
	r, err := b.Minimize(ctx, sp, div(u0), set)
	for i := range r.X {
		r.X[i] *= scale
	}
	r.ProjGradNorm /= scale
	return r, err
}

// powerOfTwo returns the power of two nearest to d > 0 (1 for d ≤ 0 or not finite).
func powerOfTwo(d float64) float64 {
	if !(d > 0) || math.IsInf(d, 0) {
		return 1
	}
	return math.Exp2(math.Round(math.Log2(d)))
}

// dist returns ‖x − y‖₂.
func dist(x, y []float64) float64 {
	var s float64
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s)
}
