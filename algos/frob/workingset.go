package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// WorkingSetMode selects how Learn treats large triplet sets.
type WorkingSetMode int

const (
	// WorkingSetAuto uses a working set from WorkingSetMinTriplets triplets on.
	WorkingSetAuto WorkingSetMode = iota
	// WorkingSetOn always uses a working set.
	WorkingSetOn
	// WorkingSetOff always runs L-BFGS-B over all the triplets.
	WorkingSetOff
)

// ParseWorkingSet maps "" or "auto", "on" and "off" to a WorkingSetMode.
func ParseWorkingSet(s string) (WorkingSetMode, error) {
	switch s {
	case "", "auto":
		return WorkingSetAuto, nil
	case "on":
		return WorkingSetOn, nil
	case "off":
		return WorkingSetOff, nil
	}
	return 0, errs.Option(fmt.Errorf("%w: working set %q, want auto, on or off", ErrInput, s))
}

// String returns "auto", "on" or "off", as ParseWorkingSet reads them.
func (w WorkingSetMode) String() string {
	switch w {
	case WorkingSetOn:
		return "on"
	case WorkingSetOff:
		return "off"
	}
	return "auto"
}

// WorkingSetMinTriplets is the number of triplets from which
// WorkingSetAuto switches the working set on.
const WorkingSetMinTriplets = 20000

// Working-set parameters.
const (
	// wsSlack admits a triplet into the working set while its margin at the
	// current point is below 1 + wsSlack: it may still become active.
	wsSlack = 0.5
	// wsMaxFraction: a working set larger than this fraction of the triplets
	// saves little, so a phase over all of them runs instead.
	wsMaxFraction = 0.5
	// wsWholeIters bounds the L-BFGS-B iterations of such a phase, and
	// wsMaxPhases the phases: when the working set stays that large, the
	// dual is not sparse and the rest of the solve runs over all triplets.
	wsWholeIters = 25
	wsMaxPhases  = 2
	// wsMaxRounds bounds the working-set rounds before the remaining work
	// is handed to a solve over all the triplets.
	wsMaxRounds = 30
)

// learnWorkingSet solves FrobMetric by working sets, the shrinking of SVM
// solvers applied to the dual box 0 ≤ u ≤ C/m. Every round evaluates the
// dual over all m triplets at the current point u (the only step that costs
// O(N·D·r + pairs·r)) and certifies it by the duality gap. If the gap is not
// yet small enough, the working set W grows by the triplets with u_r > 0 or
// margin below 1 + wsSlack, and L-BFGS-B solves the dual restricted to W
// (u_r = 0 off W, same box C/m) from the current point, on the rows of x
// that W touches, to two orders of magnitude below the current full gap but
// not below half the gap tolerance (a quarter once W stops growing).
//
// This is exact, not a heuristic on the answer: a restricted dual point is a
// feasible dual point of the full problem with the same dual value, and the
// full certificate decides when to stop. If the restricted solution leaves
// no triplet outside W with margin below 1, the full gap is at most the
// restricted one. W only grows, so the rounds end; while W would be larger
// than wsMaxFraction·m (far from the optimum, for example at u = 0 where
// every margin is 0), a phase of wsWholeIters L-BFGS-B iterations over all
// triplets runs instead.
func learnWorkingSet(ctx context.Context, p wsProblem, m int, opt MetricOptions) (*MetricResult, error) {
	b := engine.Or(opt.Backend)
	cm := opt.C / float64(m)
	full := p.evaluator(b, cm)
	target := cmp.Or(opt.GapTol, DefaultGapTol)
	if opt.steps == nil {
		opt.steps = new(stepBuffers) // the rounds' steps share their buffers
	}
	maxIter := cmp.Or(opt.MaxIter, DefaultMaxIter)
	label := fmt.Sprintf("frobmetric C=%g", opt.C)
	say := progress.Printf(opt.Progress, "frobmetric")
	if say == nil {
		say = func(string, ...any) {}
	}

	u := make([]float64, m)
	if opt.U0 != nil {
		for r, v := range opt.U0 {
			u[r] = math.Min(math.Max(v, 0), cm)
		}
	}
	var (
		grad          = make([]float64, m)
		inW           = make([]bool, m)
		inF           = make([]bool, m) // held at the upper bound
		lastTol       = math.Inf(1)     // the last round's gap tolerance
		grownLast     = -1              // triplets the last classification added
		sizeW         int
		curve         []float64
		bestDual      = math.Inf(-1)
		iters, evals  int
		fullEvals     int
		refinements   int
		refineSeconds float64
		subPhases     Phases // the sub-solves' phases
		rounds        int
		primal, dual  float64
		certified     bool
		reason        string
		pendingWhole  = opt.U0 == nil // at u = 0 every margin is 0
		phases        int
		wholeFinished bool
		// refinedM is the last round's refined primal, tried on all the
		// triplets at the next full evaluation.
		refinedM *mat.SymDense
	)
	// result assembles the outcome at u, which the full evaluator holds.
	result := func() *MetricResult {
		res := full.result(dualsolve.Result{
			U: u, Primal: primal, Dual: dual, Certified: certified, Reason: reason,
			Iterations: iters, Evaluations: evals,
		}, curve)
		res.Rounds, res.FullEvaluations = rounds, fullEvals
		res.Refinements, res.RefineSeconds = refinements, refineSeconds
		res.Phases.add(subPhases)
		return res
	}
	// evalFull evaluates the dual over all triplets at u.
	evalFull := func() error {
		if _, err := full.eval(u, grad); err != nil {
			return err
		}
		evals++
		fullEvals++
		if refinedM != nil {
			if err := full.tryPrimal(refinedM); err != nil {
				return err
			}
			refinedM = nil
		}
		primal, dual = full.certificate()
		bestDual = math.Max(bestDual, dual)
		curve = append(curve, bestDual)
		return nil
	}
	// absorb adds a sub-solve's counts and curve.
	absorb := func(res *MetricResult) {
		refinements += res.Refinements
		refineSeconds += res.RefineSeconds
		subPhases.add(res.Phases)
		iters += res.Iterations
		evals += res.Evaluations
		fullEvals += res.FullEvaluations
		for _, v := range res.Curve {
			bestDual = math.Max(bestDual, v)
			curve = append(curve, bestDual)
		}
	}
	// cancelled returns the point u with its certificate and ctx's error.
	cancelled := func(err error) (*MetricResult, error) {
		if evals == 0 {
			return nil, err
		}
		if eerr := evalFull(); eerr != nil {
			return nil, err
		}
		reason = "cancelled"
		return result(), err
	}

	for {
		if err := ctx.Err(); err != nil {
			return cancelled(fmt.Errorf("frob: %w", err))
		}
		if !pendingWhole {
			if err := evalFull(); err != nil {
				return nil, err
			}
			g := dualsolve.RelGap(primal, dual)
			if g <= target {
				certified, reason = true, "duality gap (working set)"
				if full.refined {
					reason = "duality gap (working set, refined primal)"
				}
				break
			}
			if iters >= maxIter {
				reason = "iteration limit"
				break
			}
			// Grow W by the triplets that are or may become active, and
			// hold at the upper bound (F) those whose margin stays well
			// below 1: most triplets of real kNN data are violated by
			// every metric, and a round then never touches their pairs.
			grown, held := 0, 0
			atUpper := cm * (1 - 1e-12)
			for r, v := range full.margin {
				mv := full.scale * v
				switch {
				case inF[r] && mv >= 1-wsSlack:
					inF[r], inW[r] = false, true // released
					grown++
				case !inF[r] && u[r] >= atUpper && mv < 1-wsSlack:
					if inW[r] {
						inW[r] = false
						sizeW--
					}
					inF[r] = true
				case !inW[r] && !inF[r] && (u[r] > 0 || mv < 1+wsSlack):
					inW[r] = true
					grown++
				}
				if inF[r] {
					held++
				}
			}
			sizeW += grown
			grownLast = grown
			say("%s: working set round %d: %d of %d triplets free (+%d), %d held at C/m, dual %.10g rel.gap %.3g", label, rounds, sizeW, m, grown, held, dual, g)
			switch {
			case float64(sizeW) > wsMaxFraction*float64(m) && phases < wsMaxPhases:
				pendingWhole = true
				sizeW = 0
				clear(inW)
				clear(inF)
			case float64(sizeW) > wsMaxFraction*float64(m) || (grown == 0 && lastTol <= target/4) || rounds >= wsMaxRounds:
				// The restricted solves no longer close the gap: finish
				// over all the triplets.
				wholeFinished, pendingWhole = true, true
			}
		}
		if pendingWhole {
			pendingWhole = false
			sub := opt
			sub.U0 = u
			sub.MaxIter = maxIter - iters
			if !wholeFinished {
				phases++
				// A phase: no restarts or polish, they are for finishing.
				sub.MaxIter = min(sub.MaxIter, wsWholeIters)
				sub.Restarts, sub.NewtonSteps = -1, -1
				sub.phase = true
			}
			res, err := p.whole(ctx, sub)
			if res != nil {
				copy(u, res.U)
				res.FullEvaluations = res.Evaluations
				absorb(res)
			}
			if err != nil {
				if ctx.Err() != nil && res != nil {
					return cancelled(err)
				}
				return nil, err
			}
			if res.Certified || wholeFinished {
				// The whole-set solve is final: its evaluator's cache
				// holds u, so its result stands, with the totals.
				res.Iterations, res.Evaluations = iters, evals
				res.Rounds, res.FullEvaluations = rounds, fullEvals
				res.Refinements, res.RefineSeconds = refinements, refineSeconds
				res.Phases = subPhases
				res.Phases.add(full.phases)
				res.Curve = curve
				return res, nil
			}
			continue
		}
		rounds++
		// Inexact rounds: solve the restricted dual only two orders of
		// magnitude below the current full gap, and never below half the
		// target: the triplets just added to W carry most of what the
		// restricted gap missed, so the other half of the target is left
		// for the triplets outside it. The full gap of the next round
		// bounds it from above, so an early round solved too loosely
		// costs one more round, while one solved to the final accuracy on
		// a working set that is still growing is wasted. (At target/4,
		// L-BFGS-B's tail made the last round of a candidate the longest:
		// 91 of the 179 iterations of MNIST's C = 100.)
		roundTol := math.Max(target/2, dualsolve.RelGap(primal, dual)/100)
		if grownLast == 0 {
			roundTol = target / 4 // nothing new to learn from: finish W
		}
		lastTol = roundTol
		fixed, err := p.fixedTerm(full, inF, cm)
		if err != nil {
			return nil, err
		}
		res, err := p.restricted(ctx, inW, u, cm, opt, fixed, roundTol, maxIter-iters)
		if res != nil {
			absorb(res)
			if res.Refinements > 0 {
				refinedM = res.M
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
	}
	return result(), nil
}

// wsProblem is the problem a working-set solve works on: one process's
// data and triplets (localProblem), or an oracle's (oracleProblem), whose
// evaluations over all the triplets are distributed while the restricted
// solves run on the working set's rows, gathered.
type wsProblem interface {
	// evaluator returns an evaluator over all the triplets with box cm.
	evaluator(b engine.Backend, cm float64) *metricEval
	// fixedTerm returns B = cm·Σ_{r∈F} A_r over the triplets with inF and
	// |F|; nil when F is empty.
	fixedTerm(full *metricEval, inF []bool, cm float64) (*fixedPart, error)
	// restricted solves the dual restricted to the triplets with inW
	// (solveRestricted).
	restricted(ctx context.Context, inW []bool, u []float64, cm float64, opt MetricOptions, fixed *fixedPart, gapTol float64, maxIter int) (*MetricResult, error)
	// whole solves over all the triplets with opt (its U0 the start).
	whole(ctx context.Context, opt MetricOptions) (*MetricResult, error)
}

// localProblem is a working-set problem on this process's data.
type localProblem struct {
	x  *mat.Dense
	ts *constraints.TripletSet
}

func (p localProblem) evaluator(b engine.Backend, cm float64) *metricEval {
	return newMetricEval(b, p.x, p.ts, cm)
}

func (p localProblem) fixedTerm(full *metricEval, inF []bool, cm float64) (*fixedPart, error) {
	return fixedTerm(full, inF, cm)
}

func (p localProblem) restricted(ctx context.Context, inW []bool, u []float64, cm float64, opt MetricOptions, fixed *fixedPart, gapTol float64, maxIter int) (*MetricResult, error) {
	return solveRestricted(ctx, p.x, p.ts, inW, u, cm, opt, fixed, gapTol, maxIter)
}

func (p localProblem) whole(ctx context.Context, opt MetricOptions) (*MetricResult, error) {
	return learnWhole(ctx, p.x, p.ts, opt)
}

// solveRestricted solves the FrobMetric dual over the triplets r with
// inW[r] (u_r = 0 elsewhere, box C/m = cm) from u, on the rows of x those
// triplets touch, and writes the solution into u. The returned result is
// the restricted one (its counts and curve), or nil if nothing ran.
func solveRestricted(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, inW []bool, u []float64, cm float64, opt MetricOptions, fixed *fixedPart, gapTol float64, maxIter int) (*MetricResult, error) {
	idx := workingIndex(inW)
	xs, sub, err := restrictTo(x, ts, idx)
	if err != nil {
		return nil, err
	}
	res, err := learnWhole(ctx, xs, sub, restrictedOptions(opt, idx, u, cm, fixed, gapTol, maxIter))
	if res != nil {
		writeRestricted(u, inW, idx, res.U, cm, fixed != nil)
	}
	return res, err
}

// workingIndex lists the triplets with inW, ascending.
func workingIndex(inW []bool) []int {
	idx := make([]int, 0, 1024)
	for r, in := range inW {
		if in {
			idx = append(idx, r)
		}
	}
	return idx
}

// restrictTo returns the rows of x that the triplets idx of ts touch, in
// increasing row order, and those triplets renumbered on them (in the
// order of idx).
func restrictTo(x *mat.Dense, ts *constraints.TripletSet, idx []int) (*mat.Dense, *constraints.TripletSet, error) {
	rows, sub, err := ts.Restrict(idx)
	if err != nil {
		return nil, nil, fmt.Errorf("frob: working set: %w", err)
	}
	_, d := x.Dims()
	xs := mat.NewDense(len(rows), d, nil)
	for k, i := range rows {
		xs.SetRow(k, x.RawRowView(i))
	}
	return xs, sub, nil
}

// restrictedOptions returns the options of a restricted solve over the
// triplets idx from u: the same box C/m, the round's gap tolerance and
// iteration budget, the fixed part.
func restrictedOptions(opt MetricOptions, idx []int, u []float64, cm float64, fixed *fixedPart, gapTol float64, maxIter int) MetricOptions {
	u0 := make([]float64, len(idx))
	for k, r := range idx {
		u0[k] = u[r]
	}
	so := opt
	so.userC = cmp.Or(opt.userC, opt.C) // progress lines show the user's C
	so.C = cm * float64(len(idx))       // the same box C/m
	so.U0 = u0
	so.GapTol = gapTol
	so.MaxIter = maxIter
	so.fixed = fixed
	so.Progress = progress.Prefix(opt.Progress, fmt.Sprintf("working set of %d: ", len(idx)))
	return so
}

// writeRestricted writes a restricted solution uw (over the triplets idx)
// into u: uw on W, C/m on the held triplets (with a fixed part) and 0
// elsewhere.
func writeRestricted(u []float64, inW []bool, idx []int, uw []float64, cm float64, hasFixed bool) {
	held := make([]bool, len(u))
	for r := range u {
		held[r] = u[r] >= cm*(1-1e-12) && !inW[r]
	}
	for r := range u {
		u[r] = 0
		if hasFixed && held[r] {
			u[r] = cm
		}
	}
	for k, r := range idx {
		u[r] = min(uw[k], cm)
	}
}

// fixedTerm returns the fixed part of a round: B = cm·Xᵀ L_F X over the
// triplets with inF, and |F|; nil when F is empty.
func fixedTerm(full *metricEval, inF []bool, cm float64) (*fixedPart, error) {
	w, n := heldWeights(inF, cm)
	if n == 0 {
		return nil, nil
	}
	graph, err := full.ts.GraphInto(full.graph, w)
	if err != nil {
		return nil, fmt.Errorf("frob: working set: %w", err)
	}
	full.graph = graph // full.eval resets the weights before its next use
	b := mat.NewSymDense(full.d, nil)
	if err := full.b.WeightedGram(b, full.x, graph); err != nil {
		return nil, fmt.Errorf("frob: working set: weighted Gram: %w", err)
	}
	return &fixedPart{B: b, Count: n}, nil
}

// heldWeights returns the weights of a round's fixed part (cm on the
// triplets with inF, 0 elsewhere) and their number.
func heldWeights(inF []bool, cm float64) ([]float64, int) {
	w := make([]float64, len(inF))
	n := 0
	for r, in := range inF {
		if in {
			w[r] = cm
			n++
		}
	}
	return w, n
}
