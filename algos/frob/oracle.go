package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// Oracle computes the parts of the FrobMetric dual that touch the data and
// the triplets, for a solve whose triplets are not all in this process
// (package distributed implements it over MPI). LearnOracle runs Learn's
// whole-set solve — the same L-BFGS-B cycles on the Jacobi-scaled
// multipliers, the same Newton polish, the same certificate — on the
// vectors of all m multipliers it is given, and asks the oracle only for
//
//	(λ, V)  the positive eigenpairs of G(u) = Σ_r u_r A_r, with
//	        the margins ⟨A_r, V diag(λ) Vᵀ⟩ of every triplet (Eval),
//	(μ, Q)  all the eigenpairs of G at the last point evaluated (Eig),
//	out_r = ⟨A_r, D(·)_+[G](Σ_s v_s A_s)⟩   (HessVec, see HessianDirection),
//	the Jacobi diagonal of that Hessian, ‖A_r‖_F and a few sizes.
//
// The values an oracle returns must not change afterwards (Eval's
// eigenpairs are kept as the result's metric). Triplet r is the r-th of
// the problem the oracle stands for, in the same order in every method.
type Oracle interface {
	// Sizes returns the number of points n, the dimension D, the number of
	// triplets m and of distinct triplet pairs (the cost model that decides
	// whether the polish uses a Jacobi preconditioner).
	Sizes() (n, d, m, pairs int)
	// Norms returns ‖A_r‖_F for every triplet (1 for a degenerate one).
	Norms() ([]float64, error)
	// Eval returns the positive eigenpairs (ascending values, vectors as
	// D×r columns) of G(u) for the m multipliers u and writes every
	// triplet's margin ⟨A_r, (G(u))_+⟩ into margin.
	Eval(u, margin []float64) (lam []float64, vec *mat.Dense, err error)
	// Eig returns all the eigenpairs of G at the point last passed to Eval.
	Eig() (mu []float64, q *mat.Dense, err error)
	// HessVec writes the generalised Hessian product for v at the
	// eigendecomposition (mu, q) into out.
	HessVec(out, v, mu []float64, q *mat.Dense) error
	// JacobiDiag writes the diagonal of that Hessian into diag.
	JacobiDiag(diag, mu []float64, q *mat.Dense) error
}

// WorkingSetOracle is an Oracle through which LearnOracle also runs the
// working set (WorkingSetOn, or WorkingSetAuto from WorkingSetMinTriplets
// triplets): the evaluations over all the triplets stay with the oracle,
// while each round's restricted dual, on the few rows its triplets touch,
// is gathered and solved by one process.
type WorkingSetOracle interface {
	Oracle
	// Gram sets g to Σ_r w_r A_r over all m triplets (w has m weights).
	Gram(g *mat.SymDense, w []float64) error
	// Restrict returns the rows that the triplets idx (ascending) touch,
	// in increasing order of their point numbers, and those triplets
	// renumbered on them in the order of idx, the same on every process.
	Restrict(idx []int) (*mat.Dense, *constraints.TripletSet, error)
	// Once runs solve on one process and returns its result on every
	// process, with the fields a working-set round reads: U, M (nil or
	// D×D), Iterations, Evaluations, FullEvaluations, Refinements,
	// RefineSeconds and Curve. solve does not call the oracle.
	Once(solve func() (*MetricResult, error)) (*MetricResult, error)
	// PositivePart returns the positive eigenpairs of the symmetric x
	// (ascending values, vectors as D×r columns) and writes every
	// triplet's margin ⟨A_r, (x)_+⟩ into margin.
	PositivePart(x *mat.SymDense, margin []float64) ([]float64, *mat.Dense, error)
}

// LearnOracle solves FrobMetric over the oracle's triplets as Learn does
// on data that are already normalised: the result is that of Learn except
// that M and L are in the units of the data the oracle sees and DataScale
// is left 0. The working set needs a WorkingSetOracle (otherwise
// opt.WorkingSet must be WorkingSetOff, or WorkingSetAuto with fewer than
// WorkingSetMinTriplets triplets); opt.U0, if set, has m entries.
//
// Every call to the oracle is made in the same order for the same inputs
// by every process that runs LearnOracle with oracles that return the same
// bits; that is what keeps the ranks of a distributed solve in step.
func LearnOracle(ctx context.Context, o Oracle, opt MetricOptions) (*MetricResult, error) {
	if o == nil {
		return nil, fmt.Errorf("%w: nil oracle", ErrInput)
	}
	n, d, m, _ := o.Sizes()
	if m == 0 || d == 0 {
		return nil, fmt.Errorf("%w: %d triplets in dimension %d", ErrInput, m, d)
	}
	if err := checkC(opt); err != nil {
		return nil, err
	}
	if opt.MaxIter < 0 {
		return nil, fmt.Errorf("%w: MaxIter = %d, want ≥ 0 (0 selects the default)", ErrInput, opt.MaxIter)
	}
	if opt.U0 != nil && len(opt.U0) != m {
		return nil, fmt.Errorf("%w: U0 has %d entries for %d triplets", ErrInput, len(opt.U0), m)
	}
	var useWS bool
	switch opt.WorkingSet {
	case WorkingSetOff:
	case WorkingSetOn:
		useWS = true
	case WorkingSetAuto:
		useWS = m >= WorkingSetMinTriplets
	default:
		return nil, fmt.Errorf("%w: unknown working-set mode %d", ErrInput, int(opt.WorkingSet))
	}
	wo, ok := o.(WorkingSetOracle)
	if useWS && !ok {
		return nil, fmt.Errorf("%w: the working set needs a WorkingSetOracle (%d triplets): use WorkingSetOff", ErrInput, m)
	}
	sc, err := o.Norms()
	if err != nil {
		return nil, err
	}
	if len(sc) != m {
		return nil, fmt.Errorf("frob: oracle returned %d norms for %d triplets", len(sc), m)
	}
	if useWS {
		return learnWorkingSet(ctx, &oracleProblem{o: wo, n: n, d: d, m: m, sc: sc}, m, opt)
	}
	b := engine.Or(opt.Backend)
	ev := &metricEval{b: b, ext: o, n: n, d: d, cm: opt.C / float64(m), margin: make([]float64, m)}
	res, err := solveWhole(ctx, b, ev, sc, opt)
	if res != nil {
		res.FullEvaluations = res.Evaluations
	}
	return res, err
}

// oracleProblem is a working-set problem through a WorkingSetOracle.
type oracleProblem struct {
	o       WorkingSetOracle
	n, d, m int
	sc      []float64 // ‖A_r‖_F
}

func (p *oracleProblem) evaluator(b engine.Backend, cm float64) *metricEval {
	return &metricEval{b: b, ext: p.o, n: p.n, d: p.d, cm: cm, margin: make([]float64, p.m)}
}

func (p *oracleProblem) fixedTerm(_ *metricEval, inF []bool, cm float64) (*fixedPart, error) {
	w, n := heldWeights(inF, cm)
	if n == 0 {
		return nil, nil
	}
	b := mat.NewSymDense(p.d, nil)
	if err := p.o.Gram(b, w); err != nil {
		return nil, fmt.Errorf("frob: working set: %w", err)
	}
	return &fixedPart{B: b, Count: n}, nil
}

func (p *oracleProblem) restricted(ctx context.Context, inW []bool, u []float64, cm float64, opt MetricOptions, fixed *fixedPart, gapTol float64, maxIter int) (*MetricResult, error) {
	idx := workingIndex(inW)
	xs, sub, err := p.o.Restrict(idx)
	if err != nil {
		return nil, fmt.Errorf("frob: working set: %w", err)
	}
	so := restrictedOptions(opt, idx, u, cm, fixed, gapTol, maxIter)
	res, err := p.o.Once(func() (*MetricResult, error) { return learnWhole(ctx, xs, sub, so) })
	if res != nil {
		if len(res.U) != len(idx) {
			return nil, fmt.Errorf("frob: working set: %d multipliers for %d triplets", len(res.U), len(idx))
		}
		writeRestricted(u, inW, idx, res.U, cm, fixed != nil)
	}
	return res, err
}

func (p *oracleProblem) whole(ctx context.Context, opt MetricOptions) (*MetricResult, error) {
	b := engine.Or(opt.Backend)
	return solveWhole(ctx, b, p.evaluator(b, opt.C/float64(p.m)), p.sc, opt)
}

// evalExt is eval through the oracle.
func (e *metricEval) evalExt(u, grad []float64) (float64, error) {
	lam, vec, err := e.ext.Eval(u, e.margin)
	if err != nil {
		return 0, err
	}
	e.lam, e.vec = lam, vec
	e.half = 0
	for _, l := range e.lam {
		e.half += 0.5 * l * l
	}
	e.dualHalf = e.half
	e.sumU = 0
	for i, v := range u {
		e.sumU += v
		grad[i] = e.margin[i] - 1
	}
	return e.half - e.sumU, nil
}

// extHessian is the polish's Hessian callback through the oracle.
func (e *metricEval) extHessian(useJacobi bool) (func(out, v []float64) error, func([]float64), float64, error) {
	mu, q, err := e.ext.Eig()
	if err != nil {
		return nil, nil, 0, err
	}
	apply := func(out, v []float64) error {
		if err := e.extErr; err != nil {
			e.extErr = nil
			return err
		}
		return e.ext.HessVec(out, v, mu, q)
	}
	diag := func(d []float64) {
		if useJacobi {
			e.extErr = cmp.Or(e.extErr, e.ext.JacobiDiag(d, mu, q))
		}
	}
	return apply, diag, 1e-12 * math.Max(1, maxAbs(e.lam)), nil
}

// UseJacobi reports whether the Newton polish preconditions CG with the
// Jacobi diagonal for n points in dimension d, m triplets and the given
// number of distinct pairs: when the diagonal costs at most about a hundred
// evaluations.
func UseJacobi(n, d, m, pairs int) bool {
	return float64(m)*float64(d)*float64(d) <= 100*(float64(n)*float64(d)*float64(d)+float64(pairs)*float64(d))
}

// Part is one block of a FrobMetric problem's triplets with the rows they
// use, already normalised: the local computations an Oracle spreads over
// processes. Its methods are those of Learn's evaluation on that block, so
// the sums over the blocks of Gram and the concatenation of their margins
// are, to rounding, Learn's on the whole problem.
type Part struct {
	e *metricEval
}

// NewPart returns the part of the triplets ts on the rows x.
func NewPart(b engine.Backend, x *mat.Dense, ts *constraints.TripletSet) *Part {
	return &Part{e: newMetricEval(engine.Or(b), x, ts, 0)}
}

// Norms returns ‖A_r‖_F of the part's triplets.
func (p *Part) Norms() []float64 { return tripletNorms(p.e.x, p.e.ts) }

// Pairs returns the number of distinct pairs of the part's triplets.
func (p *Part) Pairs() int { return len(p.e.ts.Pairs) }

// Gram sets g to Σ_r u_r A_r over the part's triplets.
func (p *Part) Gram(g *mat.SymDense, u []float64) error {
	e := p.e
	graph, err := e.ts.GraphInto(e.graph, u)
	if err != nil {
		return fmt.Errorf("frob: %w", err)
	}
	e.graph = graph
	if err := e.b.WeightedGram(g, e.x, graph); err != nil {
		return fmt.Errorf("frob: weighted Gram: %w", err)
	}
	return nil
}

// Margins writes ⟨A_r, V diag(lam) Vᵀ⟩ for the part's triplets into
// margin (lam ≥ 0), as Learn's evaluation does: the pair distances in the
// embedding x·V diag(√λ).
func (p *Part) Margins(margin, lam []float64, vec *mat.Dense) error {
	_, _, err := p.e.primalAt(lam, vec, margin) // a part has no fixed set
	return err
}

// QuadMargins writes ⟨A_r, dx⟩ for the part's triplets into out.
func (p *Part) QuadMargins(out []float64, dx *mat.SymDense) error {
	e := p.e
	if err := e.b.PairQuadForms(e.pd, e.x, dx, e.ts.Pairs); err != nil {
		return fmt.Errorf("frob: pair quadratic forms: %w", err)
	}
	e.ts.Margins(out, e.pd)
	return nil
}

// JacobiDiag writes the diagonal of the generalised Hessian at (mu, q) for
// the part's triplets into diag.
func (p *Part) JacobiDiag(diag, mu []float64, q *mat.Dense) { p.e.jacobiDiag(diag, mu, q) }
