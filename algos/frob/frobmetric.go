package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/algos/internal/locality"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// DefaultGapTol is the default relative duality gap at which the solvers
// stop: one order of magnitude inside the 1e-6 certificate asked of them.
const DefaultGapTol = 1e-7

// MetricOptions configures Learn.
type MetricOptions struct {
	// C weighs the hinge losses: the primal objective is
	// ½‖X‖²_F + (C/m) Σ_r ξ_r and the dual box is 0 ≤ u ≤ C/m. It must be > 0.
	C float64
	// GapTol is the relative duality gap (primal − dual)/max(1, |primal|) at
	// which the solve stops. Zero selects DefaultGapTol.
	GapTol float64
	// MaxIter bounds the L-BFGS-B iterations over all rounds, and the
	// Newton polish's steps. Zero selects 20000; negative is an error.
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
	// Progress, if non-nil, receives progress events: one every 100 dual
	// evaluations (with the evaluation count, dual value and relative gap),
	// or sooner once 10 s have passed without one, and one per L-BFGS-B
	// round.
	Progress progress.Func
}

// MetricResult is a FrobMetric solution with its duality certificate.
type MetricResult struct {
	// M is the learned metric t·X(u*) with X(u) = −(Â)_− = (Σ_r u_r A_r)_+,
	// PSD by construction; t ≥ 0 minimises the primal along the ray through
	// X(u*) and tends to 1 as u* becomes optimal.
	M *mat.SymDense
	// L is a D×r factor of M = L Lᵀ (columns √λ·v over the positive eigenpairs):
	// the learned embedding of a point a is Lᵀa.
	L *mat.Dense
	// Scale is the t of M = t·X(u*); 1 at an exact dual optimum.
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
	// Rounds counts the working-set rounds (0 when the whole set was solved
	// at once); FullEvaluations counts the evaluations over all m triplets.
	Rounds, FullEvaluations int
	// Reason says why the solve stopped.
	Reason string
	// Curve is the best dual objective after every evaluation.
	Curve []float64
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
	xs, s, err := data.Normalize(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if xs, ts, err = locality.Apply(xs, ts); err != nil {
		return nil, fmt.Errorf("frob: %w", err)
	}
	res, err := learnNormalized(ctx, xs, ts, opt)
	if res != nil {
		res.DataScale = s
		if res.M != nil {
			res.M.ScaleSym(1/(s*s), res.M)
		}
		if res.L != nil {
			res.L.Scale(1/s, res.L)
		}
	}
	return res, err
}

// learnNormalized is Learn on the normalised data x/s.
func learnNormalized(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) (*MetricResult, error) {
	switch opt.WorkingSet {
	case WorkingSetOn:
		return learnWorkingSet(ctx, x, ts, opt)
	case WorkingSetAuto:
		if ts.Len() >= WorkingSetMinTriplets {
			return learnWorkingSet(ctx, x, ts, opt)
		}
	}
	res, err := learnWhole(ctx, x, ts, opt)
	if res != nil {
		res.FullEvaluations = res.Evaluations
	}
	return res, err
}

// checkMetricInput validates the arguments of Learn.
func checkMetricInput(x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) error {
	if x == nil || ts == nil {
		return fmt.Errorf("%w: nil data or triplets", ErrInput)
	}
	n, _ := x.Dims()
	if n != ts.N {
		return fmt.Errorf("%w: data has %d rows, triplets index %d points", ErrInput, n, ts.N)
	}
	m := ts.Len()
	if m == 0 {
		return fmt.Errorf("%w: no triplets", ErrInput)
	}
	if !(opt.C > 0) || math.IsInf(opt.C, 0) {
		return fmt.Errorf("%w: C = %v, want a finite C > 0", ErrInput, opt.C)
	}
	if err := checkFiniteDense("data", x); err != nil {
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
	}
}

// learnWhole is Learn over all the triplets at once (inputs already checked).
func learnWhole(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) (*MetricResult, error) {
	m := ts.Len()
	b := engine.Or(opt.Backend)
	cm := opt.C / float64(m)
	ev := newMetricEval(b, x, ts, cm)
	ev.fixed = opt.fixed
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
	steps := cmp.Or(opt.NewtonSteps, 30)
	if opt.MaxIter > 0 && steps > opt.MaxIter {
		steps = opt.MaxIter // MaxIter bounds every phase, the polish included
	}
	handover := math.Max(target, opt.HandoverGap)
	cfg := dualsolve.Config{
		MaxIter:  cmp.Or(opt.MaxIter, 20000),
		Memory:   cmp.Or(opt.Memory, 10),
		Restarts: cmp.Or(opt.Restarts, 2),
		Progress: opt.Progress,
		Label:    fmt.Sprintf("frobmetric C=%g", opt.C),
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
		cfg.MaxIter = cmp.Or(opt.MaxIter, 20000) - iters
		var err error
		dr, err = dualsolve.Solve(ctx, b, prob, toV(u0), cfg)
		if dr.U != nil {
			dr.U = toU(dr.U)
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
	for r, t := range ts.Triplets {
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
		out[r] = v
	}
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
	scale  float64   // t of the recovered primal t·X(u), set by certificate
	sumU   float64
	half   float64 // ½‖X‖²_F = ½ Σ λ²
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
	if e.ext != nil {
		return e.evalExt(u, grad)
	}
	graph, err := e.ts.GraphInto(e.graph, u)
	if err != nil {
		return 0, fmt.Errorf("frob: %w", err)
	}
	e.graph = graph
	if err := e.b.WeightedGram(e.g, e.x, graph); err != nil {
		return 0, fmt.Errorf("frob: weighted Gram: %w", err)
	}
	if e.fixed != nil {
		e.g.AddSym(e.g, e.fixed.B)
	}
	// Â = −G, so (Â)_− = −(G)_+: only the positive eigenpairs of G are needed.
	eig, err := e.b.SymEig(e.g, engine.PositivePart(0), true)
	if err != nil {
		return 0, fmt.Errorf("frob: eigendecomposition: %w", err)
	}
	e.lam, e.vec = eig.Values, eig.Vectors
	r := len(e.lam)
	e.half = 0
	for _, l := range e.lam {
		e.half += 0.5 * l * l
	}
	if r == 0 {
		for i := range e.pd {
			e.pd[i] = 0
		}
	} else {
		// Z = x · V diag(√λ): ⟨(G)_+, p pᵀ⟩ = ‖Zᵀ p‖², so per-pair squared
		// distances in Z are the pair quadratic forms of X.
		lf := make([]float64, e.d*r)
		for i := 0; i < e.d; i++ {
			for j := 0; j < r; j++ {
				lf[i*r+j] = e.vec.At(i, j) * math.Sqrt(e.lam[j])
			}
		}
		if cap(e.zbuf) < e.n*r {
			e.zbuf = make([]float64, e.n*r)
		}
		z := e.zbuf[:e.n*r]
		xr := e.x.RawMatrix()
		engine.MulRows(e.b.BLAS(), e.n, r, e.d, xr.Data, xr.Stride, lf, r, z, r)
		if err := e.b.PairSqDists(e.pd, mat.NewDense(e.n, r, z), e.ts.Pairs); err != nil {
			return 0, fmt.Errorf("frob: pair distances: %w", err)
		}
	}
	e.ts.Margins(e.margin, e.pd)
	e.sumU = 0
	for i, v := range u {
		e.sumU += v
		grad[i] = e.margin[i] - 1
	}
	if e.fixed == nil {
		return e.half - e.sumU, nil
	}
	// Σ_{r∈F} ⟨A_r, X⟩ = ⟨B, X⟩/(C/m), X = V Λ Vᵀ: one D×D×r product.
	var bx float64
	if r > 0 {
		br, vr := e.fixed.B.RawSymmetric(), e.vec.RawMatrix()
		if cap(e.bvBuf) < e.d*r {
			e.bvBuf = make([]float64, e.d*r)
		}
		w := e.bvBuf[:e.d*r]
		e.b.BLAS().Dsymm(blas.Left, blas.Upper, e.d, r, 1, br.Data, br.Stride, vr.Data, vr.Stride, 0, w, r)
		for i := 0; i < e.d; i++ {
			for j := 0; j < r; j++ {
				bx += e.lam[j] * w[i*r+j] * vr.Data[i*vr.Stride+j]
			}
		}
	}
	e.fixedMargin = bx / e.cm
	return e.half - e.sumU - e.cm*float64(e.fixed.Count), nil
}

// certificate returns the primal value of the recovered solution t·X(u),
// with its optimal slacks, and the dual value of u. The scale t ≥ 0
// minimises the primal along the ray through X(u) (see primalScale): t·X(u)
// is as feasible as X(u), so the bound stays valid, and it is much tighter
// while u is still inexact (X(u) then violates many margins by a little).
// At the dual optimum t = 1.
func (e *metricEval) certificate() (primal, dual float64) {
	if e.fixed != nil {
		n := float64(e.fixed.Count)
		e.scale, primal = primalScaleFixed(e.margin, e.half, e.cm, e.fixedMargin, n, e.scale, &e.bpBuf)
		return primal, e.sumU + e.cm*n - e.half
	}
	e.scale, primal = primalScale(e.margin, e.half, e.cm, e.scale, &e.bpBuf)
	return primal, e.sumU - e.half
}

// primalScale minimises the convex piecewise quadratic
//
//	P(t) = t²·half + cm Σ_r max(0, 1 − t·margin_r),  t ≥ 0,
//
// the FrobMetric primal at t·X for a fixed PSD X with ½‖X‖²_F = half and
// margins ⟨A_r, X⟩. It returns the minimiser and P there. The derivative
// P′(t) = 2t·half − cm Σ_{r: t·margin_r < 1} margin_r is nondecreasing, with
// breakpoints 1/margin_r. A quickselect-style search evaluates P′ at the
// median breakpoint still inside the bracket and discards the half that
// cannot hold the minimiser, so the expected cost is a few passes over the
// margins. buf is scratch space reused across calls.
//
// hint > 0 is a guess of the minimiser, such as the previous call's (0: none).
// It only narrows the first bracket: with S the sum of the margins active at
// the hint (hint·margin_r < 1, the negative ones and the fixed set's
// included), P′ ≥ 2t·half − cm·S above the hint and P′ ≤ 2t·half − cm·S below
// it, so the minimiser lies between the hint and cm·S/(2·half). Between
// consecutive evaluations of a dual solve that bracket holds a few
// breakpoints instead of all of them, and the search skips the partitions.
func primalScale(margin []float64, half, cm, hint float64, buf *[]float64) (t, primal float64) {
	return primalScaleFixed(margin, half, cm, 0, 0, hint, buf)
}

// primalScaleFixed is primalScale with the linear terms of a fixed set F of
// nFixed triplets whose margins sum to lin (see fixedPart):
//
//	P(t) = t²·half + cm Σ_r max(0, 1 − t·margin_r) + cm(nFixed − t·lin).
func primalScaleFixed(margin []float64, half, cm, lin, nFixed, hint float64, buf *[]float64) (t, primal float64) {
	// Every pass runs on fixed chunks in parallel (a certificate is taken
	// at every evaluation of a dual solve, over up to all m triplets).
	value := func(t float64) float64 {
		parts := make([]float64, chunked.Chunks)
		chunked.For(len(margin), scaleChunkMin, func(c, lo, hi int) {
			var hinge float64
			for _, v := range margin[lo:hi] {
				if tv := t * v; tv < 1 {
					hinge += 1 - tv
				}
			}
			parts[c] = hinge
		})
		var hinge float64
		for _, h := range parts {
			hinge += h
		}
		return t*t*half + cm*hinge + cm*(nFixed-t*lin)
	}
	if !(half > 0) {
		return 1, value(1)
	}
	// Margins ≤ 0 stay in the hinge for every t ≥ 0; positive margins leave
	// it at their breakpoints 1/margin_r.
	// neg gathers the slope terms active for every t ≥ 0: the margins ≤ 0
	// and the fixed set's sum.
	if !(hint > 0) || math.IsInf(hint, 0) {
		hint = 0
	}
	sums := make([][3]float64, chunked.Chunks) // per chunk: neg, pos, positive margins active at the hint
	chunked.For(len(margin), scaleChunkMin, func(c, lo, hi int) {
		var neg, pos, atHint float64
		for _, v := range margin[lo:hi] {
			if v <= 0 {
				neg += v
			} else {
				pos += v
				if hint*v < 1 {
					atHint += v
				}
			}
		}
		sums[c] = [3]float64{neg, pos, atHint}
	})
	neg, pos, atHint := lin, 0.0, 0.0
	for _, p := range sums {
		neg, pos, atHint = neg+p[0], pos+p[1], atHint+p[2]
	}
	// P′(hi) ≥ 0: at most every positive margin is active.
	lo, hi := 0.0, cm*(pos+math.Max(neg, 0))/(2*half)
	if !(hi > 0) {
		return 0, value(0)
	}
	if hint > 0 && hint < hi {
		bound := cm * (neg + atHint) / (2 * half)
		if 2*hint*half-cm*(neg+atHint) < 0 {
			lo, hi = hint, math.Min(hi, bound) // P′ right of the hint is negative
		} else {
			lo, hi = math.Max(lo, math.Min(bound, hint)), hint
		}
	}
	// cand holds the margins whose breakpoints lie inside (lo, hi); above is
	// the sum of the margins active on the whole bracket (breakpoints ≥ hi).
	// Breakpoints at or below lo are inactive on the whole bracket. Each
	// chunk gathers its candidates in its own part of buf; they are then
	// packed in chunk order.
	if cap(*buf) < len(margin) {
		*buf = make([]float64, len(margin))
	}
	all := (*buf)[:len(margin)]
	counts := make([]int, chunked.Chunks)
	aboves := make([]float64, chunked.Chunks)
	bounds := chunked.For(len(margin), scaleChunkMin, func(c, l, h int) {
		n, above := 0, 0.0
		part := all[l:h]
		for _, v := range margin[l:h] {
			// Breakpoint 1/v ≥ hi, or in (lo, hi), tested by products:
			// a division per margin was a third of the pass.
			if v > 0 {
				switch {
				case v*hi <= 1:
					above += v
				case v*lo < 1:
					part[n] = v
					n++
				}
			}
		}
		counts[c], aboves[c] = n, above
	})
	cand := all[:0]
	var above float64
	for c := 0; c+1 < len(bounds); c++ {
		cand = append(cand, all[bounds[c]:bounds[c]+counts[c]]...) // never overtakes: bounds[c] ≥ len(cand)
		above += aboves[c]
	}
	for len(cand) > 0 {
		// Partition around a median-of-three pivot p: [less | equal | greater].
		p := median3(cand[0], cand[len(cand)/2], cand[len(cand)-1])
		less, greater := 0, len(cand)
		var sLess, sEqual float64
		for i := 0; i < greater; {
			switch v := cand[i]; {
			case v < p:
				sLess += v
				cand[i], cand[less] = cand[less], v
				less++
				i++
			case v > p:
				greater--
				cand[i], cand[greater] = cand[greater], v
			default:
				sEqual += v
				i++
			}
		}
		// At t = 1/p the active margins are those below p.
		tp := 1 / p
		if 2*tp*half-cm*(neg+above+sLess) < 0 {
			lo = tp // the minimiser lies beyond 1/p: margins ≥ p are inactive there
			cand = cand[:less]
		} else {
			hi = tp // margins ≤ p are active on all of (lo, 1/p)
			above += sLess + sEqual
			cand = cand[greater:]
		}
	}
	// P′ is linear on the bracket, which holds no breakpoint.
	t = math.Min(math.Max(cm*(neg+above)/(2*half), lo), hi)
	return t, value(t)
}

// scaleChunkMin is the number of margins from which primalScale's passes
// are split over the cores.
const scaleChunkMin = 1 << 13

// median3 returns the median of three values.
func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return math.Max(a, b)
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
