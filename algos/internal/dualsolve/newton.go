package dualsolve

import (
	"context"
	"fmt"
	"math"
)

// The projected semismooth Newton-CG both dual solvers polish with
// (FrobMetric's metricEval.polish, the general SDP's sdpEval.newton): each
// supplies its objective, the generalised Hessian at the cached point and a
// merit; the loop, the ε-active set, the CG on the free variables and the
// projected backtracking are here once.

// NewtonProblem is a bound-constrained dual seen by projectedNewton.
type NewtonProblem struct {
	// Eval evaluates the objective and gradient at u and caches the point.
	Eval func(u, grad []float64) (float64, error)
	// Hessian prepares the generalised Hessian at the cached point: apply
	// sets out = J v, diag writes its diagonal (or leaves it, to run CG
	// unpreconditioned), ridge keeps CG defined on J's null space.
	Hessian func() (apply func(out, v []float64) error, diag func([]float64), ridge float64, err error)
	// Merit measures the cached point (lower is better): the loop stops
	// when it is at most target, and a step that lowers it is accepted even
	// without sufficient decrease of the objective.
	Merit  func() float64
	Target float64
	// ActiveEps returns the ε of the ε-active set of variable i given the
	// largest projected-gradient step pgmax.
	ActiveEps func(i int, pgmax float64) float64
	// MinStep is the smallest backtracking step tried.
	MinStep float64
	// Report, if set, is called after every Newton step.
	Report func(step, evals int, merit float64)
}

// ProjectedNewton runs projected semismooth Newton-CG steps from u
// (modified in place) within [lower, upper] until the merit reaches the
// target, a step fails, or cfg.steps are spent. On return the problem's
// cache holds u. It returns the number of evaluations and Hessian products.
func ProjectedNewton(ctx context.Context, p NewtonProblem, u, lower, upper []float64, cfg PolishConfig) (int, error) {
	m := len(u)
	grad := make([]float64, m)
	f, err := p.Eval(u, grad)
	if err != nil {
		return 0, err
	}
	evals := 1
	cur := p.Merit()
	free := make([]bool, m)
	d := make([]float64, m)
	trial, tgrad := make([]float64, m), make([]float64, m)
	r, pv, hp := make([]float64, m), make([]float64, m), make([]float64, m)
	z, dF, diag := make([]float64, m), make([]float64, m), make([]float64, m)
	for i := range diag {
		diag[i] = 1
	}
	for step := 0; step < cfg.Steps && cur > p.Target; step++ {
		if err := ctx.Err(); err != nil {
			return evals, fmt.Errorf("dualsolve: %w", err)
		}
		hess, jacobi, ridge, err := p.Hessian()
		if err != nil {
			return evals, err
		}
		// A Hessian product costs about an evaluation, and CG takes up to
		// CGIters of them: each checks ctx, so a cancellation is seen
		// within one product, not at the next step.
		apply := func(out, v []float64) error {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("dualsolve: %w", err)
			}
			return hess(out, v)
		}
		// ε-active set (Bertsekas): variables near a bound whose gradient
		// pushes them onto it are fixed there.
		var pgmax float64
		for i, g := range grad {
			pgmax = max(pgmax, math.Abs(u[i]-min(max(u[i]-g, lower[i]), upper[i])))
		}
		for i, g := range grad {
			eps := p.ActiveEps(i, pgmax)
			atLow := !math.IsInf(lower[i], -1) && u[i] <= lower[i]+eps && g > 0
			atHigh := !math.IsInf(upper[i], 1) && u[i] >= upper[i]-eps && g < 0
			free[i] = !atLow && !atHigh
			d[i] = 0
			switch {
			case atLow:
				d[i] = lower[i] - u[i]
			case atHigh:
				d[i] = upper[i] - u[i]
			}
		}
		// Truncated preconditioned CG on J_FF d_F = −g_F − J_FB d_B (the
		// moves of the fixed variables onto their bounds enter the right
		// side).
		if err := apply(hp, d); err != nil {
			return evals, err
		}
		evals++
		jacobi(diag)
		np, err := FreeCG(apply, grad, hp, free, diag, ridge, cfg.CGIters, dF, r, z, pv, hp)
		evals += np
		if err != nil {
			return evals, err
		}
		for i := range d {
			if free[i] {
				d[i] = dF[i]
			}
		}
		// Projected backtracking: accept on sufficient decrease of f
		// (Armijo along the projected arc) or on a lower merit (below the
		// rounding level of f only the merit can tell progress).
		accepted := false
		for t := 1.0; t > p.MinStep; t *= 0.5 {
			if err := ctx.Err(); err != nil {
				return evals, fmt.Errorf("dualsolve: %w", err)
			}
			var slope float64
			for i := range trial {
				trial[i] = min(max(u[i]+t*d[i], lower[i]), upper[i])
				slope += grad[i] * (trial[i] - u[i])
			}
			ft, err := p.Eval(trial, tgrad)
			if err != nil {
				return evals, err
			}
			evals++
			mt := p.Merit()
			if (slope < 0 && ft <= f+1e-4*slope) || mt < cur {
				f, cur = ft, mt
				copy(u, trial)
				copy(grad, tgrad)
				accepted = true
				break
			}
		}
		if p.Report != nil {
			p.Report(step, evals, cur)
		}
		if !accepted {
			break
		}
	}
	// Leave the cache at u.
	if _, err := p.Eval(u, grad); err != nil {
		return evals, err
	}
	return evals + 1, nil
}

// PolishConfig bounds the Newton polish.
type PolishConfig struct {
	GapTol  float64
	Steps   int // Newton steps
	CGIters int // CG iterations per step
}
