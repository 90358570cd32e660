package frob

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/engine"

	"github.com/psdlearn/psdlearn/progress"
)

// dualProblem is a smooth dual minimised by the engine's L-BFGS-B: eval
// computes the objective and gradient at u and caches what certificate needs;
// certificate then returns the primal and dual objective values of the
// cached point (the primal of the solution recovered from it).
type dualProblem struct {
	lower, upper []float64
	eval         func(u, grad []float64) (float64, error)
	certificate  func() (primal, dual float64)
	// merit, if non-nil, scores the cached point (lower is better); when the
	// solve ends uncertified, the evaluated point of lowest merit is returned
	// instead of L-BFGS-B's last iterate. Nil means no such tracking.
	merit func() float64
	// setCutoff, if non-nil, receives the objective at the start of every
	// L-BFGS-B round, and +Inf when the round ends (the evaluator must start
	// at +Inf). Every iterate of the round lies below it, so a trial
	// point above it is rejected by the line search, and eval may then return
	// a lower bound of the objective (with the gradient of the bounding
	// function) instead of its value; bounded reports that it did for the
	// last evaluation, whose cached point then carries no certificate.
	setCutoff func(f float64)
	bounded   func() bool
	// status, if non-nil, describes the cached point beyond its objectives
	// (for example its constraint violation) for the progress lines.
	status func() string
}

// driverConfig holds the stopping rules common to both solvers.
type driverConfig struct {
	gapTol   float64 // stop when (primal − dual)/max(1,|primal|) ≤ gapTol
	maxIter  int     // total L-BFGS-B iterations over all rounds
	memory   int     // L-BFGS-B correction pairs
	restarts int     // fresh L-BFGS-B rounds after a stall
	progress progress.Func
	label    string
}

// driverResult is the outcome of solveDual.
type driverResult struct {
	u                       []float64
	primal, dual            float64
	iterations, evaluations int
	reason                  string
	certified               bool      // the relative gap reached gapTol
	curve                   []float64 // best dual objective after every evaluation
}

// progressEvery and progressHeartbeat pace the driver's progress lines: one
// every progressEvery evaluations, and one at the first evaluation after
// progressHeartbeat without a line (on large MVU problems an evaluation takes
// seconds, so 100 of them would leave a user minutes without news).
const progressEvery = 100

var progressHeartbeat = 10 * time.Second // a variable for tests

// describe returns ", " and the status of the cached point, or "".
func (p dualProblem) describe() string {
	if p.status == nil {
		return ""
	}
	return ", " + p.status()
}

// relGap is the duality gap relative to the primal value.
func relGap(primal, dual float64) float64 {
	return (primal - dual) / math.Max(1, math.Abs(primal))
}

// solveDual minimises p from u0 with L-BFGS-B. Every evaluation also
// computes the duality certificate of its point (cheap: the primal solution
// is a by-product of the gradient); the first point whose relative gap is at
// most gapTol ends the solve. When L-BFGS-B stops short of that (its own
// tolerances, a failed line search), it is restarted with a fresh curvature
// memory, up to cfg.restarts times, from the lowest point the round
// evaluated: after a failed line search that can be a trial point below the
// last accepted iterate (on the degenerate MVU dual the slope along the
// search direction can jump by orders of magnitude within a short step, and
// the Wolfe conditions then hold nowhere the line search looks). On return the
// evaluator's cache holds the returned point. When ctx is cancelled the
// result holds the best accepted iterate (u nil if nothing was evaluated)
// and the error wraps ctx.Err().
func solveDual(ctx context.Context, b engine.Backend, p dualProblem, u0 []float64, cfg driverConfig) (driverResult, error) {
	n := len(u0)
	u := append([]float64(nil), u0...)
	var (
		evalErr   error
		last      = make([]float64, n) // the point the cache holds
		haveLast  bool
		certified []float64 // a point whose gap reached gapTol
		res       driverResult
		bestDual  = math.Inf(-1)
		evals     int
		bestU     []float64
		bestMerit = math.Inf(1)
		// The exact evaluation of lowest objective in the current round:
		// when a line search fails it can lie below L-BFGS-B's last
		// accepted iterate, and the next round starts there.
		lowU []float64
		lowF = math.Inf(1)
	)
	bestGap := math.Inf(1)
	lastReport := time.Now()
	for round := 0; round <= cfg.restarts && res.iterations < cfg.maxIter && certified == nil; round++ {
		rctx, cancel := context.WithCancel(ctx)
		roundEvals := 0
		fn := func(x, grad []float64) float64 {
			if evalErr != nil || certified != nil {
				for i := range grad {
					grad[i] = 0
				}
				return math.NaN()
			}
			f, err := p.eval(x, grad)
			if err != nil {
				evalErr = err
				cancel()
				return math.NaN()
			}
			evals++
			if p.bounded != nil && p.bounded() {
				// The cache still holds the last exact evaluation.
				res.curve = append(res.curve, bestDual)
				return f
			}
			if p.setCutoff != nil && roundEvals == 0 {
				p.setCutoff(f)
			}
			roundEvals++
			if f < lowF {
				lowF = f
				lowU = append(lowU[:0], x...)
			}
			copy(last, x)
			haveLast = true
			pr, du := p.certificate()
			bestDual = math.Max(bestDual, du)
			res.curve = append(res.curve, bestDual)
			g := relGap(pr, du)
			if cfg.progress != nil && (evals%progressEvery == 0 || time.Since(lastReport) >= progressHeartbeat) {
				lastReport = time.Now()
				cfg.progress(progress.Event{Algorithm: algorithmOf(cfg.label), Iteration: evals, Objective: du, Gap: g,
					Message: fmt.Sprintf("%s: eval %d dual %.10g primal %.10g rel.gap %.3g%s", cfg.label, evals, du, pr, g, p.describe())})
			}
			if g <= cfg.gapTol {
				certified = append([]float64(nil), x...)
				cancel()
			}
			if p.merit != nil {
				if mt := p.merit(); mt < bestMerit {
					bestMerit = mt
					bestU = append(bestU[:0], x...)
				}
			}
			return f
		}
		set := engine.MinimizeSettings{
			M: cfg.memory,
			// The duality gap is the stopping rule; L-BFGS-B's own tests
			// are set tight so they only fire when it cannot progress.
			Factr:   1,
			Pgtol:   -1,
			MaxIter: cfg.maxIter - res.iterations,
			MaxEval: 4*(cfg.maxIter-res.iterations) + 20,
		}
		r, err := b.Minimize(rctx, engine.Problem{Func: fn, Lower: p.lower, Upper: p.upper}, u, set)
		cancel()
		if p.setCutoff != nil {
			// The evaluations below (and after solveDual) must be exact.
			p.setCutoff(math.Inf(1))
		}
		res.iterations += r.Iterations
		res.evaluations = evals
		if evalErr != nil {
			return res, evalErr
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Hand back L-BFGS-B's best accepted point with its certificate.
			if len(r.X) == n {
				copy(u, r.X)
			}
			if haveLast && !slices.Equal(u, last) {
				if _, err := p.eval(u, make([]float64, n)); err != nil {
					copy(u, last) // the cache still holds last
				}
			}
			if !haveLast {
				u = nil
			}
			res.u = u
			if u != nil {
				res.primal, res.dual = p.certificate()
			}
			res.reason = "cancelled"
			return res, fmt.Errorf("frob: %w", ctxErr)
		}
		res.reason = r.Reason.String()
		switch {
		case certified != nil:
			copy(u, certified)
			res.reason = "duality gap"
		case len(r.X) == n && lowU != nil && lowF < r.F:
			// A failed line search evaluated a lower point than it accepted.
			copy(u, lowU)
		case len(r.X) == n:
			copy(u, r.X)
		case err != nil:
			return res, fmt.Errorf("frob: L-BFGS-B: %w", err)
		}
		lowU, lowF = lowU[:0], math.Inf(1)
		// Make the cache hold u and measure its gap.
		if !haveLast || !slices.Equal(u, last) {
			grad := make([]float64, n)
			if _, err := p.eval(u, grad); err != nil {
				return res, err
			}
			copy(last, u)
			haveLast = true
			res.evaluations++
		}
		pr, du := p.certificate()
		g := relGap(pr, du)
		if g <= cfg.gapTol && certified == nil {
			certified = u
		}
		if cfg.progress != nil {
			cfg.progress(progress.Event{Algorithm: algorithmOf(cfg.label), Iteration: res.evaluations, Objective: du, Gap: g,
				Message: fmt.Sprintf("%s: round %d stopped (%s) after %d iterations, %d evaluations: dual %.10g rel.gap %.3g%s", cfg.label, round, res.reason, res.iterations, res.evaluations, du, g, p.describe())})
		}
		if g >= bestGap*(1-1e-3) && r.Iterations <= 1 {
			break // a fresh start no longer makes progress
		}
		bestGap = math.Min(bestGap, g)
	}
	if certified == nil && bestU != nil {
		// Return the best point seen; re-evaluate it to refill the cache.
		if !slices.Equal(u, bestU) {
			p.eval(bestU, make([]float64, n)) // it evaluated without error before
			copy(u, bestU)
			res.evaluations++
		}
	}
	res.u = u
	res.certified = certified != nil
	res.primal, res.dual = p.certificate()
	return res, nil
}

// algorithmOf returns the algorithm named first in a progress label such as
// "frobmetric C=10".
func algorithmOf(label string) string {
	if f := strings.Fields(label); len(f) > 0 {
		return f[0]
	}
	return "frob"
}
