package dualsolve

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

// Problem is a smooth dual minimised by the engine's L-BFGS-B: eval
// computes the objective and gradient at u and caches what certificate needs;
// certificate then returns the primal and dual objective values of the
// cached point (the primal of the solution recovered from it).
type Problem struct {
	Lower, Upper []float64
	Eval         func(u, grad []float64) (float64, error)
	Certificate  func() (primal, dual float64)
	// Merit, if non-nil, scores the cached point (lower is better); when the
	// solve ends uncertified, the evaluated point of lowest Merit is returned
	// instead of L-BFGS-B's last iterate. Nil means no such tracking.
	Merit func() float64
	// SetCutoff, if non-nil, receives the objective at the start of every
	// L-BFGS-B round, and +Inf when the round ends (the evaluator must start
	// at +Inf). Every iterate of the round lies below it, so a trial
	// point above it is rejected by the line search, and eval may then return
	// a lower bound of the objective (with the gradient of the bounding
	// function) instead of its value; bounded reports that it did for the
	// last evaluation, whose cached point then carries no certificate.
	SetCutoff func(f float64)
	Bounded   func() bool
	// Status, if non-nil, describes the cached point beyond its objectives
	// (for example its constraint violation) for the progress lines.
	Status func() string
	// Accuracy, if non-nil, makes the evaluations inexact far from the
	// optimum (see Accuracy).
	Accuracy *Accuracy
	// Jump, if non-nil, is asked after every exact evaluation that did not
	// pass the certificate for a better point the problem found by other
	// means (a Newton step, say); a non-nil answer ends the round, and the
	// next one starts there with a fresh memory without spending a restart.
	// A jump counts as one iteration.
	Jump func() []float64
}

// Accuracy lets a problem evaluate its objective inexactly (for example
// with a loose eigensolver tolerance) while the solve is far from the
// optimum. L-BFGS-B's line search compares objective values, which must
// come from one accuracy: the driver therefore changes the accuracy only
// between rounds. It ends a round early, without spending a restart, when
// Stale reports that the cached point calls for a tighter accuracy, or
// when a point passes the certificate at an accuracy short of the final
// one; and it re-evaluates at the final accuracy every point it certifies
// or returns, so the certificate handed back is always the tight one.
type Accuracy struct {
	// Set fixes the accuracy of the evaluations that follow: the final one
	// when final is set, otherwise the one the cached point's progress
	// calls for (the loosest with nothing cached). It never loosens the
	// accuracy, and it reports whether it changed it.
	Set func(final bool) (changed bool)
	// Stale reports that the cached point calls for a much tighter
	// accuracy than the one in force.
	Stale func() bool
	// Final reports whether the evaluations are at the final accuracy.
	Final func() bool
}

// Config holds the stopping rules common to both solvers.
type Config struct {
	GapTol   float64 // stop when (primal − dual)/max(1,|primal|) ≤ gapTol
	MaxIter  int     // total L-BFGS-B iterations over all rounds
	Memory   int     // L-BFGS-B correction pairs
	Restarts int     // fresh L-BFGS-B rounds after a stall
	Progress progress.Func
	Label    string
}

// Result is the outcome of solveDual.
type Result struct {
	U                       []float64
	Primal, Dual            float64
	Iterations, Evaluations int
	Reason                  string
	Certified               bool      // the relative gap reached gapTol
	Curve                   []float64 // best dual objective after every evaluation
}

// progressEvery and progressHeartbeat pace the driver's progress lines: one
// every progressEvery evaluations, and one at the first evaluation after
// progressHeartbeat without a line (on large MVU problems an evaluation takes
// seconds, so 100 of them would leave a user minutes without news).
const progressEvery = 100

var ProgressHeartbeat = 10 * time.Second // a variable for tests

// describe returns ", " and the status of the cached point, or "".
func (p Problem) describe() string {
	if p.Status == nil {
		return ""
	}
	return ", " + p.Status()
}

// RelGap is the duality gap relative to the primal value.
func RelGap(primal, dual float64) float64 {
	return (primal - dual) / math.Max(1, math.Abs(primal))
}

// Solve minimises p from u0 with L-BFGS-B. Every evaluation also
// computes the duality certificate of its point (cheap: the primal solution
// is a by-product of the gradient); the first point whose relative gap is at
// most gapTol ends the solve. When L-BFGS-B stops short of that (its own
// tolerances, a failed line search), it is restarted with a fresh curvature
// memory, up to cfg.restarts times, from the lowest point the round
// evaluated: after a failed line search that can be a trial point below the
// last accepted iterate (on the degenerate MVU dual the slope along the
// search direction can jump by orders of magnitude within a short step, and
// the Wolfe conditions then hold nowhere the line search looks). A round
// whose first line search fails without accepting a step is followed by a
// projected steepest-descent step with Armijo backtracking, and the next
// round's first step is scaled to that step's length (recover.go); when no
// decrease above the objective's rounding is left along the projected
// gradient, the solve stops and its Reason says so. On return the
// evaluator's cache holds the returned point. When ctx is cancelled the
// result holds the best accepted iterate (u nil if nothing was evaluated)
// and the error wraps ctx.Err().
func Solve(ctx context.Context, b engine.Backend, p Problem, u0 []float64, cfg Config) (Result, error) {
	n := len(u0)
	u := append([]float64(nil), u0...)
	var (
		evalErr   error
		last      = make([]float64, n) // the point the cache holds
		haveLast  bool
		certified []float64 // a point whose gap reached gapTol
		res       Result
		bestDual  = math.Inf(-1)
		evals     int
		bestU     []float64
		bestMerit = math.Inf(1)
		// The exact evaluation of lowest objective in the current round:
		// when a line search fails it can lie below L-BFGS-B's last
		// accepted iterate, and the next round starts there.
		lowU []float64
		lowF = math.Inf(1)
		// stepScale is the length of the first step of every L-BFGS-B
		// round: 1 until a recovery step (recover.go) measured the scale
		// at which the objective decreases.
		stepScale = 1.0
	)
	bestGap := math.Inf(1)
	lastReport := time.Now()
	acc := p.Accuracy
	exact := func() bool { return acc == nil || acc.Final() }
	if acc != nil {
		acc.Set(false)
	}
	for round := 0; round <= cfg.Restarts && res.Iterations < cfg.MaxIter && certified == nil; round++ {
		rctx, cancel := context.WithCancel(ctx)
		roundEvals := 0
		// tighten ends the round to raise the accuracy: finalAcc when a
		// point passed the certificate inexactly (tightU), else to the
		// level the cached point calls for.
		tighten, finalAcc := false, false
		var tightU, jumpU []float64
		fn := func(x, grad []float64) float64 {
			if evalErr != nil || certified != nil || tighten || jumpU != nil {
				for i := range grad {
					grad[i] = 0
				}
				return math.NaN()
			}
			f, err := p.Eval(x, grad)
			if err != nil {
				evalErr = err
				cancel()
				return math.NaN()
			}
			evals++
			if p.Bounded != nil && p.Bounded() {
				// The cache still holds the last exact evaluation.
				res.Curve = append(res.Curve, bestDual)
				return f
			}
			if p.SetCutoff != nil && roundEvals == 0 {
				p.SetCutoff(f)
			}
			roundEvals++
			if f < lowF {
				lowF = f
				lowU = append(lowU[:0], x...)
			}
			copy(last, x)
			haveLast = true
			pr, du := p.Certificate()
			bestDual = math.Max(bestDual, du)
			res.Curve = append(res.Curve, bestDual)
			g := RelGap(pr, du)
			if cfg.Progress != nil && (evals%progressEvery == 0 || time.Since(lastReport) >= ProgressHeartbeat) {
				lastReport = time.Now()
				cfg.Progress(progress.Event{Algorithm: algorithmOf(cfg.Label), Iteration: evals, Objective: du, Gap: g,
					Message: fmt.Sprintf("%s: eval %d %s%s", cfg.Label, evals, certificateText(du, pr, g), p.describe())})
			}
			switch {
			case g <= cfg.GapTol && exact():
				certified = append([]float64(nil), x...)
				cancel()
			case g <= cfg.GapTol:
				tighten, finalAcc = true, true
				tightU = append([]float64(nil), x...)
				cancel()
			case !exact() && acc.Stale():
				tighten = true
				cancel()
			case p.Jump != nil && exact():
				if j := p.Jump(); j != nil {
					jumpU = append([]float64(nil), j...)
					cancel()
				}
			}
			if p.Merit != nil {
				if mt := p.Merit(); mt < bestMerit {
					bestMerit = mt
					bestU = append(bestU[:0], x...)
				}
			}
			return f
		}
		set := engine.MinimizeSettings{
			M: cfg.Memory,
			// The duality gap is the stopping rule; L-BFGS-B's own tests
			// are set tight so they only fire when it cannot progress.
			Factr:   1,
			Pgtol:   -1,
			MaxIter: cfg.MaxIter - res.Iterations,
			MaxEval: 4*(cfg.MaxIter-res.Iterations) + 20,
		}
		r, err := minimizeScaled(rctx, b, engine.Problem{Func: fn, Lower: p.Lower, Upper: p.Upper}, u, set, stepScale)
		cancel()
		if p.SetCutoff != nil {
			// The evaluations below (and after solveDual) must be exact.
			p.SetCutoff(math.Inf(1))
		}
		res.Iterations += r.Iterations
		res.Evaluations = evals
		if evalErr != nil {
			return res, evalErr
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Hand back L-BFGS-B's best accepted point with its certificate.
			if len(r.X) == n {
				copy(u, r.X)
			}
			if haveLast && !slices.Equal(u, last) {
				if _, err := p.Eval(u, make([]float64, n)); err != nil {
					copy(u, last) // the cache still holds last
				}
			}
			if !haveLast {
				u = nil
			}
			res.U = u
			if u != nil {
				res.Primal, res.Dual = p.Certificate()
			}
			res.Reason = "cancelled"
			return res, fmt.Errorf("dualsolve: %w", ctxErr)
		}
		res.Reason = r.Reason.String()
		reeval := false
		switch {
		case certified != nil:
			copy(u, certified)
			res.Reason = "duality gap"
		case jumpU != nil:
			// The next round's first evaluation is at the new point. A
			// jump counts as an iteration, so MaxIter bounds them too.
			copy(u, jumpU)
			lowU, lowF = lowU[:0], math.Inf(1)
			res.Iterations++
			if res.Iterations < cfg.MaxIter {
				round--
				continue
			}
			res.Reason = "jump"
		case tightU != nil:
			copy(u, tightU)
		case len(r.X) == n && lowU != nil && lowF < r.F:
			// A failed line search evaluated a lower point than it accepted.
			copy(u, lowU)
		case len(r.X) == n:
			copy(u, r.X)
		case err != nil:
			return res, fmt.Errorf("dualsolve: L-BFGS-B: %w", err)
		}
		lowU, lowF = lowU[:0], math.Inf(1)
		stepped, stalled := false, false
		if r.Reason == engine.ReasonAbnormal && r.Iterations == 0 && certified == nil && jumpU == nil && !tighten {
			// The line search failed at the round's start, and a fresh
			// round from here would fail the same way (recover.go).
			x, ne, err := recoverStep(ctx, p, u)
			evals += ne
			res.Evaluations = evals
			haveLast = false // the cache holds the recovery's last trial point
			switch {
			case err != nil && ctx.Err() != nil:
				if _, eerr := p.Eval(u, make([]float64, n)); eerr != nil {
					return res, eerr
				}
				res.U = u
				res.Primal, res.Dual = p.Certificate()
				res.Reason = "cancelled"
				return res, fmt.Errorf("dualsolve: %w", ctx.Err())
			case err != nil:
				return res, err
			case x != nil:
				stepScale = powerOfTwo(dist(x, u))
				copy(u, x)
				copy(last, x)
				haveLast = true
				stepped = true
				res.Iterations++
				res.Reason = "projected-gradient step after an abnormal line search"
			default:
				stalled = true
				res.Reason = "abnormal line search; no decrease along the projected gradient above the objective's rounding"
			}
		}
		if tighten {
			// Re-evaluate u at the raised accuracy (the cache holds u, or
			// the last point, at the old one).
			if reeval = acc.Set(finalAcc); !reeval {
				reeval = acc.Set(true) // no change: go straight to the final one
			}
			res.Reason = "accuracy raised"
		}
		// Make the cache hold u and measure its gap.
		if !haveLast || !slices.Equal(u, last) || reeval {
			grad := make([]float64, n)
			if _, err := p.Eval(u, grad); err != nil {
				return res, err
			}
			copy(last, u)
			haveLast = true
			evals++
			res.Evaluations = evals
		}
		pr, du := p.Certificate()
		g := RelGap(pr, du)
		if g <= cfg.GapTol && certified == nil && exact() {
			certified = u
			res.Reason = "duality gap"
		}
		if cfg.Progress != nil {
			cfg.Progress(progress.Event{Algorithm: algorithmOf(cfg.Label), Iteration: res.Evaluations, Objective: du, Gap: g,
				Message: fmt.Sprintf("%s: round %d stopped (%s) after %d iterations, %d evaluations: %s%s", cfg.Label, round, res.Reason, res.Iterations, res.Evaluations, certificateText(du, math.NaN(), g), p.describe())})
		}
		if stalled && exact() {
			break // every fresh start from u fails the same way
		}
		if tighten && res.Iterations < cfg.MaxIter {
			round-- // raising the accuracy does not spend a restart
			continue
		}
		if g >= bestGap*(1-1e-3) && r.Iterations <= 1 && !stepped {
			if !exact() {
				// Stalled at a loose accuracy: go on at the final one.
				acc.Set(true)
				round--
				continue
			}
			break // a fresh start no longer makes progress
		}
		bestGap = math.Min(bestGap, g)
	}
	if certified == nil && res.Iterations >= cfg.MaxIter {
		res.Reason = engine.ReasonMaxIter.String() // even if the last round ended to raise the accuracy
	}
	// The certificate handed back is computed at the final accuracy.
	needFinal := acc != nil && acc.Set(true)
	if certified == nil && bestU != nil && !slices.Equal(u, bestU) {
		// Return the best point seen; re-evaluate it to refill the cache.
		copy(u, bestU)
		if !needFinal {
			p.Eval(u, make([]float64, n)) // it evaluated without error before
			evals++
			res.Evaluations = evals
		}
	}
	if needFinal {
		if _, err := p.Eval(u, make([]float64, n)); err != nil {
			return res, err
		}
		evals++
		res.Evaluations = evals
		if pr, du := p.Certificate(); certified == nil && RelGap(pr, du) <= cfg.GapTol {
			certified = u
			res.Reason = "duality gap"
		}
	}
	res.U = u
	res.Certified = certified != nil
	res.Primal, res.Dual = p.Certificate()
	return res, nil
}

// algorithmOf returns the algorithm named first in a progress label such as
// "frobmetric C=10".
func algorithmOf(label string) string {
	if f := strings.Fields(label); len(f) > 0 {
		return f[0]
	}
	return "dual"
}
