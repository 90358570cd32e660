package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/locality"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// DefaultGapTol is the default relative duality gap at which the solvers
// stop: one order of magnitude inside the 1e-6 certificate asked of them.
const DefaultGapTol = 1e-7

// DefaultMaxIter bounds the L-BFGS-B iterations of a solve when
// MetricOptions.MaxIter is zero.
const DefaultMaxIter = 20000

// DefaultNewtonSteps is the Newton polish's step budget when
// MetricOptions.NewtonSteps is zero (see learnWhole).
const DefaultNewtonSteps = 30

// SelectGapTol is the relative duality gap to which a model selection
// solves each candidate value of C while it compares several on
// validation rows (at most SelectMaxIter L-BFGS-B iterations each); the
// chosen value is then solved to DefaultGapTol from its candidate's dual
// point, and only that solve's certificate is the model's. A candidate's
// metric is within √(2·gap) of its optimum in Frobenius norm, which moves
// few k-NN decisions; solving the candidates no further saves most of the
// iterations of the values not chosen, and of the largest values of C,
// whose duals are the worst conditioned.
const SelectGapTol = 1e-3

// SelectMaxIter bounds the L-BFGS-B iterations of one candidate solved
// to SelectGapTol.
const SelectMaxIter = 2000

// MetricOptions configures Learn.
type MetricOptions struct {
	// C weighs the hinge losses: the primal objective is
	// ½‖X‖²_F + (C/m) Σ_r ξ_r and the dual box is 0 ≤ u ≤ C/m. It must be > 0.
	C float64
	// GapTol is the relative duality gap (primal − dual)/max(1, |primal|) at
	// which the solve stops. Zero selects DefaultGapTol.
	GapTol float64
	// MaxIter bounds the L-BFGS-B iterations over all rounds, and the
	// Newton polish's steps. Zero selects DefaultMaxIter; negative is an error.
	MaxIter int
	// Memory is the number of L-BFGS-B correction pairs. Zero selects 10.
	Memory int
	// Restarts bounds the fresh L-BFGS-B rounds started when one stops
	// before the gap is reached. Zero selects 2; negative means none.
	Restarts int
	// NewtonSteps bounds the semismooth Newton steps that polish the dual
	// when L-BFGS-B stops short of GapTol (see polish). Zero selects 30;
	// negative disables the polish.
	NewtonSteps int
	// HandoverGap, if above GapTol, is the relative gap at which L-BFGS-B
	// hands over to the Newton polish. Zero means L-BFGS-B runs until GapTol
	// or until it stalls, and the polish only finishes a stalled solve.
	HandoverGap float64
	// NoRefine disables the face-Newton steps (see refine.go) that late in
	// a solve propose a primal and a dual point from the free multipliers'
	// optimality conditions on the current face of the PSD cone.
	NoRefine bool
	// U0, if non-nil, is the starting dual point (length m), clipped into the
	// box; warm starts across a list of C values use it. Nil starts at u = 0.
	U0 []float64
	// WorkingSet selects the working-set strategy (see Learn). The zero
	// value, WorkingSetAuto, uses it from WorkingSetMinTriplets triplets on.
	WorkingSet WorkingSetMode
	// Backend runs the numerical kernels; nil means engine.Default().
	Backend engine.Backend
	// fixed, if non-nil, holds multipliers at the upper bound outside the
	// triplets (a working-set round, see learnWorkingSet).
	fixed *fixedPart
	// steps, if non-nil, lends its buffers to the solve's face-Newton
	// steps (a working-set round's, kept across rounds).
	steps *stepBuffers
	// phase marks a working-set phase: a run of at most wsWholeIters
	// iterations over all the triplets whose point seeds the next working
	// set. It is evaluated in single precision like a loose solve (see
	// single.go) whatever the target, and certified, if it reaches the
	// target, in double.
	phase bool
	// userC, if non-zero, is the C of the whole problem, which a
	// working-set round's progress lines show instead of its own C.
	userC float64
	// Progress, if non-nil, receives progress events: one every 100 dual
	// evaluations (with the evaluation count, dual value and relative gap),
	// or sooner once 10 s have passed without one, and one per L-BFGS-B
	// round.
	Progress progress.Func
}

// MetricResult is a FrobMetric solution with its duality certificate.
type MetricResult struct {
	// M is the learned metric t·X with t ≥ 0 minimising the primal along
	// the ray through X, PSD by construction. X is X(u*) = −(Â)_− =
	// (Σ_r u*_r A_r)_+, or, when Refined, the primal point of a face-Newton
	// step (see refine.go) whose value is lower; either way Primal is the
	// primal value at M and certifies it. t tends to 1 at the optimum.
	M *mat.SymDense
	// Refined reports that M comes from a face-Newton step rather than
	// from U.
	Refined bool
	// L is a D×r factor of M = L Lᵀ (columns √λ·v over the positive eigenpairs):
	// the learned embedding of a point a is Lᵀa.
	L *mat.Dense
	// Scale is the t of M = t·X; 1 at an exact optimum.
	Scale float64
	// DataScale is the data's RMS deviation s (data.RMSDeviation). Learn
	// solves the problem on x/s and returns M and L in the units of x
	// (M = M̃/s², L = L̃/s for the solution M̃ on x/s); C, U, the objective
	// values and the margins are those of x/s, so they do not depend on the
	// data's units.
	DataScale float64
	// U is the dual solution u*, in [0, C/m].
	U []float64
	// Primal is ½‖X*‖²_F + (C/m) Σ max(0, 1 − ⟨A_r, X*⟩); Dual is
	// Σ u*_r − ½‖X*‖²_F. Gap = Primal − Dual ≥ 0 bounds the suboptimality of
	// both; RelGap = Gap / max(1, |Primal|).
	Primal, Dual, Gap, RelGap float64
	// Certified reports RelGap ≤ GapTol.
	Certified bool
	// Violations counts the triplets with margin ⟨A_r, X*⟩ < 1.
	Violations int
	// Iterations and Evaluations count L-BFGS-B iterations and dual
	// evaluations, over the whole set and over working sets alike.
	Iterations, Evaluations int
	// Refinements counts the face-Newton steps and RefineSeconds their time.
	Refinements   int
	RefineSeconds float64
	// Rounds counts the working-set rounds (0 when the whole set was solved
	// at once); FullEvaluations counts the evaluations over all m triplets.
	Rounds, FullEvaluations int
	// Reason says why the solve stopped.
	Reason string
	// Curve is the best dual objective after every evaluation.
	Curve []float64
	// Phases is the time of each phase of the evaluations.
	Phases Phases
}

// ErrInput is wrapped by errors about invalid arguments.
var ErrInput = errs.New("frob: invalid input", errs.ErrInvalid)

// Learn solves FrobMetric,
//
//	min_{X ⪰ 0, ξ ≥ 0}  ½‖X‖²_F + (C/m) Σ_r ξ_r   s.t.  ⟨A_r, X⟩ ≥ 1 − ξ_r,
//
// through its Lagrange dual max_{0 ≤ u ≤ C/m} Σ_r u_r − ½‖(Â)_−‖²_F with
// Â = −Σ_r u_r A_r = −Xᵀ L_W X, minimised (negated) by the engine's
// L-BFGS-B. One evaluation costs a weighted Gram Xᵀ L_W X, the positive
// eigenpairs of that D×D matrix (a value-range eigensolver: only the negative
// part of Â is computed) and the squared distances of the distinct triplet
// pairs in the embedding Z = x·V√λ, from which the gradient
// 1 − ⟨A_r, X⟩ of every triplet follows. The primal solution is recovered as
// X* = −(Â*)_− and certified by the duality gap.
//
// x is the n×D training data, ts the triplets on its rows. Learn uses the
// pair graph of ts, so it must not run concurrently with another user of ts.
//
// The problem is scale-free by construction: Learn solves it for the
// normalised data x/s, s = data.RMSDeviation(x) (MetricResult.DataScale),
// and returns the metric in the units of x. Multiplying the data by c
// multiplies M by 1/c² and changes nothing else; C means the same thing for
// pixel intensities and for standardised features (for standardised data
// s = 1, up to constant features).
//
// L-BFGS-B works on the Jacobi-scaled multipliers v_r = ‖A_r‖_F·u_r, and the
// primal recovered from an inexact u is scaled optimally along its ray (see
// MetricResult.M); both only change how fast the certificate is reached.
//
// On large triplet sets Learn works on a working set (see WorkingSetMode):
// the dual is sparse at the optimum, since only triplets with margin ≤ 1
// keep u_r > 0, so most L-BFGS-B iterations run on the few triplets that
// can still be active and only the certificate needs all of them.
//
// When ctx is cancelled, Learn returns within one dual evaluation the best
// iterate so far (Certified false, its duality gap filled in) together with
// an error wrapping ctx.Err(); the result is nil only if nothing had been
// evaluated yet.
func Learn(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) (*MetricResult, error) {
	if err := checkMetricInput(x, ts, opt); err != nil {
		return nil, err
	}
	if err := checkMetricLimits(x, ts, opt); err != nil {
		return nil, err
	}
	p, err := prepare(x, ts)
	if err != nil {
		return nil, err
	}
	return p.learn(ctx, opt)
}

// Problem is FrobMetric's training data prepared once for several solves
// on it, such as a list of C and then the refinement of the chosen one:
// the data normalised (see Learn) and its points renumbered so that points
// joined by triplets are near in memory. Learn repeats that work (about
// half a second on MNIST's 50,000 points and 450,000 triplets) at every
// call. A Problem holds its own copy of the data; it shares ts when the
// data is too small to renumber, so the rule of Learn applies to it: no
// solve on a Problem runs concurrently with another user of ts, nor with
// another solve on the same Problem.
type Problem struct {
	m     int                     // triplets
	x     *mat.Dense              // normalised and renumbered
	ts    *constraints.TripletSet // renumbered
	scale float64                 // the normalisation, data.RMSDeviation
}

// NewProblem checks x and ts as Learn does and prepares them; each
// Problem.Learn checks its options.
func NewProblem(x *mat.Dense, ts *constraints.TripletSet) (*Problem, error) {
	if err := checkMetricData(x, ts); err != nil {
		return nil, err
	}
	if err := checkMetricLimits(x, ts, MetricOptions{}); err != nil {
		return nil, err
	}
	return prepare(x, ts)
}

// prepare normalises x and renumbers its points for locality.
func prepare(x *mat.Dense, ts *constraints.TripletSet) (*Problem, error) {
	xs, s, err := data.Normalize(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if xs, ts, err = locality.Apply(xs, ts); err != nil {
		return nil, fmt.Errorf("frob: %w", err)
	}
	return &Problem{m: ts.Len(), x: xs, ts: ts, scale: s}, nil
}

// Learn runs frob.Learn with opt on the prepared problem: the same result,
// without preparing the data again. Its U0 and result multipliers are
// indexed like the triplets NewProblem was given.
func (p *Problem) Learn(ctx context.Context, opt MetricOptions) (*MetricResult, error) {
	if err := checkMetricOptions(p.m, opt); err != nil {
		return nil, err
	}
	return p.learn(ctx, opt)
}

// learn solves the prepared problem and returns the metric in the units
// of the caller's data.
func (p *Problem) learn(ctx context.Context, opt MetricOptions) (*MetricResult, error) {
	res, err := learnNormalized(ctx, p.x, p.ts, opt)
	if res != nil {
		res.DataScale = p.scale
		if res.M != nil {
			res.M.ScaleSym(1/(p.scale*p.scale), res.M)
		}
		if res.L != nil {
			res.L.Scale(1/p.scale, res.L)
		}
	}
	return res, err
}

// learnNormalized is Learn on the normalised data x/s.
func learnNormalized(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) (*MetricResult, error) {
	switch opt.WorkingSet {
	case WorkingSetOn:
		return learnWorkingSet(ctx, localProblem{x, ts}, ts.Len(), opt)
	case WorkingSetAuto:
		if ts.Len() >= WorkingSetMinTriplets {
			return learnWorkingSet(ctx, localProblem{x, ts}, ts.Len(), opt)
		}
	}
	res, err := learnWhole(ctx, x, ts, opt)
	if res != nil {
		res.FullEvaluations = res.Evaluations
	}
	return res, err
}

// checkC refuses a C that is not a finite positive number, and one at or
// below the gap tolerance: the objective of the zero metric is about C
// (the average hinge loss at M = 0 is 1), so the zero metric would meet the
// tolerance before a single step and "converge" having learned nothing.
func checkC(opt MetricOptions) error {
	if !(opt.C > 0) || math.IsInf(opt.C, 0) {
		return errs.Option(fmt.Errorf("%w: C = %v, want a finite C > 0", ErrInput, opt.C))
	}
	if tol := cmp.Or(opt.GapTol, DefaultGapTol); opt.C <= tol {
		return errs.Option(fmt.Errorf("%w: C = %g is not above the duality-gap tolerance %g: the zero metric's objective is about C, so it would meet the tolerance at once and nothing would be learned; use C ≥ %g", ErrInput, opt.C, tol, 100*tol))
	}
	return nil
}

// checkMetricInput validates the arguments of Learn: the data
// (checkMetricData), then the options.
func checkMetricInput(x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) error {
	if err := checkMetricData(x, ts); err != nil {
		return err
	}
	return checkMetricOptions(ts.Len(), opt)
}

// checkMetricData validates the data and triplets of Learn and NewProblem.
func checkMetricData(x *mat.Dense, ts *constraints.TripletSet) error {
	if x == nil || ts == nil {
		return fmt.Errorf("%w: nil data or triplets", ErrInput)
	}
	n, _ := x.Dims()
	if n != ts.N {
		return fmt.Errorf("%w: data has %d rows, triplets index %d points", ErrInput, n, ts.N)
	}
	if ts.Len() == 0 {
		return fmt.Errorf("%w: no triplets", ErrInput)
	}
	return checkFiniteDense("data", x)
}

// checkMetricOptions checks the options of a solve over m triplets.
func checkMetricOptions(m int, opt MetricOptions) error {
	if err := checkC(opt); err != nil {
		return err
	}
	if opt.MaxIter < 0 {
		return fmt.Errorf("%w: MaxIter = %d, want ≥ 0 (0 selects the default)", ErrInput, opt.MaxIter)
	}
	if opt.U0 != nil && len(opt.U0) != m {
		return fmt.Errorf("%w: U0 has %d entries for %d triplets", ErrInput, len(opt.U0), m)
	}
	switch opt.WorkingSet {
	case WorkingSetAuto, WorkingSetOn, WorkingSetOff:
	default:
		return fmt.Errorf("%w: unknown working-set mode %d", ErrInput, opt.WorkingSet)
	}
	return nil
}

// newMetricEval returns an evaluator of the FrobMetric dual with box C/m = cm.
func newMetricEval(b engine.Backend, x *mat.Dense, ts *constraints.TripletSet, cm float64) *metricEval {
	n, d := x.Dims()
	return &metricEval{
		b: b, x: x, ts: ts, cm: cm, n: n, d: d,
		g:      mat.NewSymDense(d, nil),
		pd:     make([]float64, len(ts.Pairs)),
		margin: make([]float64, ts.Len()),
		steps:  new(stepBuffers),
	}
}

// stepBuffers holds the f×f Hessian of a face-Newton step, which its
// factor overwrites (up to refineMaxFree², 288 MB), allocated at the first
// step and reused by the later ones: the first writes to hundreds of MB of
// fresh memory are page faults that cost as much as the factorisation.
type stepBuffers struct {
	h []float64
}

// learnWhole is Learn over all the triplets at once (inputs already checked).
func learnWhole(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) (*MetricResult, error) {
	m := ts.Len()
	b := engine.Or(opt.Backend)
	cm := opt.C / float64(m)
	ev := newMetricEval(b, x, ts, cm)
	ev.fixed = opt.fixed
	if opt.steps != nil {
		ev.steps = opt.steps
	}
	return solveWhole(ctx, b, ev, tripletNorms(x, ts), opt)
}

// solveWhole runs the L-BFGS-B cycles and the Newton polish of learnWhole
// with the evaluator ev over its m = len(sc) triplets, whose Frobenius norms
// are sc.
func solveWhole(ctx context.Context, b engine.Backend, ev *metricEval, sc []float64, opt MetricOptions) (*MetricResult, error) {
	m := len(sc)
	cm := ev.cm
	lower := make([]float64, m)
	upper := make([]float64, m)
	u0 := make([]float64, m)
	for r := range upper {
		upper[r] = cm
		if opt.U0 != nil {
			u0[r] = min(max(opt.U0[r], 0), cm)
		}
	}
	target := cmp.Or(opt.GapTol, DefaultGapTol)
	steps := cmp.Or(opt.NewtonSteps, DefaultNewtonSteps)
	if opt.MaxIter > 0 && steps > opt.MaxIter {
		steps = opt.MaxIter // MaxIter bounds every phase, the polish included
	}
	handover := math.Max(target, opt.HandoverGap)
	cfg := dualsolve.Config{
		MaxIter:  cmp.Or(opt.MaxIter, DefaultMaxIter),
		Memory:   cmp.Or(opt.Memory, 10),
		Restarts: cmp.Or(opt.Restarts, 2),
		Progress: opt.Progress,
		Label:    fmt.Sprintf("frobmetric C=%g", cmp.Or(opt.userC, opt.C)),
	}
	if cfg.Restarts < 0 {
		cfg.Restarts = 0
	}
	// L-BFGS-B runs on v_r = s_r·u_r with s_r = ‖A_r‖_F (Jacobi scaling):
	// the dual Hessian's diagonal is about ‖A_r‖²_F, which varies by orders
	// of magnitude across triplets, and quasi-Newton methods are not
	// invariant to diagonal scaling.
	ubuf := make([]float64, m)
	toV := func(u []float64) []float64 {
		v := make([]float64, m)
		for r := range v {
			v[r] = u[r] * sc[r]
		}
		return v
	}
	toU := func(v []float64) []float64 {
		u := make([]float64, m)
		for r := range u {
			u[r] = min(max(v[r]/sc[r], 0), cm) // no rounding past the box
		}
		return u
	}
	for r := range upper {
		upper[r] *= sc[r]
	}
	evalV := func(v, grad []float64) (float64, error) {
		// The builtins, not math.Min and math.Max (calls that are not
		// inlined): this clamp runs over every triplet at every evaluation.
		for r := range v {
			ubuf[r] = min(max(v[r]/sc[r], 0), cm)
		}
		f, err := ev.eval(ubuf, grad)
		for r := range grad {
			grad[r] /= sc[r]
		}
		return f, err
	}
	prob := dualsolve.Problem{Lower: lower, Upper: upper, Eval: evalV, Certificate: ev.certificate}
	if opt.phase {
		ev.useSingle(math.Inf(1))
	} else {
		ev.useSingle(target)
	}
	// No face-Newton steps on single-precision evaluations: a step's primal
	// candidate would be valued in single precision (a loose solve's target
	// is above refineMaxTarget, so only a phase could take one).
	if !opt.NoRefine && ev.ext == nil && ev.s32 == nil {
		ev.refine = newRefiner(target)
		ev.refine.ctx = ctx
		ev.refine.say = progress.Printf(opt.Progress, "frobmetric")
		prob.Jump = func() []float64 {
			if !ev.altOK {
				return nil
			}
			return toV(ev.altU)
		}
	}
	var (
		dr        dualsolve.Result
		curve     []float64
		evals     int
		iters     int
		certified bool
	)
	// L-BFGS-B takes the dual to a moderate gap, a semismooth Newton polish
	// takes it the rest of the way; if the polish stalls, L-BFGS-B resumes
	// from the polished point with a tighter hand-over, up to three cycles.
	for cycle := 0; cycle < 3 && !certified && iters < cfg.MaxIter; cycle++ {
		cfg.GapTol = handover
		if ev.refine != nil {
			ev.refine.target = handover
		}
		cfg.MaxIter = cmp.Or(opt.MaxIter, DefaultMaxIter) - iters
		var err error
		dr, err = dualsolve.Solve(ctx, b, prob, toV(u0), cfg)
		if dr.U != nil {
			dr.U = toU(dr.U)
			if ev.altOK {
				// The certificate's dual point is a face-Newton step's.
				dr.U = append(dr.U[:0], ev.altU...)
			}
			if ev.s32 != nil {
				// Certified in double only (single.go).
				var derr error
				if dr.Primal, dr.Dual, derr = ev.toDouble(dr.U); derr != nil {
					return nil, derr
				}
				dr.Evaluations++
			}
		}
		if err != nil {
			if ctx.Err() != nil && dr.U != nil {
				dr.Iterations += iters
				dr.Evaluations += evals
				return ev.result(dr, append(curve, dr.Curve...)), err
			}
			return nil, err
		}
		iters += dr.Iterations
		evals += dr.Evaluations
		curve = append(curve, dr.Curve...)
		u0 = dr.U
		if dualsolve.RelGap(dr.Primal, dr.Dual) <= target {
			certified = true
			break
		}
		if steps > 0 {
			ne, err := ev.polish(ctx, dr.U, dualsolve.PolishConfig{GapTol: target, Steps: steps, CGIters: 200}, progress.Printf(opt.Progress, "frobmetric"))
			if err != nil {
				if ctx.Err() != nil {
					// The cache may hold a trial point: refill it with u.
					if _, eerr := ev.eval(dr.U, make([]float64, m)); eerr == nil {
						dr.Primal, dr.Dual = ev.certificate()
						dr.Evaluations, dr.Iterations, dr.Reason = evals+ne+1, iters, "cancelled"
						return ev.result(dr, curve), err
					}
				}
				return nil, err
			}
			evals += ne
			dr.Primal, dr.Dual = ev.certificate()
			curve = append(curve, dr.Dual)
			if dualsolve.RelGap(dr.Primal, dr.Dual) <= target {
				certified = true
				dr.Reason = "duality gap (Newton polish)"
				break
			}
		}
		handover = math.Max(target, handover*1e-2)
	}
	dr.Certified, dr.Iterations, dr.Evaluations = certified, iters, evals
	if certified && ev.refined {
		dr.Reason += " (refined primal)"
	}
	return ev.result(dr, curve), nil
}

// result assembles the MetricResult of dr from the evaluator's cache, which
// must hold dr.u with its certificate computed.
func (ev *metricEval) result(dr dualsolve.Result, curve []float64) *MetricResult {
	res := &MetricResult{
		U:           dr.U,
		Scale:       ev.scale,
		Primal:      dr.Primal,
		Dual:        dr.Dual,
		Gap:         dr.Primal - dr.Dual,
		RelGap:      dualsolve.RelGap(dr.Primal, dr.Dual),
		Certified:   dr.Certified,
		Iterations:  dr.Iterations,
		Evaluations: dr.Evaluations,
		Reason:      dr.Reason,
		Curve:       curve,
		Refined:     ev.refined,
		Phases:      ev.phases,
	}
	if ev.refine != nil {
		res.Refinements, res.RefineSeconds = ev.refine.Attempts, ev.refine.Seconds
	}
	for _, v := range ev.margin {
		if ev.scale*v < 1 {
			res.Violations++
		}
	}
	res.M, res.L = ev.metric()
	return res
}

// tripletNorms returns ‖A_r‖_F for every triplet, A_r = p pᵀ − q qᵀ with
// p = a_i − a_k, q = a_i − a_j: ‖A_r‖²_F = ‖p‖⁴ + ‖q‖⁴ − 2(pᵀq)². A zero
// norm (a degenerate triplet) is replaced by 1.
func tripletNorms(x *mat.Dense, ts *constraints.TripletSet) []float64 {
	raw := x.RawMatrix()
	d := raw.Cols
	out := make([]float64, ts.Len())
	// Independent per triplet: both cores, the same numbers.
	sparse.ParallelRows(len(out), len(out)*d*6, func(lo, hi int) {
		for r, t := range ts.Triplets[lo:hi] {
			ai := raw.Data[t.I*raw.Stride : t.I*raw.Stride+d]
			aj := raw.Data[t.J*raw.Stride : t.J*raw.Stride+d]
			ak := raw.Data[t.K*raw.Stride : t.K*raw.Stride+d]
			var pp, qq, pq float64
			for c := range ai {
				p, q := ai[c]-ak[c], ai[c]-aj[c]
				pp += p * p
				qq += q * q
				pq += p * q
			}
			v := math.Sqrt(math.Max(0, pp*pp+qq*qq-2*pq*pq))
			if !(v > 0) {
				v = 1
			}
			out[lo+r] = v
		}
	})
	return out
}

// metricEval evaluates the negated FrobMetric dual and caches the pieces of
// the primal solution of the last point.
type metricEval struct {
	b      engine.Backend
	x      *mat.Dense
	ts     *constraints.TripletSet
	cm     float64
	n, d   int
	g      *mat.SymDense
	pd     []float64
	margin []float64
	lam    []float64  // positive eigenvalues of G = Σ u_r A_r
	vec    *mat.Dense // their eigenvectors (d×r)
	zbuf   []float64
	bpBuf  []float64 // scratch for primalScale
	scale  float64   // t of the recovered primal t·X, set by certificate
	sumU   float64
	half   float64 // ½‖X‖²_F = ½ Σ λ² of the primal point (lam, vec)
	// dualHalf is ½‖X(u)‖²_F of the evaluated point, which the dual value
	// uses; half differs from it once a refinement is installed.
	dualHalf float64
	// u is the evaluated point, nEval counts evaluations; refine, if
	// non-nil, schedules primal refinements (refine.go), refined reports
	// that the cached primal point is a refined one, and refineErr holds a
	// refinement's error for the next evaluation to return.
	u         []float64
	nEval     int
	refine    *refiner
	refined   bool
	refineErr error
	// altU, if altOK, is a dual point found by a face-Newton step from the
	// cached one, of value altDual above the cached point's.
	altU    []float64
	altDual float64
	altOK   bool
	// best is the primal point of lowest value seen by this evaluator
	// other than X(u) (see tryPrimal), nil if none.
	best *primalPoint
	// stepInfo describes the last face-Newton step for progress lines and
	// stepSize is its number of candidates.
	stepInfo string
	stepSize int
	// steps holds a step's Hessian across steps, and across the rounds of
	// a working-set solve (see stepBuffers).
	steps *stepBuffers
	// fixed, if non-nil, adds the multipliers held at the upper bound
	// outside ts; fixedMargin is Σ_{r∈F} ⟨A_r, X⟩ at the cached point.
	fixed       *fixedPart
	fixedMargin float64
	bvBuf       []float64 // scratch for B·V
	// graph carries this evaluator's pair weights on the shared pattern of
	// ts (the triplet set is never modified, so it may be shared).
	graph *sparse.PairGraph
	// ext, if non-nil, computes the eigenpairs, margins and Hessian
	// products instead of x and ts (see LearnOracle); x and ts are nil.
	ext Oracle
	// extErr holds an error of ext.JacobiDiag, returned by the next
	// Hessian product.
	extErr error
	// phases accumulates the time of this evaluator's phases.
	phases Phases
	// s32, if non-nil, evaluates the Gram and the embedding in single
	// precision (single.go; a loose solve only, certified in double).
	s32 *single32
}

// fixedPart is a set F of triplets whose multipliers a working-set round
// holds at the upper bound C/m: B = (C/m)·Σ_{r∈F} A_r = (C/m)·Xᵀ L_F X and
// Count = |F|. With it the restricted dual is
//
//	max_{0 ≤ u ≤ C/m} Σ_r u_r + (C/m)|F| − ½‖(Σ_r u_r A_r + B)_+‖²_F,
//
// the dual of min_{X⪰0} ½‖X‖²_F + (C/m)[Σ_r (1 − ⟨A_r,X⟩)_+ + Σ_{F} (1 − ⟨A_r,X⟩)],
// and its points are feasible points of the full dual with the same value.
// The fixed triplets enter the gap only through ⟨B, X⟩, so a round never
// touches their pairs.
type fixedPart struct {
	B     *mat.SymDense
	Count int
}

// eval returns −dual(u) and its gradient ⟨A_r, X(u)⟩ − 1.
func (e *metricEval) eval(u, grad []float64) (float64, error) {
	if err := e.refineErr; err != nil {
		e.refineErr = nil
		return 0, err
	}
	e.nEval++
	e.u, e.refined, e.altOK = u, false, false
	if e.ext != nil {
		return e.evalExt(u, grad)
	}
	graph, err := e.ts.GraphInto(e.graph, u)
	if err != nil {
		return 0, fmt.Errorf("frob: %w", err)
	}
	e.graph = graph
	t := time.Now()
	if act := graph.ActiveRows(); e.s32 != nil && len(act) > e.n/2 {
		e.s32.WeightedGram(e.g, graph)
		e.phases.Grams32++
	} else if err := e.b.WeightedGram(e.g, e.x, graph); err != nil {
		return 0, fmt.Errorf("frob: weighted Gram: %w", err)
	}
	if e.fixed != nil {
		e.g.AddSym(e.g, e.fixed.B)
	}
	e.phases.Gram += since(t)
	e.phases.Grams++
	e.phases.GramRows += len(graph.ActiveRows())
	// Â = −G, so (Â)_− = −(G)_+: only the positive eigenpairs of G are needed.
	t = time.Now()
	eig, err := e.b.SymEig(e.g, engine.PositivePart(0), true)
	if err != nil {
		return 0, fmt.Errorf("frob: eigendecomposition: %w", err)
	}
	e.phases.Eig += since(t)
	e.phases.Eigs++
	e.phases.EigPairs += len(eig.Values)
	e.lam, e.vec = eig.Values, eig.Vectors
	if e.half, e.fixedMargin, err = e.primalAt(e.lam, e.vec, e.margin); err != nil {
		return 0, err
	}
	e.dualHalf = e.half
	e.sumU = 0
	for i, v := range u {
		e.sumU += v
		grad[i] = e.margin[i] - 1
	}
	if e.fixed == nil {
		return e.half - e.sumU, nil
	}
	return e.half - e.sumU - e.cm*float64(e.fixed.Count), nil
}

// pairDists writes the squared distances of the pairs of e.ts in the
// embedding X·lf (lf the d×r factor, row-major) into e.pd.
func (e *metricEval) pairDists(lf []float64, r int) error {
	if cap(e.zbuf) < e.n*r {
		e.zbuf = make([]float64, e.n*r)
	}
	z := e.zbuf[:e.n*r]
	xr := e.x.RawMatrix()
	t := time.Now()
	engine.MulRows(e.b.BLAS(), e.n, r, e.d, xr.Data, xr.Stride, lf, r, z, r)
	e.phases.Embed += since(t)
	t = time.Now()
	if err := e.b.PairSqDists(e.pd, mat.NewDense(e.n, r, z), e.ts.Pairs); err != nil {
		return fmt.Errorf("frob: pair distances: %w", err)
	}
	e.phases.Pairs += since(t)
	return nil
}

// primalAt writes the margins ⟨A_r, X⟩ of the PSD matrix X = V diag(lam) Vᵀ
// (lam ≥ 0, vec the D×r matrix V) into margin and returns ½‖X‖²_F and, with
// a fixed part, Σ_{r∈F} ⟨A_r, X⟩ (else 0).
func (e *metricEval) primalAt(lam []float64, vec *mat.Dense, margin []float64) (half, fixedMargin float64, err error) {
	r := len(lam)
	for _, l := range lam {
		half += 0.5 * l * l
	}
	if r == 0 {
		for i := range e.pd {
			e.pd[i] = 0
		}
	} else {
		// Z = x · V diag(√λ): ⟨X, p pᵀ⟩ = ‖Zᵀ p‖², so per-pair squared
		// distances in Z are the pair quadratic forms of X.
		lf := make([]float64, e.d*r)
		for i := 0; i < e.d; i++ {
			for j := 0; j < r; j++ {
				lf[i*r+j] = vec.At(i, j) * math.Sqrt(lam[j])
			}
		}
		e.phases.Embeds++
		e.phases.EmbedCols += r
		if e.s32 != nil {
			e.pairDists32(lf, r)
		} else if err := e.pairDists(lf, r); err != nil {
			return 0, 0, err
		}
	}
	t := time.Now()
	e.ts.Margins(margin, e.pd)
	e.phases.Pairs += since(t)
	e.phases.PairPasses++
	if e.fixed == nil || r == 0 {
		return half, 0, nil
	}
	// Σ_{r∈F} ⟨A_r, X⟩ = ⟨B, X⟩/(C/m), X = V Λ Vᵀ: one D×D×r product.
	var bx float64
	br, vr := e.fixed.B.RawSymmetric(), vec.RawMatrix()
	if cap(e.bvBuf) < e.d*r {
		e.bvBuf = make([]float64, e.d*r)
	}
	w := e.bvBuf[:e.d*r]
	e.b.BLAS().Dsymm(blas.Left, blas.Upper, e.d, r, 1, br.Data, br.Stride, vr.Data, vr.Stride, 0, w, r)
	for i := 0; i < e.d; i++ {
		for j := 0; j < r; j++ {
			bx += lam[j] * w[i*r+j] * vr.Data[i*vr.Stride+j]
		}
	}
	return half, bx / e.cm, nil
}

// certificate returns the primal value of the recovered solution and the
// dual value of u. The recovered solution is t·X(u), or t·X̂ once a
// refinement (see refine.go) found a primal point X̂ of lower value: the
// scale t ≥ 0 minimises the primal along the ray through the point (see
// primalScale), so the bound stays valid, and it is much tighter while u is
// still inexact (X(u) then violates many margins by a little). At the dual
// optimum t = 1.
func (e *metricEval) certificate() (primal, dual float64) {
	e.scale, primal = e.primalValue(e.margin, e.half, e.fixedMargin, e.scale)
	dual = e.sumU - e.dualHalf
	if e.fixed != nil {
		dual += e.cm * float64(e.fixed.Count)
	}
	if e.refine != nil && !e.refined && !e.altOK {
		e.maybeRefine(primal, dual)
	}
	if e.best != nil && !e.refined && e.best.value < primal {
		e.install()
		primal = e.best.value
	}
	if e.altOK {
		dual = math.Max(dual, e.altDual)
	}
	return primal, dual
}

// primalValue returns the scale t minimising the primal along the ray
// through the PSD point with the given margins, ½‖X‖²_F = half and fixed
// margin sum, and the primal value there (hint: see primalScale).
func (e *metricEval) primalValue(margin []float64, half, fixedMargin, hint float64) (t, primal float64) {
	if e.fixed != nil {
		return primalScaleFixed(margin, half, e.cm, fixedMargin, float64(e.fixed.Count), hint, &e.bpBuf)
	}
	return primalScale(margin, half, e.cm, hint, &e.bpBuf)
}

// metric returns the recovered primal X = t·V Λ Vᵀ and its factor
// L = V √(tΛ) for the cached point (t from the last certificate).
func (e *metricEval) metric() (*mat.SymDense, *mat.Dense) {
	r := len(e.lam)
	m := mat.NewSymDense(e.d, nil)
	if r == 0 {
		return m, mat.NewDense(e.d, 1, nil)
	}
	l := mat.NewDense(e.d, r, nil)
	for i := 0; i < e.d; i++ {
		for j := 0; j < r; j++ {
			l.Set(i, j, e.vec.At(i, j)*math.Sqrt(e.scale*e.lam[j]))
		}
	}
	m.SymOuterK(1, l)
	return m, l
}

func checkFiniteDense(what string, x *mat.Dense) error {
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s[%d,%d] = %v", ErrInput, what, i, j, v)
			}
		}
	}
	return nil
}
