package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Face-Newton refinement of a FrobMetric dual point.
//
// The duality gap of a dual point u, with X(u) = (G(u))_+ as the primal, is
//
//	gap = Σ_r u_r (m_r − 1)_+ + (C/m − u_r)(1 − m_r)_+,   m_r = ⟨A_r, X(u)⟩,
//
// about C/m times Σ |1 − m_r| over the free multipliers (0 < u_r < C/m). In
// the tail of an L-BFGS-B solve on real kNN triplets the dual value hardly
// moves while the gap closes only as X(u) does, hundreds of evaluations
// later. Yet the free multipliers are few (about 4,000 of Fashion-MNIST's
// 450,000 triplets), and so is the rank of the face of the PSD cone that
// X(u) lies on.
//
// With G(u) = Q diag(μ) Qᵀ, Q_N the eigenvectors of μ ≤ 0 and P_T the
// projection that removes the Q_N block (P_T(S) = S − Q_N Q_NᵀSQ_N Q_Nᵀ, the
// tangent space of that face), the optimality conditions restricted to the
// face and to the current free set F — the other multipliers held at their
// bounds — are linear:
//
//	X̂ = P_T(G(u')),   ⟨A_r, X̂⟩ = 1 for r ∈ F,   u' = u + Δ on F.
//
// Since P_T(G(u)) = X(u), that is H Δ = g_F with g_r = 1 − m_r and
// H_rs = ⟨A_r, P_T(A_s)⟩, a dense |F|×|F| system: a Newton step of the dual
// on F with the face's Jacobian. Its matrix comes from Gram matrices of the
// free triplets' differences (see faceHessian), O(|F|²·D), and one Cholesky
// factorisation, O(|F|³). The box 0 ≤ u' ≤ C/m is kept by primal–dual
// active sets over F and the multipliers at a bound on the wrong side of
// margin 1 (see candidates and boxNewton). When the free set and the face
// are those of the optimum, one step lands on it up to the curvature of the
// face. The model's Jacobian has 1 where the true one has the divided
// differences λ_a/(λ_a − μ_b) < 1, so its steps fall short by a steady
// factor: the dual is tried along u + clip(ωΔ) for ω = 1, 2, 4, … (one D×D
// eigenvalue solve each) and the best ω kept. A step that raises the dual
// hands its point to L-BFGS-B, which restarts there (dualsolve.Problem's
// Jump), and the next step runs at the next evaluation: Newton iterations
// with L-BFGS-B in between only when a step fails.
//
// Nothing rests on that guess. The step yields two candidates, each
// evaluated exactly: the primal X̂ = (X(u) + P_T(S_Δ))_+ (PSD by
// construction; its primal value with the optimal slacks bounds the optimum
// from above) and the dual u' = clip(u + Δ) (a feasible dual point; its
// value bounds it from below). The certificate takes the lower primal and
// the higher dual of those and of u, X(u); a wrong guess only costs the
// step.

// refiner schedules face-Newton steps during a dual solve to a target of at
// most refineMaxTarget: a step runs once the relative gap is at most
// refineMaxGap and above the target; after a
// step that raised the dual the next runs at the next evaluation, after one
// that did not only when L-BFGS-B has spent twice the step's cost in
// evaluations (at least refineMinSpacing), doubled for every further step
// in a row that raised neither bound.
type refiner struct {
	target float64 // relative gap at which the solve stops
	next   int     // evaluation count before which no step runs
	failed int     // steps in a row that raised neither bound
	// ctx, if non-nil, is the solve's: a step checks it before its
	// factorisation and between its active-set passes.
	ctx context.Context
	say func(string, ...any)
	// Attempts counts the steps, Seconds their time.
	Attempts int
	Seconds  float64
}

// Refinement defaults: steps from a relative gap of 1e-3, on at most
// refineMaxFree candidates (free multipliers first; a Cholesky
// factorisation of 6,000 unknowns takes about 1 s on two cores), with
// refineExtra multipliers at a bound on the right side of margin 1, step
// lengths ω up to refineMaxOmega, and no step whose flop model exceeds
// refineMaxCost evaluations (on letters, D = 16, an evaluation is so cheap
// that a step on thousands of candidates would cost more than the solve).
//
// A solve to a target above refineMaxTarget takes no steps: a step's dense
// factorisation and active-set passes cost tens of evaluations (on MNIST's
// 164 principal components, 5,575 candidates: a Cholesky factorisation of
// 5,575 unknowns and six of the free block, about 90 evaluations), and
// L-BFGS-B closes the last decade above such a target in fewer (MNIST's
// model-selection candidates at C = 10 and 100, solved to 1e-3: 12 and 33
// more iterations without steps, against 7.2 s and 3.9 s of steps).
const (
	refineMaxTarget  = 1e-5
	refineMaxGap     = 1e-3
	refineMinSpacing = 20
	refineMaxFree    = 6000
	refineExtra      = 200
	refineMaxOmega   = 64
	refineMaxCost    = 100
)

// schedule sets when the next step may run after a step at evaluation
// eval that cost about base/2 evaluations. After a step that moved the
// dual the next runs at the next evaluation (a Newton iteration, once the
// solve has jumped to the new point); after one that improved only the
// primal, base evaluations later; after the k-th step in a row that raised
// neither bound, base·2^(k−1) later. (On MNIST-164 with the single-precision
// pair forms summed in another order, doubling from the first such step
// left the chosen C = 10 to 48 L-BFGS-B evaluations, 5.8 s, after one step
// that found nothing next to the step that had just moved the dual; the
// next step, taken 24 evaluations later, certified.)
func (r *refiner) schedule(eval, base int, movedDual, improvedPrimal bool) {
	spacing := base
	switch {
	case movedDual:
		r.failed, spacing = 0, 1
	case improvedPrimal:
		r.failed = 0
	default:
		r.failed = min(r.failed+1, 10)
		spacing <<= r.failed - 1
	}
	r.next = eval + spacing
}

// newRefiner returns the refiner of a solve to the relative gap target.
func newRefiner(target float64) *refiner {
	return &refiner{target: target}
}

// due reports whether a step should run at relative gap g after evals
// evaluations.
func (r *refiner) due(g float64, evals int) bool {
	return r.target <= refineMaxTarget && g > r.target && g <= refineMaxGap && evals >= r.next
}

// maybeRefine runs a face-Newton step at the cached point if the schedule
// calls for one. An error is kept for the next evaluation to return.
func (e *metricEval) maybeRefine(primal, dual float64) {
	r := e.refine
	if r == nil || e.refined || e.ext != nil || e.refineErr != nil || !r.due(dualsolve.RelGap(primal, dual), e.nEval) {
		return
	}
	start := time.Now()
	e.stepInfo, e.stepSize = "skipped: no free multipliers or too many", 0
	bestBefore := e.best
	err := e.refineStep(primal, dual)
	took := time.Since(start)
	r.Attempts++
	r.Seconds += took.Seconds()
	// The spacing comes from a flop model, not from timings, so that the
	// schedule — and with it the result — is the same on every run: a
	// step's Hessian and factorisation against an evaluation's two GEMMs.
	base := refineMinSpacing
	if e.stepSize > 0 {
		base = max(base, int(min(2*e.stepFlops(e.stepSize)/e.evalFlops(), 1e9)))
	}
	if err != nil {
		e.refineErr = err
		return
	}
	r.schedule(e.nEval, base, e.altOK, bestBefore != e.best)
	if r.say != nil {
		p, d := primal, dual
		if e.best != nil {
			p = math.Min(p, e.best.value)
		}
		if e.altOK {
			d = e.altDual
		}
		r.say("frobmetric face-Newton step at evaluation %d (%s): rel.gap %.3g → %.3g (%.2f s)", e.nEval, e.stepInfo, dualsolve.RelGap(primal, dual), dualsolve.RelGap(p, d), took.Seconds())
	}
}

// stepFlops is the flop model of a step on f candidates: the Hessian's
// eight GEMMs and one Cholesky factorisation.
func (e *metricEval) stepFlops(f int) float64 {
	x := float64(f)
	return 8*x*x*float64(e.d) + x*x*x/3
}

// evalFlops is the flop model of an evaluation: its two N×D×D GEMMs.
func (e *metricEval) evalFlops() float64 {
	return 4 * float64(e.n) * float64(e.d) * float64(e.d)
}

// refineStep runs one face-Newton step at the cached point u, whose primal
// and dual values are primal and dual (see above). It offers the refined
// primal X̂ to tryPrimal, and installs the dual point u' if its value is
// above dual by a thousandth of the gap. It does nothing when the free set
// is empty, larger than refineMaxFree, or too costly (refineMaxCost).
func (e *metricEval) refineStep(primal, dual float64) error {
	d, c := e.d, e.cm
	if len(e.lam) == 0 || e.u == nil {
		return nil
	}
	free, nfree := e.candidates()
	f := len(free)
	e.stepSize = f
	if f == 0 {
		if nfree > refineMaxFree {
			e.stepInfo = fmt.Sprintf("skipped: %d free multipliers, more than %d", nfree, refineMaxFree)
		}
		return nil
	}
	if e.stepFlops(f) > refineMaxCost*e.evalFlops() {
		e.stepInfo = fmt.Sprintf("skipped: %d candidates would cost more than %d evaluations", f, refineMaxCost)
		return nil
	}
	// The step's f×f Hessian, factored in place, and up to as much again
	// for its active-set passes (the free block's factor or the columns
	// H⁻¹e_k), on top of the solve's own memory: a step that would not fit
	// the budget is skipped, not the solve refused.
	if limits.Check("", MetricMemory(e.n, e.d, len(e.margin))+limits.Words(2, f, f)) != nil {
		e.stepInfo = fmt.Sprintf("skipped: a step on %d candidates would not fit the memory limit", f)
		return nil
	}
	eig, err := e.b.SymEig(e.g, engine.AllRange(), true)
	if err != nil {
		return fmt.Errorf("frob: refinement: eigendecomposition: %w", err)
	}
	var neg []int
	for a, v := range eig.Values {
		if !(v > 0) {
			neg = append(neg, a)
		}
	}
	nn := len(neg)
	qn := make([]float64, d*max(nn, 1)) // Q_N, the eigenvectors off the face
	for i := 0; i < d; i++ {
		for k, a := range neg {
			qn[i*nn+k] = eig.Vectors.At(i, a)
		}
	}
	// The free triplets' impostor differences p and target differences q
	// (A_r = p pᵀ − q qᵀ), and their coordinates in Q_N.
	impl := e.b.BLAS()
	xr := e.x.RawMatrix()
	p := make([]float64, f*d)
	q := make([]float64, f*d)
	for k, r := range free {
		t := e.ts.Triplets[r]
		xi := xr.Data[t.I*xr.Stride : t.I*xr.Stride+d]
		xj := xr.Data[t.J*xr.Stride : t.J*xr.Stride+d]
		xk := xr.Data[t.K*xr.Stride : t.K*xr.Stride+d]
		for a := 0; a < d; a++ {
			p[k*d+a], q[k*d+a] = xi[a]-xk[a], xi[a]-xj[a]
		}
	}
	pn := make([]float64, f*max(nn, 1))
	qnr := make([]float64, f*max(nn, 1))
	if nn > 0 {
		engine.MulRows(impl, f, nn, d, p, d, qn, nn, pn, nn)
		engine.MulRows(impl, f, nn, d, q, d, qn, nn, qnr, nn)
	}
	if e.steps == nil {
		e.steps = new(stepBuffers)
	}
	e.steps.h = faceHessian(impl, f, d, nn, p, q, pn, qnr, e.steps.h)
	h := e.steps.h
	g := make([]float64, f)
	ulo := make([]float64, f) // bounds of Δ: −u_r ≤ Δ_r ≤ C/m − u_r
	uhi := make([]float64, f)
	for k, r := range free {
		g[k] = 1 - e.margin[r]
		ulo[k], uhi[k] = -e.u[r], c-e.u[r]
	}
	cancelled := func() bool { return e.refine.ctx != nil && e.refine.ctx.Err() != nil }
	if cancelled() {
		return nil // the solve returns the context's error at its next evaluation
	}
	delta, passes, ok := boxNewton(impl, f, h, g, ulo, uhi, cancelled) // factors h in place
	if !ok {
		return nil
	}
	// The face model is only a model: on real data the steps it proposes
	// are short by a steady factor (the mixed block of the true Jacobian
	// holds divided differences λ_a/(λ_a − μ_b) < 1 where the model has 1).
	// The dual along u + clip(ωΔ) costs one D×D eigenvalue solve per ω, so
	// ω doubles from 1 while the dual improves.
	sd := make([]float64, d*d)
	wp := make([]float64, f*d)
	step := make([]float64, f)
	gram := func(out []float64, w []float64) {
		for k := 0; k < f; k++ {
			for a := 0; a < d; a++ {
				wp[k*d+a] = w[k] * p[k*d+a]
			}
		}
		impl.Dgemm(blas.Trans, blas.NoTrans, d, d, f, 1, wp, d, p, d, 0, out, d)
		for k := 0; k < f; k++ {
			for a := 0; a < d; a++ {
				wp[k*d+a] = w[k] * q[k*d+a]
			}
		}
		impl.Dgemm(blas.Trans, blas.NoTrans, d, d, f, -1, wp, d, q, d, 1, out, d)
	}
	gnew := mat.NewSymDense(d, nil)
	// dualAt returns the dual at u + clip(ω·Δ), leaving the clipped step in
	// step and S_Δ = Σ step_r A_r in sd.
	dualAt := func(omega float64) (float64, error) {
		var sum float64
		for k, r := range free {
			step[k] = min(max(e.u[r]+omega*delta[k], 0), c) - e.u[r]
			sum += step[k]
		}
		gram(sd, step)
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				gnew.SetSym(a, b, e.g.At(a, b)+0.5*(sd[a*d+b]+sd[b*d+a]))
			}
		}
		ge, err := e.b.SymEig(gnew, engine.PositivePart(0), false)
		if err != nil {
			return 0, fmt.Errorf("frob: refinement: eigendecomposition: %w", err)
		}
		var half float64
		for _, v := range ge.Values {
			half += 0.5 * v * v
		}
		return dual + sum - (half - e.dualHalf), nil
	}
	bestOmega, bestDual := 0.0, dual
	for omega := 1.0; omega <= refineMaxOmega; omega *= 2 {
		dv, err := dualAt(omega)
		if err != nil {
			return err
		}
		if !(dv > bestDual) {
			break
		}
		bestOmega, bestDual = omega, dv
	}
	e.stepInfo = fmt.Sprintf("%d candidates, %d active-set passes, ω = %g", f, passes, bestOmega)
	if bestOmega == 0 {
		bestOmega = 1 // the primal may still gain
	}
	if _, err := dualAt(bestOmega); err != nil {
		return err
	}
	// A dual point is handed on only if it closes a thousandth of the gap:
	// each hand-over restarts L-BFGS-B.
	if bestDual > dual+1e-3*(primal-dual) {
		alt := append(e.altU[:0], e.u...)
		for k, r := range free {
			alt[r] = min(max(e.u[r]+step[k], 0), c) // in the box despite rounding
		}
		e.altU, e.altDual, e.altOK = alt, bestDual, true
	}
	// X̂ = X(u) + P_T(S_Δ), projected onto the cone by tryPrimal, with
	// P_T(S_Δ) = S_Δ − Q_N (Q_Nᵀ S_Δ Q_N) Q_Nᵀ: for the dual's ω and, if
	// that is not 1, for the model's own step (the primal is not the dual:
	// its best step need not be the dual's).
	if err := e.tryPrimal(e.faceStep(sd, qn, nn)); err != nil {
		return err
	}
	if bestOmega != 1 {
		if _, err := dualAt(1); err != nil {
			return err
		}
		return e.tryPrimal(e.faceStep(sd, qn, nn))
	}
	return nil
}

// faceStep returns X(u) + P_T(S) for the cached point, P_T removing the
// block of the nn columns of qn (d×nn, row-major).
func (e *metricEval) faceStep(sd, qn []float64, nn int) *mat.SymDense {
	d := e.d
	impl := e.b.BLAS()
	tangent := append([]float64(nil), sd...)
	if nn > 0 {
		t1 := make([]float64, d*nn)
		t2 := make([]float64, nn*nn)
		impl.Dgemm(blas.NoTrans, blas.NoTrans, d, nn, d, 1, sd, d, qn, nn, 0, t1, nn)
		impl.Dgemm(blas.Trans, blas.NoTrans, nn, nn, d, 1, qn, nn, t1, nn, 0, t2, nn)
		impl.Dgemm(blas.NoTrans, blas.NoTrans, d, nn, nn, 1, qn, nn, t2, nn, 0, t1, nn)
		impl.Dgemm(blas.NoTrans, blas.Trans, d, d, nn, -1, t1, nn, qn, nn, 1, tangent, d)
	}
	xhat := mat.NewSymDense(d, nil)
	vr := e.vec.RawMatrix()
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			var xab float64
			for k, lv := range e.lam {
				xab += lv * vr.Data[a*vr.Stride+k] * vr.Data[b*vr.Stride+k]
			}
			xhat.SetSym(a, b, xab+0.5*(tangent[a*d+b]+tangent[b*d+a]))
		}
	}
	return xhat
}

// candidates returns the triplets a face-Newton step solves for: the free
// multipliers, the ones at a bound whose margin is on the wrong side of 1
// (u_r = 0 with m_r < 1, u_r = C/m with m_r > 1: they carry the rest of
// the duality gap), the largest violations first, and the refineExtra at a
// bound nearest margin 1 on the right side, within refineMaxFree in all,
// and the number of free multipliers; none when those are more than
// refineMaxFree.
func (e *metricEval) candidates() (out []int, nfree int) {
	c := e.cm
	lo, hi := 1e-9*c, c*(1-1e-9)
	var free, wrong, right []int
	for r, v := range e.u {
		m := e.margin[r]
		switch {
		case v > lo && v < hi:
			free = append(free, r)
		case (v <= lo && m < 1) || (v >= hi && m > 1):
			wrong = append(wrong, r)
		default:
			right = append(right, r)
		}
	}
	byDistance := func(a, b int) int {
		return cmp.Compare(math.Abs(1-e.margin[a]), math.Abs(1-e.margin[b]))
	}
	room := refineMaxFree - len(free)
	if room < 0 {
		return nil, len(free) // the factorisation would cost more than it saves
	}
	out = free
	if len(wrong) > room {
		slices.SortFunc(wrong, func(a, b int) int { return byDistance(b, a) })
		wrong = wrong[:room]
	}
	out = append(out, wrong...)
	if extra := min(refineExtra, len(right), refineMaxFree-len(out)); extra > 0 {
		slices.SortFunc(right, byDistance)
		out = append(out, right[:extra]...)
	}
	slices.Sort(out)
	return out, len(free)
}

// primalPoint is a PSD matrix X = V diag(lam) Vᵀ with its margins and
// primal value (at the scale t along its ray) for one evaluator's problem.
type primalPoint struct {
	lam               []float64
	vec               *mat.Dense
	margin            []float64
	half, fixedMargin float64
	scale, value      float64
}

// tryPrimal keeps the PSD matrix x as the evaluator's best primal point if
// its primal value (scaled along its ray) is below the best one's; the
// certificate then uses it whenever it beats X(u). A face-Newton step
// offers its X̂ so, and a working set's full check a round's solution.
func (e *metricEval) tryPrimal(x *mat.SymDense) error {
	if x == nil {
		return nil
	}
	pp := &primalPoint{margin: make([]float64, len(e.margin))}
	if e.ext != nil {
		// Through an oracle (which has no fixed part): its margins.
		wo, ok := e.ext.(WorkingSetOracle)
		if !ok {
			return nil
		}
		lam, vec, err := wo.PositivePart(x, pp.margin)
		if err != nil {
			return err
		}
		pp.lam, pp.vec = lam, vec
		for _, l := range lam {
			pp.half += 0.5 * l * l
		}
	} else {
		eig, err := e.b.SymEig(x, engine.PositivePart(0), true)
		if err != nil {
			return fmt.Errorf("frob: eigendecomposition: %w", err)
		}
		pp.lam, pp.vec = eig.Values, eig.Vectors
		if pp.half, pp.fixedMargin, err = e.primalAt(pp.lam, pp.vec, pp.margin); err != nil {
			return err
		}
	}
	pp.scale, pp.value = e.primalValue(pp.margin, pp.half, pp.fixedMargin, 1)
	if e.best == nil || pp.value < e.best.value {
		e.best = pp
	}
	return nil
}

// install makes the best primal point the cached one.
func (e *metricEval) install() {
	b := e.best
	e.lam, e.vec, e.half, e.fixedMargin, e.scale = b.lam, b.vec, b.half, b.fixedMargin, b.scale
	copy(e.margin, b.margin)
	e.refined = true
}
