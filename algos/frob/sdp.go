package frob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Entry is one entry of a sparse symmetric matrix: it adds V at (I, J) and,
// when I ≠ J, also at (J, I). Repeated entries add up.
type Entry struct {
	I, J int
	V    float64
}

// RankOne is the term W·v vᵀ of a symmetric matrix. The vector v is sparse
// (Value[t] at row Index[t]) or, when Index is nil, dense (len(Value) == n).
type RankOne struct {
	W     float64
	Index []int
	Value []float64
}

// SymMatrix is a symmetric n×n matrix given as a sum of sparse entries and
// signed rank-one terms. It is never formed densely except on the dense path
// of SolveSDP.
type SymMatrix struct {
	Entries  []Entry
	RankOnes []RankOne
}

// Constraint is ⟨A, X⟩ ≤ B, or ⟨A, X⟩ = B when Equality is set.
type Constraint struct {
	A        SymMatrix
	B        float64
	Equality bool
	// Penalty > 0 softens the constraint: an inequality to ⟨A, X⟩ ≤ B + ξ,
	// ξ ≥ 0, an equality to |⟨A, X⟩ − B| ≤ ξ, with Penalty·ξ added to the
	// objective. Its multiplier is then bounded by Penalty (in absolute value
	// for an equality), which keeps the dual bounded when the hard
	// constraints leave no strictly feasible X. Zero means a hard constraint.
	Penalty float64
}

// SDP is the Frobenius-norm regularised semidefinite program
//
//	min_X ⟨C, X⟩ + (1/2σ)‖X‖²_F + Σ_i Penalty_i ξ_i
//	s.t.  X ⪰ 0,  ⟨A_i, X⟩ ≤ b_i (+ ξ_i)  or  ⟨A_i, X⟩ = b_i.
//
// Its Lagrange dual (derived with multipliers u_i ≥ 0 for inequalities, u_i
// free for equalities, 0 ≤ u_i ≤ Penalty_i for soft ones, and Z ⪰ 0 for the
// cone, eliminating X = σ(Z − C − Â) and then Z = (C + Â)_+) is
//
//	min_u  ½σ‖(C + Â)_−‖²_F + bᵀu,   Â = Σ_i u_i A_i,
//
// with gradient σ⟨(C + Â)_−, A_i⟩ + b_i, and the primal solution is
// X* = −σ(C + Â*)_−, PSD by construction.
type SDP struct {
	N           int
	C           SymMatrix
	Sigma       float64
	Constraints []Constraint
}

// Method selects how SolveSDP computes the negative part (C + Â)_−.
type Method int

const (
	// Auto uses Dense for N ≤ 1000 and Sparse above.
	Auto Method = iota
	// Dense assembles C + Â as a dense N×N matrix and takes its negative
	// eigenpairs with the value-range dense eigensolver.
	Dense
	// Sparse applies C + Â as a sparse-plus-low-rank operator and takes its
	// negative eigenpairs with the sparse partial eigensolver (Lanczos),
	// growing the number of eigenpairs until the whole negative spectrum is
	// covered. It suits problems whose (C + Â)_− has low rank (MVU).
	Sparse
)

// String returns the name of the method.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case Dense:
		return "dense"
	case Sparse:
		return "sparse"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// SDPOptions configures SolveSDP.
type SDPOptions struct {
	Method Method
	// GapTol is the relative duality gap |primal − dual|/max(1, |primal|)
	// and FeasTol the relative violation max_i viol_i/(1 + |b_i|) of the hard
	// constraints at which the solve stops. Zero selects DefaultGapTol and 1e-6.
	GapTol, FeasTol float64
	// MaxIter bounds the L-BFGS-B iterations. Zero selects 20000.
	MaxIter int
	// NewtonSteps bounds the semismooth Newton-CG steps that follow
	// L-BFGS-B when it stops short of the tolerances (problems with
	// N ≤ 3000; each step takes one dense eigendecomposition of C + Â).
	// Zero selects 50; negative disables them.
	NewtonSteps int
	// LBFGSIter, if positive, hands over from L-BFGS-B to Newton-CG after
	// that many iterations instead of waiting for L-BFGS-B to stall.
	LBFGSIter int
	// Memory is the number of L-BFGS-B correction pairs. Zero selects 10.
	Memory int
	// Restarts bounds the fresh L-BFGS-B rounds after a stall; zero selects 5, negative none.
	Restarts int
	// U0, if non-nil, is the starting dual point; nil starts at u = 0.
	U0 []float64
	// InitRank is the first number of eigenpairs asked of the sparse
	// eigensolver; zero selects min(N−1, 16). MaxRank bounds it (zero: N−1);
	// beyond MaxRank an evaluation falls back to the dense eigensolver when
	// N ≤ 4000 and fails otherwise.
	InitRank, MaxRank int
	// EigTol is the accuracy of the sparse eigenvalues relative to the
	// largest magnitude among them (the scale of the negative part, taken
	// from the previous evaluation); zero selects 1e-12.
	EigTol float64
	// Seed fixes the start vector of the first sparse eigensolve.
	Seed uint64
	// Backend runs the numerical kernels; nil means engine.Default().
	Backend engine.Backend
	// Progress, if non-nil, receives progress events: one every 100 dual
	// evaluations (with the evaluation count, dual value and relative gap),
	// or sooner once 10 s have passed without one, and one per L-BFGS-B
	// round.
	Progress progress.Func
}

// SDPSolution is the solution of an SDP with its certificate.
type SDPSolution struct {
	// U is the dual solution.
	U []float64
	// Factor is an N×r matrix with X* = Factor·Factorᵀ (r = rank of (C + Â*)_−).
	Factor *mat.Dense
	// Primal is the primal objective of X* (with optimal slacks for soft
	// constraints), Dual the dual objective −(½σ‖(C+Â)_−‖² + bᵀu);
	// Gap = Primal − Dual and RelGap = Gap/max(1,|Primal|). With hard
	// constraints X* may be slightly infeasible and the gap of either sign.
	Primal, Dual, Gap, RelGap float64
	// MaxViolation is the largest relative violation viol_i/(1 + |b_i|) of a hard constraint by X*.
	MaxViolation float64
	// Certified reports |RelGap| ≤ GapTol and MaxViolation ≤ FeasTol.
	Certified bool
	// Iterations and Evaluations count L-BFGS-B iterations and dual evaluations.
	Iterations, Evaluations int
	// Reason says why the solve stopped.
	Reason string
	// Method is the method used.
	Method Method
	// Curve is the best dual objective after every evaluation.
	Curve []float64
}

// X returns X* as a dense symmetric matrix.
func (s *SDPSolution) X() *mat.SymDense {
	n, _ := s.Factor.Dims()
	x := mat.NewSymDense(n, nil)
	x.SymOuterK(1, s.Factor)
	return x
}

// SolveSDP solves the Frobenius-norm regularised SDP p through its dual (see
// SDP) with the engine's L-BFGS-B. The constraints are never formed as dense
// matrices: C + Â is assembled once per evaluation as a sparse matrix plus
// weighted rank-one terms, its negative part is taken either densely or with
// the sparse partial eigensolver, and with (C + Â)_− = −Z Zᵀ every gradient
// entry ⟨Z Zᵀ, A_i⟩ costs O(nnz(A_i)·rank).
//
// When ctx is cancelled, SolveSDP returns the best iterate so far
// (uncertified, with its gap and violation) together with an error wrapping
// ctx.Err(), or a nil solution if no iterate could be recovered.
func SolveSDP(ctx context.Context, p *SDP, opt SDPOptions) (*SDPSolution, error) {
	ev, err := compileSDP(p, opt)
	if err != nil {
		return nil, err
	}
	ev.ctx = ctx
	m := len(p.Constraints)
	n := p.N
	lower := make([]float64, m)
	upper := make([]float64, m)
	for i, c := range p.Constraints {
		switch {
		case c.Equality && c.Penalty > 0:
			lower[i], upper[i] = -c.Penalty, c.Penalty
		case c.Equality:
			lower[i], upper[i] = math.Inf(-1), math.Inf(1)
		case c.Penalty > 0:
			upper[i] = c.Penalty
		default:
			upper[i] = math.Inf(1)
		}
	}
	u0 := make([]float64, m)
	if opt.U0 != nil {
		if len(opt.U0) != m {
			return nil, fmt.Errorf("%w: U0 has %d entries for %d constraints", ErrInput, len(opt.U0), m)
		}
		for i, v := range opt.U0 {
			u0[i] = math.Min(math.Max(v, lower[i]), upper[i])
		}
	}
	feasTol := orFloat(opt.FeasTol, 1e-6)
	gapTol := orFloat(opt.GapTol, DefaultGapTol)
	cfg := driverConfig{
		gapTol:   gapTol,
		maxIter:  orInt(opt.MaxIter, 20000),
		memory:   orInt(opt.Memory, 10),
		restarts: orInt(opt.Restarts, 5),
		progress: opt.Progress,
		label:    "sdp " + ev.method.String(),
	}
	if cfg.restarts < 0 {
		cfg.restarts = 0
	}
	// With hard constraints the gap alone does not certify: an infeasible X*
	// can show a small gap. Fold the feasibility test into the certificate by
	// reporting an infinite gap until X* is feasible enough.
	certificate := func() (float64, float64) {
		pr, du := ev.certificate()
		if ev.maxViol > feasTol {
			return math.Inf(1), du
		}
		if pr < du { // the gap of a slightly infeasible X* may be negative
			return du + (du - pr), du
		}
		return pr, du
	}
	merit := func() float64 {
		pr, du := ev.certificate()
		return math.Max(math.Abs(relGap(pr, du))/gapTol, ev.maxViol/feasTol)
	}
	prob := dualProblem{lower: lower, upper: upper, eval: ev.eval, certificate: certificate, merit: merit,
		setCutoff: func(f float64) { ev.cutoff = f },
		bounded:   func() bool { return ev.bounded },
		status:    func() string { return fmt.Sprintf("max violation %.3g", ev.maxViol) },
	}
	steps := orInt(opt.NewtonSteps, 50)
	newtonOK := steps > 0 && n <= newtonMaxN
	var (
		dr    driverResult
		iters int
		evals int
		curve []float64
	)
	// L-BFGS-B first (up to LBFGSIter iterations when a Newton phase
	// follows), then semismooth Newton-CG; up to three such cycles.
	total := orInt(opt.MaxIter, 20000)
	for cycle := 0; cycle < 3 && iters < total; cycle++ {
		cfg.maxIter = total - iters
		if newtonOK && opt.LBFGSIter > 0 {
			cfg.maxIter = min(cfg.maxIter, opt.LBFGSIter)
		}
		var err error
		dr, err = solveDual(ctx, ev.b, prob, u0, cfg)
		if err != nil {
			if ctx.Err() != nil && dr.u != nil {
				dr.iterations += iters
				dr.evaluations += evals
				return ev.solution(dr, append(curve, dr.curve...), gapTol, feasTol), err
			}
			return nil, err
		}
		iters += dr.iterations
		evals += dr.evaluations
		curve = append(curve, dr.curve...)
		u0 = dr.u
		if merit() <= 1 || !newtonOK {
			break
		}
		ne, err := ev.newton(ctx, u0, lower, upper, polishConfig{steps: steps, cgIters: 500}, merit, progress.Printf(opt.Progress, "sdp"))
		if err != nil {
			if ctx.Err() != nil {
				// The cache may hold a trial point: refill it with u0.
				if _, eerr := ev.eval(u0, make([]float64, m)); eerr == nil {
					dr.u, dr.iterations, dr.evaluations, dr.reason = u0, iters, evals+ne+1, "cancelled"
					return ev.solution(dr, curve, gapTol, feasTol), err
				}
			}
			return nil, err
		}
		evals += ne
		_, du := ev.certificate()
		curve = append(curve, du)
		dr.reason = "Newton-CG"
		if merit() <= 1 {
			break
		}
	}
	dr.u, dr.iterations, dr.evaluations = u0, iters, evals
	return ev.solution(dr, curve, gapTol, feasTol), nil
}

// solution assembles the SDPSolution of dr from the evaluator's cache,
// which must hold dr.u.
func (ev *sdpEval) solution(dr driverResult, curve []float64, gapTol, feasTol float64) *SDPSolution {
	pr, du := ev.certificate()
	sol := &SDPSolution{
		U:            dr.u,
		Factor:       ev.factor(),
		Primal:       pr,
		Dual:         du,
		Gap:          pr - du,
		RelGap:       relGap(pr, du),
		MaxViolation: ev.maxViol,
		Iterations:   dr.iterations,
		Evaluations:  dr.evaluations,
		Reason:       dr.reason,
		Method:       ev.method,
		Curve:        curve,
	}
	sol.Certified = math.Abs(sol.RelGap) <= gapTol && sol.MaxViolation <= feasTol
	if ev.comp {
		// factor could not compute the high-rank negative part.
		sol.Certified = false
		sol.Reason += "; no factor: the negative part of C + Â has rank above MaxRank"
	}
	return sol
}

// contribution says that a multiple coef of a multiplier lands in CSR slot.
type contribution struct {
	slot int
	coef float64
}

// bigRankOne is a rank-one term applied matrix-free: owner is the constraint
// index, or −1 for C.
type bigRankOne struct {
	owner int
	w     float64
	idx   []int
	val   []float64
}

// newtonMaxN is the largest N for the Newton-CG phase (dense eigendecompositions).
const newtonMaxN = 3000

// denseFallbackN is the largest N for which the sparse path falls back to a
// dense eigendecomposition when the negative part has high rank.
const denseFallbackN = 4000

// smallRankOne is the largest support of a rank-one term folded into the sparse matrix.
const smallRankOne = 16

// sdpEval evaluates the SDP dual and caches the factor of the primal solution.
type sdpEval struct {
	ctx    context.Context
	b      engine.Backend
	p      *SDP
	n      int
	sigma  float64
	method Method

	s       sparse.CSR // pattern and current values of the sparse part of C + Â
	base    []float64  // values of C in s
	cStart  []int      // contributions of constraint i: contrib[cStart[i]:cStart[i+1]]
	contrib []contribution
	big     []bigRankOne
	bigW    []float64 // current weights of big

	// Sparse eigensolver state.
	k                 int
	initRank, maxRank int
	eigTol            float64
	seed              uint64
	start             []float64

	// Complement evaluations (sparse method): when the negative part of
	// C + Â has high rank (far-off line-search trial points), the evaluation
	// goes through its low-rank positive part, with ‖M₋‖² = ‖M‖² − ‖M₊‖² and
	// ⟨M₋, A⟩ = ⟨M, A⟩ − ⟨M₊, A⟩. comp marks such a cached evaluation (z is
	// then nil and factor recomputes the negative part).
	comp     bool
	kPos     int
	bigDense [][]float64 // the big rank-one vectors as dense n-vectors (on first use)

	// Bounded evaluations (sparse method): a trial point whose smallest
	// eigenvalues alone put the dual objective above cutoff (the value at the
	// start of the current L-BFGS-B round) cannot be accepted by the line
	// search, so its objective is reported as the lower bound
	// ½σ Σ_{j≤k} θ_j² + bᵀu from the k Ritz values found (θ_j ≥ λ_j < 0 by
	// interlacing) with the gradient of that partial negative part, and
	// bounded marks the cache as such (no certificate, no solution).
	cutoff  float64
	bounded bool
	trialBU float64 // bᵀu at the point being evaluated
	// negScale is −λ_min of the last exact sparse evaluation with a
	// negative part (zero before): the scale of the eigenvalue tolerance.
	negScale float64

	// Cache of the last evaluation.
	z       *mat.Dense // n×r with (C + Â)_− = −Z Zᵀ
	lam     []float64  // the negative eigenvalues
	q       []float64  // ⟨Z Zᵀ, A_i⟩
	qc      float64    // ⟨Z Zᵀ, C⟩
	u       []float64
	half    float64 // ½σ Σ λ²
	bu      float64
	maxViol float64
}

func compileSDP(p *SDP, opt SDPOptions) (*sdpEval, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil SDP", ErrInput)
	}
	n := p.N
	if n < 1 {
		return nil, fmt.Errorf("%w: SDP of size %d", ErrInput, n)
	}
	if !(p.Sigma > 0) || math.IsInf(p.Sigma, 0) {
		return nil, fmt.Errorf("%w: sigma = %v, want a finite σ > 0", ErrInput, p.Sigma)
	}
	if len(p.Constraints) == 0 {
		return nil, fmt.Errorf("%w: no constraints", ErrInput)
	}
	if err := checkSym("C", p.C, n); err != nil {
		return nil, err
	}
	for i, c := range p.Constraints {
		if err := checkSym(fmt.Sprintf("constraint %d", i), c.A, n); err != nil {
			return nil, err
		}
		if math.IsNaN(c.B) || math.IsInf(c.B, 0) {
			return nil, fmt.Errorf("%w: constraint %d has b = %v", ErrInput, i, c.B)
		}
		if c.Penalty < 0 || math.IsNaN(c.Penalty) || math.IsInf(c.Penalty, 0) {
			return nil, fmt.Errorf("%w: constraint %d has penalty %v", ErrInput, i, c.Penalty)
		}
	}
	ev := &sdpEval{
		cutoff: math.Inf(1),
		b:      engine.Or(opt.Backend),
		p:      p,
		n:      n,
		sigma:  p.Sigma,
		method: opt.Method,
		eigTol: orFloat(opt.EigTol, 1e-12),
		seed:   opt.Seed,
		q:      make([]float64, len(p.Constraints)),
	}
	if ev.method == Auto {
		ev.method = Sparse
		if n <= 1000 {
			ev.method = Dense
		}
	}
	if ev.method != Dense && ev.method != Sparse {
		return nil, fmt.Errorf("%w: unknown method %d", ErrInput, int(opt.Method))
	}
	if ev.method == Sparse && n < 3 {
		ev.method = Dense
	}
	ev.initRank = opt.InitRank
	if ev.initRank <= 0 {
		ev.initRank = 16
	}
	ev.maxRank = opt.MaxRank
	if ev.maxRank <= 0 || ev.maxRank > n-1 {
		ev.maxRank = n - 1
	}
	ev.initRank = min(ev.initRank, ev.maxRank)
	ev.k = ev.initRank
	if err := checkSDPMemory(n, len(p.Constraints), ev.initRank, ev.method); err != nil {
		return nil, err
	}

	// Sparsity pattern of C + Σ A_i (entries and small rank-ones).
	cols := make([][]int, n)
	addPattern := func(a SymMatrix) {
		for _, e := range a.Entries {
			cols[e.I] = append(cols[e.I], e.J)
			if e.I != e.J {
				cols[e.J] = append(cols[e.J], e.I)
			}
		}
		for _, r := range a.RankOnes {
			if r.Index != nil && len(r.Index) <= smallRankOne {
				for _, a := range r.Index {
					cols[a] = append(cols[a], r.Index...)
				}
			}
		}
	}
	addPattern(p.C)
	for _, c := range p.Constraints {
		addPattern(c.A)
	}
	s := sparse.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	for i, c := range cols {
		sort.Ints(c)
		u := c[:0]
		for t, v := range c {
			if t == 0 || v != c[t-1] {
				u = append(u, v)
			}
		}
		cols[i] = u
		s.Indptr[i+1] = s.Indptr[i] + len(u)
	}
	s.Ind = make([]int, 0, s.Indptr[n])
	for _, c := range cols {
		s.Ind = append(s.Ind, c...)
	}
	s.Data = make([]float64, len(s.Ind))
	ev.s = s
	slot := func(i, j int) int {
		ind := s.Ind[s.Indptr[i]:s.Indptr[i+1]]
		return s.Indptr[i] + sort.SearchInts(ind, j)
	}
	contribs := func(a SymMatrix, owner int, out []contribution) []contribution {
		for _, e := range a.Entries {
			out = append(out, contribution{slot(e.I, e.J), e.V})
			if e.I != e.J {
				out = append(out, contribution{slot(e.J, e.I), e.V})
			}
		}
		for _, r := range a.RankOnes {
			if r.Index != nil && len(r.Index) <= smallRankOne {
				for ta, ia := range r.Index {
					for tb, ib := range r.Index {
						out = append(out, contribution{slot(ia, ib), r.W * r.Value[ta] * r.Value[tb]})
					}
				}
				continue
			}
			ev.big = append(ev.big, bigRankOne{owner: owner, w: r.W, idx: r.Index, val: r.Value})
		}
		return out
	}
	ev.base = make([]float64, len(s.Data))
	for _, c := range contribs(p.C, -1, nil) {
		ev.base[c.slot] += c.coef
	}
	ev.cStart = make([]int, len(p.Constraints)+1)
	for i, c := range p.Constraints {
		ev.contrib = contribs(c.A, i, ev.contrib)
		ev.cStart[i+1] = len(ev.contrib)
	}
	ev.bigW = make([]float64, len(ev.big))
	return ev, nil
}

func checkSym(what string, a SymMatrix, n int) error {
	for t, e := range a.Entries {
		if e.I < 0 || e.I >= n || e.J < 0 || e.J >= n {
			return fmt.Errorf("%w: %s: entry %d at (%d,%d) outside %d×%d", ErrInput, what, t, e.I, e.J, n, n)
		}
		if math.IsNaN(e.V) || math.IsInf(e.V, 0) {
			return fmt.Errorf("%w: %s: entry %d is %v", ErrInput, what, t, e.V)
		}
	}
	for t, r := range a.RankOnes {
		if math.IsNaN(r.W) || math.IsInf(r.W, 0) {
			return fmt.Errorf("%w: %s: rank-one %d has weight %v", ErrInput, what, t, r.W)
		}
		if r.Index == nil {
			if len(r.Value) != n {
				return fmt.Errorf("%w: %s: dense rank-one %d has length %d, want %d", ErrInput, what, t, len(r.Value), n)
			}
		} else {
			if len(r.Index) != len(r.Value) {
				return fmt.Errorf("%w: %s: rank-one %d has %d indices and %d values", ErrInput, what, t, len(r.Index), len(r.Value))
			}
			seen := make(map[int]bool, len(r.Index))
			for _, i := range r.Index {
				if i < 0 || i >= n {
					return fmt.Errorf("%w: %s: rank-one %d has index %d outside [0,%d)", ErrInput, what, t, i, n)
				}
				if seen[i] {
					return fmt.Errorf("%w: %s: rank-one %d repeats index %d", ErrInput, what, t, i)
				}
				seen[i] = true
			}
		}
		for _, v := range r.Value {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s: rank-one %d has a value %v", ErrInput, what, t, v)
			}
		}
	}
	return nil
}

// assemble sets the current values of C + Â(u).
func (e *sdpEval) assemble(u []float64) {
	copy(e.s.Data, e.base)
	for i, ui := range u {
		if ui == 0 {
			continue
		}
		for _, c := range e.contrib[e.cStart[i]:e.cStart[i+1]] {
			e.s.Data[c.slot] += ui * c.coef
		}
	}
	for t, r := range e.big {
		if r.owner < 0 {
			e.bigW[t] = r.w
		} else {
			e.bigW[t] = u[r.owner] * r.w
		}
	}
}

// Dim implements engine.Operator.
func (e *sdpEval) Dim() int { return e.n }

// Apply implements engine.Operator: dst = (C + Â) x.
func (e *sdpEval) Apply(dst, x []float64) {
	e.s.MulVec(dst, x)
	for t, r := range e.big {
		w := e.bigW[t]
		if w == 0 {
			continue
		}
		if r.idx == nil {
			var d float64
			for i, v := range r.val {
				d += v * x[i]
			}
			d *= w
			for i, v := range r.val {
				dst[i] += d * v
			}
			continue
		}
		var d float64
		for i, v := range r.val {
			d += v * x[r.idx[i]]
		}
		d *= w
		for i, v := range r.val {
			dst[r.idx[i]] += d * v
		}
	}
}

// dense returns C + Â as a dense symmetric matrix.
func (e *sdpEval) dense() *mat.SymDense {
	n := e.n
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	for i := 0; i < n; i++ {
		for p := e.s.Indptr[i]; p < e.s.Indptr[i+1]; p++ {
			if j := e.s.Ind[p]; j >= i {
				raw.Data[i*raw.Stride+j] += e.s.Data[p]
			}
		}
	}
	for t, r := range e.big {
		w := e.bigW[t]
		if w == 0 {
			continue
		}
		if r.idx == nil {
			e.b.BLAS().Dsyr(blas.Upper, n, w, r.val, 1, raw.Data, raw.Stride)
			continue
		}
		for ta, ia := range r.idx {
			for tb, ib := range r.idx {
				if ib >= ia {
					raw.Data[ia*raw.Stride+ib] += w * r.val[ta] * r.val[tb]
				}
			}
		}
	}
	return a
}

// errHighRank says that the negative part of C + Â has more than the capped
// number of eigenpairs the sparse path asks for.
var errHighRank = errors.New("frob: negative part of high rank")

// errAboveCutoff reports that a capped spectral search found enough negative
// eigenvalues to bound the dual objective above cutoff; negativePart then
// returns those eigenpairs with it.
var errAboveCutoff = errors.New("frob: dual objective above the cutoff")

// rankCap is the number of eigenpairs beyond which a capped spectral search
// gives up (errHighRank): max(64, 4·the current request).
func (e *sdpEval) rankCap() int { return min(e.maxRank, max(64, 4*e.k)) }

// negativePart returns the negative eigenpairs of the current C + Â. With
// capped set, the sparse path returns errHighRank instead of asking for more
// than rankCap eigenpairs.
func (e *sdpEval) negativePart(capped bool) ([]float64, *mat.Dense, error) {
	if e.method == Dense {
		return e.negativeDense()
	}
	k := e.k
	kCap := e.rankCap()
	for {
		if capped && k > kCap {
			return nil, nil, errHighRank
		}
		if k > e.maxRank {
			if e.n <= denseFallbackN {
				return e.negativeDense()
			}
			return nil, nil, fmt.Errorf("frob: the negative part of C + Â has rank above %d (MaxRank)", e.maxRank)
		}
		// ARPACK's test is relative to each Ritz value, which makes pairs
		// near zero (the MVU dual has a cluster there) converge to an
		// absolute accuracy far below what the dual needs, at the cost of
		// thousands of Lanczos steps. Shifting by twice the previous scale
		// of the negative part makes the test uniform: |λ − θ| ≲ EigTol·scale.
		// A wider Krylov space (30 vectors beyond k) cuts the restarts.
		opt := engine.EigsOptions{Tol: e.eigTol, Seed: e.seed, NCV: min(e.n, max(2*k+1, k+30))}
		if e.start != nil {
			opt.Start = e.start
		}
		op := shiftedOp{e, 2 * e.negScale}
		res, err := e.b.Eigs(e.ctx, op, k, engine.SmallestAlgebraic, opt)
		if err != nil {
			if e.ctx != nil && e.ctx.Err() != nil {
				return nil, nil, fmt.Errorf("frob: %w", e.ctx.Err())
			}
			// Not converged: retry with more eigenpairs (a wider Krylov space).
			if k == e.maxRank {
				return nil, nil, fmt.Errorf("frob: sparse eigensolver: %w", err)
			}
			k = min(2*k, e.maxRank)
			continue
		}
		vals := res.Values
		for i := range vals {
			vals[i] -= op.shift
		}
		covered := len(vals) == k && vals[k-1] >= -1e-10*math.Max(1, math.Abs(vals[0]))
		if k == e.n-1 && len(vals) == k && !covered {
			// Only the largest eigenvalue is unknown; the dense path decides.
			return e.negativeDense()
		}
		if !covered && capped && len(vals) == k && vals[k-1] < 0 {
			lb := e.trialBU
			for _, l := range vals {
				lb += 0.5 * e.sigma * l * l
			}
			if lb > e.cutoff {
				return vals, res.Vectors, errAboveCutoff
			}
		}
		if !covered {
			if k == e.maxRank {
				k++ // falls back or fails above
				continue
			}
			k = min(2*k, e.maxRank)
			continue
		}
		neg := 0
		for neg < len(vals) && vals[neg] < 0 {
			neg++
		}
		if neg > 0 {
			e.negScale = -vals[0]
		}
		// Next time ask for a little more than the negative part.
		e.k = min(max(e.initRank, neg+max(4, neg/4)+1), e.maxRank)
		if neg > 0 {
			// Warm start: the sum of the negative eigenvectors.
			if e.start == nil {
				e.start = make([]float64, e.n)
			}
			for i := range e.start {
				var s float64
				for j := 0; j < neg; j++ {
					s += res.Vectors.At(i, j)
				}
				e.start[i] = s
			}
		}
		vec := res.Vectors
		if neg == 0 {
			return nil, nil, nil
		}
		return vals[:neg], vec.Slice(0, e.n, 0, neg).(*mat.Dense), nil
	}
}

// shiftedOp is C + Â + shift·I.
type shiftedOp struct {
	e     *sdpEval
	shift float64
}

func (o shiftedOp) Dim() int { return o.e.n }

func (o shiftedOp) Apply(dst, x []float64) {
	o.e.Apply(dst, x)
	if o.shift != 0 {
		for i, v := range x {
			dst[i] += o.shift * v
		}
	}
}

// positivePart returns the positive eigenpairs of the current C + Â from
// the sparse eigensolver, or errHighRank if there are more than rankCap.
func (e *sdpEval) positivePart() ([]float64, *mat.Dense, error) {
	k := max(e.kPos, min(e.initRank, e.n-1))
	kCap := e.rankCap()
	for {
		if k > kCap {
			return nil, nil, errHighRank
		}
		res, err := e.b.Eigs(e.ctx, e, k, engine.LargestAlgebraic, engine.EigsOptions{Tol: e.eigTol, Seed: e.seed})
		if err != nil {
			if e.ctx != nil && e.ctx.Err() != nil {
				return nil, nil, fmt.Errorf("frob: %w", e.ctx.Err())
			}
			k *= 2
			continue
		}
		vals := res.Values // ascending: vals[0] is the smallest of the k largest
		if len(vals) < k || vals[0] > 1e-10*math.Max(1, math.Abs(vals[len(vals)-1])) {
			k *= 2 // positive eigenvalues beyond the k found
			continue
		}
		first := 0
		for first < len(vals) && vals[first] <= 0 {
			first++
		}
		if first == len(vals) {
			return nil, nil, nil // C + Â ⪯ 0
		}
		e.kPos = len(vals) - first + max(4, (len(vals)-first)/4) + 1
		return vals[first:], res.Vectors.Slice(0, e.n, first, len(vals)).(*mat.Dense), nil
	}
}

// bigVectors returns the big rank-one vectors as dense n-vectors.
func (e *sdpEval) bigVectors() [][]float64 {
	if e.bigDense == nil && len(e.big) > 0 {
		e.bigDense = make([][]float64, len(e.big))
		for t, r := range e.big {
			v := make([]float64, e.n)
			if r.idx == nil {
				copy(v, r.val)
			} else {
				for i, x := range r.val {
					v[r.idx[i]] += x
				}
			}
			e.bigDense[t] = v
		}
	}
	return e.bigDense
}

// entry returns (C + Â)_ij.
func (e *sdpEval) entry(i, j int, bd [][]float64) float64 {
	var v float64
	ind := e.s.Ind[e.s.Indptr[i]:e.s.Indptr[i+1]]
	if k := sort.SearchInts(ind, j); k < len(ind) && ind[k] == j {
		v = e.s.Data[e.s.Indptr[i]+k]
	}
	for t, w := range e.bigW {
		if w != 0 {
			v += w * bd[t][i] * bd[t][j]
		}
	}
	return v
}

// innerM returns ⟨C + Â, A⟩; y and ay are n-vector scratch space.
func (e *sdpEval) innerM(a SymMatrix, bd [][]float64, y, ay []float64) float64 {
	var s float64
	for _, t := range a.Entries {
		v := t.V * e.entry(t.I, t.J, bd)
		if t.I != t.J {
			v *= 2
		}
		s += v
	}
	for _, r := range a.RankOnes {
		if r.Index != nil && len(r.Index) <= smallRankOne {
			for ta, ia := range r.Index {
				for tb, ib := range r.Index {
					s += r.W * r.Value[ta] * r.Value[tb] * e.entry(ia, ib, bd)
				}
			}
			continue
		}
		clear(y)
		if r.Index == nil {
			copy(y, r.Value)
		} else {
			for t, i := range r.Index {
				y[i] += r.Value[t]
			}
		}
		e.Apply(ay, y)
		var d float64
		for i, v := range y {
			d += v * ay[i]
		}
		s += r.W * d
	}
	return s
}

// frobSq returns ‖C + Â‖²_F = ‖S‖² + 2Σ_t w_t v_tᵀ S v_t + Σ_{t,t′} w_t w_t′ (v_t·v_t′)².
func (e *sdpEval) frobSq(bd [][]float64, sv []float64) float64 {
	var s float64
	for _, v := range e.s.Data {
		s += v * v
	}
	for t, w := range e.bigW {
		if w == 0 {
			continue
		}
		e.s.MulVec(sv, bd[t])
		var d float64
		for i, v := range bd[t] {
			d += v * sv[i]
		}
		s += 2 * w * d
		for t2, w2 := range e.bigW {
			if w2 == 0 {
				continue
			}
			var c float64
			for i, v := range bd[t] {
				c += v * bd[t2][i]
			}
			s += w * w2 * c * c
		}
	}
	return s
}

func (e *sdpEval) negativeDense() ([]float64, *mat.Dense, error) {
	eig, err := e.b.SymEig(e.dense(), engine.NegativePart(0), true)
	if err != nil {
		return nil, nil, fmt.Errorf("frob: eigendecomposition: %w", err)
	}
	neg := 0
	for neg < len(eig.Values) && eig.Values[neg] < 0 {
		neg++
	}
	if neg == 0 {
		return nil, nil, nil
	}
	return eig.Values[:neg], eig.Vectors.Slice(0, e.n, 0, neg).(*mat.Dense), nil
}

// eval returns the dual objective ½σ‖(C+Â)_−‖² + bᵀu and its gradient.
func (e *sdpEval) eval(u, grad []float64) (float64, error) {
	e.assemble(u)
	cons := e.p.Constraints
	e.trialBU = 0
	for i, c := range cons {
		e.trialBU += c.B * u[i]
	}
	e.bounded = false
	lam, vec, err := e.negativePart(true)
	if errors.Is(err, errAboveCutoff) {
		return e.boundedEval(lam, vec, grad), nil
	}
	e.comp = false
	if errors.Is(err, errHighRank) {
		var plam []float64
		var pvec *mat.Dense
		if plam, pvec, err = e.positivePart(); err == nil {
			e.complement(plam, pvec)
		} else if errors.Is(err, errHighRank) {
			// Both parts are large: a dense eigendecomposition is far
			// cheaper than Lanczos with hundreds of pairs, where it fits.
			if e.n <= denseFallbackN {
				lam, vec, err = e.negativeDense()
			} else {
				lam, vec, err = e.negativePart(false)
			}
		}
	}
	if err != nil {
		return 0, err
	}
	if !e.comp {
		r := len(lam)
		e.lam = lam
		e.half = 0
		for _, l := range lam {
			e.half += 0.5 * e.sigma * l * l
		}
		e.z = scaledFactor(lam, vec)
		e.qc = quadForm(e.z, e.p.C)
		sparse.ParallelRows(len(cons), len(cons)*(r+1)*4, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				e.q[i] = quadForm(e.z, cons[i].A)
			}
		})
	}
	e.u = append(e.u[:0], u...)
	e.bu = e.trialBU
	e.maxViol = 0
	for i, c := range cons {
		ax := e.sigma * e.q[i] // ⟨A_i, X*⟩
		grad[i] = c.B - ax
		if c.Penalty == 0 {
			viol := ax - c.B
			if c.Equality {
				viol = math.Abs(viol)
			}
			e.maxViol = math.Max(e.maxViol, viol/(1+math.Abs(c.B)))
		}
	}
	return e.half + e.bu, nil
}

// boundedEval returns the lower bound ½σ Σ θ_j² + bᵀu of the dual objective
// at the trial point from its k smallest Ritz pairs (all negative) and writes
// the gradient of that bound into grad, leaving the cache of the last exact
// evaluation in place.
func (e *sdpEval) boundedEval(lam []float64, vec *mat.Dense, grad []float64) float64 {
	e.bounded = true
	f := e.trialBU
	for _, l := range lam {
		f += 0.5 * e.sigma * l * l
	}
	z := scaledFactor(lam, vec)
	cons := e.p.Constraints
	sparse.ParallelRows(len(cons), len(cons)*(len(lam)+1)*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			grad[i] = cons[i].B - e.sigma*quadForm(z, cons[i].A)
		}
	})
	return f
}

// complement fills the evaluation cache from the positive eigenpairs of
// M = C + Â: with P = V₊√Λ₊, −M₋ = P Pᵀ − M, so ⟨Z Zᵀ, A⟩ = ⟨P Pᵀ, A⟩ − ⟨M, A⟩
// and ½σ‖M₋‖² = ½σ(‖M‖² − Σ λ₊²). No high-rank matrix is formed.
func (e *sdpEval) complement(plam []float64, pvec *mat.Dense) {
	e.comp = true
	e.z, e.lam = nil, nil
	p := scaledFactor(plam, pvec)
	bd := e.bigVectors()
	y, ay := make([]float64, e.n), make([]float64, e.n)
	fro := e.frobSq(bd, y)
	var pos float64
	for _, l := range plam {
		pos += l * l
	}
	e.half = 0.5 * e.sigma * math.Max(0, fro-pos)
	e.qc = quadForm(p, e.p.C) - e.innerM(e.p.C, bd, y, ay)
	for i, c := range e.p.Constraints {
		e.q[i] = quadForm(p, c.A) - e.innerM(c.A, bd, y, ay)
	}
}

// scaledFactor returns V·diag(√|λ|) (nil when there are no pairs).
func scaledFactor(lam []float64, vec *mat.Dense) *mat.Dense {
	if len(lam) == 0 {
		return nil
	}
	n, _ := vec.Dims()
	z := mat.NewDense(n, len(lam), nil)
	for j, l := range lam {
		s := math.Sqrt(math.Abs(l))
		for i := 0; i < n; i++ {
			z.Set(i, j, vec.At(i, j)*s)
		}
	}
	return z
}

// certificate returns the primal objective of X* = σ Z Zᵀ (with optimal
// slacks of the soft constraints) and the dual objective at the cached point.
func (e *sdpEval) certificate() (primal, dual float64) {
	primal = e.sigma*e.qc + e.half // ⟨C,X⟩ + ‖X‖²/(2σ) = σ⟨C,ZZᵀ⟩ + ½σΣλ²
	for i, c := range e.p.Constraints {
		if c.Penalty > 0 {
			v := e.sigma*e.q[i] - c.B
			if c.Equality {
				v = math.Abs(v)
			}
			if v > 0 {
				primal += c.Penalty * v
			}
		}
	}
	return primal, -(e.half + e.bu)
}

// factor returns √σ Z, the factor of X*.
func (e *sdpEval) factor() *mat.Dense {
	if e.comp {
		// A complement evaluation has no factor: compute the negative part
		// (of C + Â at the cached point: a bounded evaluation may have
		// assembled another since).
		e.assemble(e.u)
		if lam, vec, err := e.negativePart(false); err == nil {
			e.z, e.lam, e.comp = scaledFactor(lam, vec), lam, false
		}
	}
	if e.z == nil {
		return mat.NewDense(e.n, 1, nil)
	}
	f := mat.DenseCopyOf(e.z)
	f.Scale(math.Sqrt(e.sigma), f)
	return f
}

// quadForm returns ⟨Z Zᵀ, A⟩ for a factor z (nil means zero).
func quadForm(z *mat.Dense, a SymMatrix) float64 {
	if z == nil {
		return 0
	}
	raw := z.RawMatrix()
	r := raw.Cols
	row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+r] }
	var s float64
	for _, e := range a.Entries {
		zi, zj := row(e.I), row(e.J)
		var d float64
		for k, v := range zi {
			d += v * zj[k]
		}
		if e.I != e.J {
			d *= 2
		}
		s += e.V * d
	}
	if len(a.RankOnes) > 0 {
		y := make([]float64, r)
		for _, ro := range a.RankOnes {
			for k := range y {
				y[k] = 0
			}
			for t, v := range ro.Value {
				i := t
				if ro.Index != nil {
					i = ro.Index[t]
				}
				for k, zv := range row(i) {
					y[k] += v * zv
				}
			}
			var d float64
			for _, v := range y {
				d += v * v
			}
			s += ro.W * d
		}
	}
	return s
}
