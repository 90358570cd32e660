package sdp

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
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
// of Solve.
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

// Problem is the Frobenius-norm regularised semidefinite program
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
type Problem struct {
	N           int
	C           SymMatrix
	Sigma       float64
	Constraints []Constraint
}

// Method selects how Solve computes the negative part (C + Â)_−.
type Method int

const (
	// Auto uses Dense for N ≤ 160 and Sparse above.
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

// Eigensolver selects the eigensolver of the Sparse method.
type Eigensolver int

const (
	// Lanczos is ARPACK's implicitly restarted Lanczos (engine.Backend.Eigs),
	// started from one vector: the sum of the previous evaluation's
	// negative eigenvectors.
	Lanczos Eigensolver = iota
	// Block is LOBPCG (engine.BlockEigs) started from the previous
	// evaluation's whole block of Ritz vectors: consecutive evaluations of
	// the dual differ by one L-BFGS-B step, so the block is already close
	// to the new negative eigenspace.
	Block
)

// String returns the name of the eigensolver.
func (e Eigensolver) String() string {
	switch e {
	case Lanczos:
		return "lanczos"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Eigensolver(%d)", int(e))
}

// Options configures Solve.
type Options struct {
	Method Method
	// GapTol is the relative duality gap |primal − dual|/max(1, |primal|)
	// and FeasTol the relative violation max_i viol_i/(1 + |b_i|) of the hard
	// constraints at which the solve stops. Zero selects DefaultGapTol and
	// DefaultFeasTol.
	GapTol, FeasTol float64
	// MaxIter bounds the L-BFGS-B iterations. Zero selects DefaultMaxIter.
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
	// Eigensolver selects the sparse path's eigensolver: Lanczos (zero
	// value) or Block.
	Eigensolver Eigensolver
	// ExactEvals makes every sparse evaluation use EigTol. By default the
	// sparse path evaluates the dual inexactly far from the optimum: its
	// eigensolver tolerance starts at 1e-3 and follows 1% of the progress
	// of the solve (the larger of the relative gap and the relative
	// violation), raised only between L-BFGS-B rounds so that one line
	// search compares values of one accuracy; the point certified or
	// returned is always re-evaluated at EigTol, and only such an
	// evaluation certifies.
	ExactEvals bool
	// NoShiftInvert makes the Lanczos eigensolver work on C + Â itself.
	// By default it works on (C + Â + sI)⁻¹, s a little above −λ_min,
	// applied with a sparse (envelope) LDLᵀ factorization, whenever
	// that factorization is affordable (at most 4e9 flops) and C + Â + sI
	// is positive definite: the wanted eigenvalues then stand apart from
	// the rest of the spectrum, and Lanczos needs about 20 times fewer
	// operator applications (docs/algorithms/sdp-mvu.md, "The eigensolver:
	// choices and trade-offs").
	NoShiftInvert bool
	// NoRepair turns off the primal repair. By default, when every hard
	// constraint is a rank-one form ⟨w·a·aᵀ, X⟩ with w > 0 (MVU's squared
	// distances and centring), an evaluation whose primal X(u) is within
	// GapTol of the dual but violates constraints by more than FeasTol
	// also tries X̃ = Y·Yᵀ, Y the factor of X(u) after cyclic sweeps that
	// scale it along each violated a until it holds (SHAKE); X̃ is kept
	// when its exact gap and violation are the better. On degenerate duals
	// such as MVU's the violation lags the gap by more than a thousand
	// iterations (docs/algorithms/sdp-mvu.md, "Certificate").
	NoRepair bool
	// Eigs, if non-nil, replaces the backend's sparse eigensolver on the
	// Lanczos path. The operators C + Â it is given implement
	// engine.RowApplier, so that a solver whose processes own blocks of
	// rows (distributed.Eigs: PARPACK over an MPI job) applies them without any
	// process forming the whole product; the shift-and-invert operator
	// does not (its envelope factorization is sequential: every process
	// factors and solves the whole system, and only the Lanczos basis is
	// distributed), so NoShiftInvert makes every product row-distributed,
	// at many times the products. It must return the whole eigenvectors,
	// the same on every process.
	Eigs engine.EigsSolver
	// Backend runs the numerical kernels; nil means engine.Default().
	Backend engine.Backend
	// Progress, if non-nil, receives progress events: one every 100 dual
	// evaluations (with the evaluation count, dual value and relative gap),
	// or sooner once 10 s have passed without one, and one per L-BFGS-B
	// round.
	Progress progress.Func
}

// Solution is the solution of an SDP with its certificate.
type Solution struct {
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
	// OperatorProducts counts the operator applications of the sparse
	// eigensolves (zero on the dense path): products with C + Â, and on
	// the shift-and-invert path solves with C + Â + sI (each about as
	// costly as a few products) and the products that check the Ritz
	// pairs. Factorizations counts the sparse LDLᵀ factorizations of
	// C + Â + sI behind those solves.
	OperatorProducts, Factorizations int
	// Repaired reports that Factor (and Primal, MaxViolation) come from
	// the primal repair of the returned dual point rather than from
	// X(U) = σ(C + Â)₋ itself (see Options.NoRepair); Repairs counts the
	// evaluations whose repaired primal was the better one.
	Repaired bool
	Repairs  int
	// Reason says why the solve stopped.
	Reason string
	// Method is the method used.
	Method Method
	// Curve is the best dual objective after every evaluation.
	Curve []float64
}

// X returns X* as a dense symmetric matrix.
func (s *Solution) X() *mat.SymDense {
	n, _ := s.Factor.Dims()
	x := mat.NewSymDense(n, nil)
	x.SymOuterK(1, s.Factor)
	return x
}

// Solve solves the Frobenius-norm regularised SDP p through its dual (see
// SDP) with the engine's L-BFGS-B. The constraints are never formed as dense
// matrices: C + Â is assembled once per evaluation as a sparse matrix plus
// weighted rank-one terms, its negative part is taken either densely or with
// the sparse partial eigensolver, and with (C + Â)_− = −Z Zᵀ every gradient
// entry ⟨Z Zᵀ, A_i⟩ costs O(nnz(A_i)·rank).
//
// When ctx is cancelled, Solve returns the best iterate so far
// (uncertified, with its gap and violation) together with an error wrapping
// ctx.Err(), or a nil solution if no iterate could be recovered.
func Solve(ctx context.Context, p *Problem, opt Options) (*Solution, error) {
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
	feasTol := cmp.Or(opt.FeasTol, DefaultFeasTol)
	gapTol := cmp.Or(opt.GapTol, DefaultGapTol)
	ev.gapTol, ev.feasTol = gapTol, feasTol
	if !opt.NoRepair {
		ev.rset = newRepairSet(p)
	}
	cfg := dualsolve.Config{
		GapTol:   gapTol,
		MaxIter:  cmp.Or(opt.MaxIter, DefaultMaxIter),
		Memory:   cmp.Or(opt.Memory, 10),
		Restarts: cmp.Or(opt.Restarts, 5),
		Progress: opt.Progress,
		Label:    "sdp " + ev.method.String(),
	}
	if cfg.Restarts < 0 {
		cfg.Restarts = 0
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
		return math.Max(math.Abs(dualsolve.RelGap(pr, du))/gapTol, ev.maxViol/feasTol)
	}
	prob := dualsolve.Problem{Lower: lower, Upper: upper, Eval: ev.eval, Certificate: certificate, Merit: merit,
		SetCutoff: func(f float64) { ev.cutoff = f },
		Bounded:   func() bool { return ev.bounded },
		Status:    func() string { return fmt.Sprintf("max violation %.3g", ev.maxViol) },
	}
	if ev.method == Sparse && !opt.ExactEvals {
		ev.tol = math.Max(ev.eigTol, looseEigTol)
		prob.Accuracy = ev.accuracy()
	}
	steps := cmp.Or(opt.NewtonSteps, 50)
	newtonOK := steps > 0 && n <= newtonMaxN
	var (
		dr    dualsolve.Result
		iters int
		evals int
		curve []float64
	)
	// L-BFGS-B first (up to LBFGSIter iterations when a Newton phase
	// follows), then semismooth Newton-CG; up to three such cycles.
	total := cmp.Or(opt.MaxIter, DefaultMaxIter)
	for cycle := 0; cycle < 3 && iters < total; cycle++ {
		cfg.MaxIter = total - iters
		if newtonOK && opt.LBFGSIter > 0 {
			cfg.MaxIter = min(cfg.MaxIter, opt.LBFGSIter)
		}
		var err error
		dr, err = dualsolve.Solve(ctx, ev.b, prob, u0, cfg)
		if err != nil {
			if ctx.Err() != nil && dr.U != nil {
				dr.Iterations += iters
				dr.Evaluations += evals
				return ev.solution(dr, append(curve, dr.Curve...), gapTol, feasTol), err
			}
			return nil, err
		}
		iters += dr.Iterations
		evals += dr.Evaluations
		curve = append(curve, dr.Curve...)
		u0 = dr.U
		if merit() <= 1 || !newtonOK {
			break
		}
		ne, err := ev.newton(ctx, u0, lower, upper, dualsolve.PolishConfig{Steps: steps, CGIters: 500}, merit, progress.Printf(opt.Progress, "sdp"))
		if err != nil {
			if ctx.Err() != nil {
				// The cache may hold a trial point: refill it with u0.
				if _, eerr := ev.eval(u0, make([]float64, m)); eerr == nil {
					dr.U, dr.Iterations, dr.Evaluations, dr.Reason = u0, iters, evals+ne+1, "cancelled"
					return ev.solution(dr, curve, gapTol, feasTol), err
				}
			}
			return nil, err
		}
		evals += ne
		_, du := ev.certificate()
		curve = append(curve, du)
		dr.Reason = "Newton-CG"
		if merit() <= 1 {
			break
		}
	}
	dr.U, dr.Iterations, dr.Evaluations = u0, iters, evals
	return ev.solution(dr, curve, gapTol, feasTol), nil
}

// solution assembles the SDPSolution of dr from the evaluator's cache,
// which must hold dr.u.
func (ev *dualEval) solution(dr dualsolve.Result, curve []float64, gapTol, feasTol float64) *Solution {
	if ev.rep == nil && !ev.bounded {
		// The returned point may have been chosen for the merit of its
		// repair (the driver keeps the best one) and re-evaluated when the
		// attempt schedule skipped the repair: repair it now.
		ev.repairPrimal(true)
	}
	pr, du := ev.certificate()
	sol := &Solution{
		U:                dr.U,
		Factor:           ev.factor(),
		Primal:           pr,
		Dual:             du,
		Gap:              pr - du,
		RelGap:           dualsolve.RelGap(pr, du),
		MaxViolation:     ev.maxViol,
		Iterations:       dr.Iterations,
		Evaluations:      dr.Evaluations,
		OperatorProducts: ev.applies,
		Factorizations:   ev.factorizations,
		Repaired:         ev.rep != nil,
		Repairs:          ev.repairs,
		Reason:           dr.Reason,
		Method:           ev.method,
		Curve:            curve,
	}
	// Only an evaluation at the final eigensolver tolerance certifies.
	sol.Certified = math.Abs(sol.RelGap) <= gapTol && sol.MaxViolation <= feasTol && ev.cacheTol <= ev.eigTol
	if ev.comp {
		// factor could not compute the high-rank negative part.
		sol.Certified = false
		sol.Reason += "; no factor: the negative part of C + Â has rank above MaxRank"
	}
	return sol
}
