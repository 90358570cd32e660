package psdlearn

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/itml"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// BoostMetric is the boosting metric learner of Shen et al. (JMLR 2012):
// exponential or logistic loss on the triplets' margins, rank-one updates.
// It has no C. (The hinge loss is PSDBoost.)
type BoostMetric struct {
	Common
	// Loss is boost.Exp (the zero value) or boost.Logistic.
	Loss boost.Loss
	// Mode is boost.Stagewise (the zero value) or boost.Corrective.
	Mode boost.Mode
	// Precision is the arithmetic of the weighted Gram (the zero value,
	// boost.PrecisionAuto, chooses; see boost.Precision).
	Precision boost.Precision
	// Passes is the number of passes of multi-pass BoostMetric (0 or 1:
	// one); later passes regenerate the triplets from the labels in the
	// learned metric, so they need labelled input.
	Passes int
	// Iters bounds the number of rank-one terms (of each pass). Zero
	// follows the data when there are validation rows: the validation
	// k-NN error chooses the number of terms of each pass (see
	// BoostFirstCheck). Otherwise zero selects DefaultBoostIters.
	Iters int
	// Nu is the trace regulariser ν relative to the data's scale (0:
	// boost.DefaultNu).
	Nu float64
}

// PSDBoost is the column-generation SDP learner of Shen et al. (NIPS 2008):
// hinge loss, trace-one metric, certified by λmax − π.
type PSDBoost struct {
	Common
	// C lists the average-hinge weights to choose among (nil:
	// DefaultPSDBoostC, that is 2, 5, 10 and 20: about half, a fifth, a
	// tenth and a twentieth of the triplets may violate the margin). Every
	// value must be at least 1.
	C []float64
	// Iters bounds the column-generation iterations (0: DefaultPSDBoostIters).
	Iters int
}

// FrobMetric is the Frobenius-regularised learner of Shen et al. ("A
// scalable dual approach"): min ‖M‖²/2 + C·(1/m)Σ ξ_r over M ⪰ 0, solved in
// the dual and certified by the duality gap.
type FrobMetric struct {
	Common
	// C lists the values to choose among. Nil follows the data: Run
	// starts from DefaultFrobMetricC joined with its multiple for the
	// spread of the feature scales when standardising the features lowers
	// the Euclidean validation error, and (without Common.Grid) extends it
	// beyond an edge where the validation optimum sits (AdaptiveGrid).
	// Several values are solved to frob.SelectGapTol while they are
	// compared, and the chosen one, on a validation set, to the
	// certificate from its candidate's dual point.
	C []float64
	// Iters bounds the L-BFGS-B iterations (and Newton polish steps) of
	// each solve (0: frob.DefaultMaxIter).
	Iters int
	// WorkingSet is the working-set strategy (the zero value,
	// frob.WorkingSetAuto, uses it from frob.WorkingSetMinTriplets triplets).
	WorkingSet frob.WorkingSetMode
}

// ITML is Information-Theoretic Metric Learning (Davis, Kulis, Jain, Sra
// and Dhillon, ICML 2007): the metric closest to the prior I/τ (τ the mean
// feature variance of the preprocessed rows, so I after standardisation)
// in the LogDet divergence under similar / dissimilar pair constraints
// with slack, solved by cyclic Bregman projections (see package
// algos/itml).
//
// Gamma plays the part of C in this package: the weight of the average
// slack divergence, dimensionless; the paper's γ is Gamma/m for m
// constraints. Several values are chosen among like C.
//
// From labels (Fit) the constraints are itml.LabelPairs of the
// preprocessed rows: 20·c² similar and 20·c² dissimilar pairs for c
// classes, drawn with Seed; the bounds u and l are the 5th and 95th
// percentiles of their squared distances under the prior. From pairs
// (FitPairs) they are the given pairs; from triplets (I, J, K), the
// similar pairs (I, J) and dissimilar (I, K).
type ITML struct {
	Common
	// Gamma lists the trade-offs to choose among (nil: DefaultITMLGamma).
	Gamma []float64
	// Iters bounds the cycles over the constraints (0: itml.DefaultMaxIter).
	Iters int
}

// LMNN is Large Margin Nearest Neighbor metric learning (Weinberger & Saul,
// JMLR 2009): pull every point's K target neighbours (nearest same-class
// points) close and push differently-labelled impostors out of a unit margin
// around them, (1−μ)·pull + μ·hinge, by projected subgradient descent on M
// (algos/lmnn). The margin is in units of the mean squared target distance,
// so the learned metric scales as 1/s² with the data. LMNN has no C and
// learns from labels only.
type LMNN struct {
	Common
	// Mu is the push weight μ in (0, 1] (0: lmnn.DefaultMu, 0.5).
	Mu float64
	// Iters bounds the descent's iterations (0: lmnn.DefaultMaxIter).
	Iters int
	// Rank, if > 0, learns M = L Lᵀ with a D×Rank factor L by gradient
	// steps on L, started from the top principal axes (1 ≤ Rank ≤ D, D the
	// dimension after Common's preprocessing); 0 learns the full-rank M.
	Rank int
}

// Name returns "boostmetric".
func (BoostMetric) Name() string { return "boostmetric" }

// Name returns "psdboost".
func (PSDBoost) Name() string { return "psdboost" }

// Name returns "frobmetric".
func (FrobMetric) Name() string { return "frobmetric" }

// Name returns "itml".
func (ITML) Name() string { return "itml" }

// Name returns "lmnn".
func (LMNN) Name() string { return "lmnn" }

// Candidates returns nil: BoostMetric has no C.
func (BoostMetric) Candidates() []float64 { return nil }

// Candidates returns C, or DefaultPSDBoostC.
func (e PSDBoost) Candidates() []float64 { return orDefault(e.C, DefaultPSDBoostC) }

// Candidates returns C, or DefaultFrobMetricC (which Run makes follow the
// data, see FrobMetric.C).
func (e FrobMetric) Candidates() []float64 { return orDefault(e.C, DefaultFrobMetricC) }

// Candidates returns Gamma, or DefaultITMLGamma.
func (e ITML) Candidates() []float64 { return orDefault(e.Gamma, DefaultITMLGamma) }

// Candidates returns nil: LMNN has no C.
func (LMNN) Candidates() []float64 { return nil }

func orDefault(v, def []float64) []float64 {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return slices.Clone(v)
}

// Fit learns a metric from the labelled rows of x (see Run).
func (e BoostMetric) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Y: y})
}

// FitTriplets learns a metric from triplets on the rows of x (indices into
// x; the rows are preprocessed, the triplets kept).
func (e BoostMetric) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Triplets: ts})
}

// Fit learns a metric from the labelled rows of x (see Run).
func (e PSDBoost) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Y: y})
}

// FitTriplets learns a metric from triplets on the rows of x; several C
// are chosen among on held-out triplets (Common.HoldOut).
func (e PSDBoost) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Triplets: ts})
}

// Fit learns a metric from the labelled rows of x (see Run).
func (e FrobMetric) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Y: y})
}

// FitTriplets learns a metric from triplets on the rows of x; several C
// are chosen among on held-out triplets (Common.HoldOut).
func (e FrobMetric) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Triplets: ts})
}

// Fit learns a metric from the labelled rows of x (see Run).
func (e ITML) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Y: y})
}

// FitPairs learns a metric from pair constraints on the rows of x
// (pairs.List[r].Same: similar, else dissimilar), after the preprocessing
// of Common; several Gamma are chosen among on held-out pairs.
func (e ITML) FitPairs(ctx context.Context, x *mat.Dense, pairs *constraints.Pairs) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Pairs: pairs})
}

// Fit learns a metric from the labelled rows of x (see Run).
func (e LMNN) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fitModel(ctx, e, Data{X: x, Y: y})
}

// fitModel runs the pipeline and returns its model (nil when it has none).
func fitModel(ctx context.Context, l Learner, d Data) (*model.Model, error) {
	r, err := Run(ctx, l, d)
	if r == nil {
		return nil, err
	}
	return r.Model, err
}

// boostSolver runs BoostMetric (no C).
type boostSolver struct {
	e BoostMetric
	p *Problem
}

// NewSolver returns BoostMetric's solver on p.
func (e BoostMetric) NewSolver(p *Problem) (Solver, error) {
	if e.Loss == boost.Hinge {
		return nil, fmt.Errorf("%w: the hinge loss is PSDBoost", ErrInvalid)
	}
	if e.Iters < 0 || e.Passes < 0 {
		return nil, optionf("Iters = %d, Passes = %d: want ≥ 0", e.Iters, e.Passes)
	}
	if e.Passes > 1 && p.Y == nil {
		return nil, fmt.Errorf("%w: multi-pass BoostMetric regenerates triplets from labels; it cannot learn from given constraints", ErrInvalid)
	}
	if math.IsNaN(e.Nu) || e.Nu < 0 || math.IsInf(e.Nu, 0) {
		return nil, optionf("Nu = %v, want a finite value ≥ 0", e.Nu)
	}
	return &boostSolver{e: e, p: p}, nil
}

func (s *boostSolver) Solve(ctx context.Context, _ float64) (*Solution, error) {
	e, p := s.e, s.p
	opt := boost.Options{Loss: e.Loss, Mode: e.Mode, Precision: e.Precision, Iters: e.Iters, Nu: e.Nu, Backend: p.Backend, Seed: p.Seed}
	opt.Progress = progress.Prefix(p.Progress, fmt.Sprintf("boostmetric %s/%s: ", opt.Loss, opt.Mode))
	var tc *termChooser
	if e.Iters == 0 && p.ValX != nil && len(p.ValY) > 0 {
		tc = newTermChooser(p)
		opt.Monitor = tc
		if e.Mode == boost.Stagewise {
			opt.Extend = tc.extend
		}
	}
	var (
		res *boost.Result
		err error
	)
	switch {
	case e.Passes > 1:
		res, err = boost.MultiPass(ctx, p.X, p.Y, p.K, e.Passes, p.Triplets, opt)
	case p.Dist != nil:
		res, err = p.Dist.BoostMetric(ctx, p.X, p.Triplets, opt)
	default:
		res, err = boost.BoostMetric(ctx, p.X, p.Triplets, opt)
	}
	if res == nil {
		return nil, err
	}
	sol := boostSolution(res, p.X)
	if tc != nil {
		switch note := tc.note(); {
		case res.Stop == boost.StopMonitor:
			sol.Converged, sol.Reason = true, "validation error stopped falling: "+note
		case note != "":
			sol.Reason += "; " + note
		}
	}
	sol.Summary = fmt.Sprintf("boostmetric %s/%s: %d terms, stopped: %s, objective %.10g", opt.Loss, opt.Mode, len(res.W), sol.Reason, res.Objective)
	return sol, err
}

// boostSolution is the Solution of a BoostMetric or PSDBoost result.
func boostSolution(res *boost.Result, x *mat.Dense) *Solution {
	_, d := x.Dims()
	sol := &Solution{
		M: res.Matrix(d), Iterations: res.Iterations, Objective: res.Objective, Curve: res.Curve,
		DualityGap: math.NaN(), GapTol: math.NaN(), SingleIterations: res.SingleIterations,
		Converged: res.Stop == boost.StopConverged || res.Stop == boost.StopUnbounded, Reason: res.Stop.String(),
	}
	if !math.IsNaN(res.DualityGap) {
		sol.DualityGap = res.DualityGap
	}
	return sol
}

// psdSolver runs PSDBoost for one C at a time.
type psdSolver struct {
	e PSDBoost
	p *Problem
}

// NewSolver returns PSDBoost's solver on p.
func (e PSDBoost) NewSolver(p *Problem) (Solver, error) {
	if e.Iters < 0 {
		return nil, optionf("Iters = %d, want ≥ 0", e.Iters)
	}
	return &psdSolver{e: e, p: p}, nil
}

func (s *psdSolver) Solve(ctx context.Context, c float64) (*Solution, error) {
	p := s.p
	// C/m is the LP's weight on each slack, which must be at least 1/m.
	if !(c >= 1) || math.IsInf(c, 0) {
		return nil, errs.Option(fmt.Errorf("%w: C = %g: want C ≥ 1 (the per-triplet slack weight C/m below 1/m leaves the LP unbounded)", ErrInvalid, c))
	}
	m := float64(p.Triplets.Len())
	if c/m > boost.MaxC {
		return nil, fmt.Errorf("%w: C = %g: the per-triplet slack weight C/m = %g exceeds the largest value the LP solvers accept, %g (boost.MaxC)", ErrInvalid, c, c/m, float64(boost.MaxC))
	}
	opt := boost.Options{Loss: boost.Hinge, Iters: s.e.Iters, C: c / m, Backend: p.Backend, Seed: p.Seed}
	opt.Progress = progress.Prefix(p.Progress, fmt.Sprintf("psdboost C=%.4g: ", c))
	res, err := boost.PSDBoost(ctx, p.X, p.Triplets, opt)
	if res == nil {
		return nil, err
	}
	sol := boostSolution(res, p.X)
	sol.Objective = res.Pi
	sol.Summary = fmt.Sprintf("psdboost C=%g: %d iterations (%s), π %.10g, LP duality gap %.3g, λmax − π %.3g", c, res.Iterations, res.Stop, res.Pi, res.DualityGap, res.SDPGap)
	if !sol.Converged {
		sol.Reason = fmt.Sprintf("%s, λmax − π = %.3g", res.Stop, res.SDPGap)
	}
	return sol, err
}

// frobSolver runs FrobMetric, each C warm-started from the previous one's
// dual solution scaled into its box.
type frobSolver struct {
	e     FrobMetric
	p     *Problem
	prev  []float64
	prevC float64
	// duals holds the dual point of every candidate screened, by C, for
	// Refine.
	duals map[float64][]float64
	// prepared is the one-process problem of a model selection, prepared
	// at its first candidate (Screen), shared by the next and released by
	// Refine, its last solve, so that its copy of the data does not outlive
	// the selection (frob.Problem).
	prepared *frob.Problem
}

// NewSolver returns FrobMetric's solver on p.
func (e FrobMetric) NewSolver(p *Problem) (Solver, error) {
	if e.Iters < 0 {
		return nil, optionf("Iters = %d, want ≥ 0", e.Iters)
	}
	return &frobSolver{e: e, p: p}, nil
}

// Solve learns with c to the certificate, warm-started from the previous
// C's dual point.
func (s *frobSolver) Solve(ctx context.Context, c float64) (*Solution, error) {
	return s.learn(ctx, c, s.options(c), "")
}

// Screen learns with c as a candidate of a model selection: to
// frob.SelectGapTol (times C below C = 1), in at most frob.SelectMaxIter iterations (fewer
// under Iters), warm-started from the previous C's dual point. A
// candidate that Iters stopped short of that tolerance is warned about.
func (s *frobSolver) Screen(ctx context.Context, c float64) (*Solution, error) {
	opt := s.options(c)
	// The gap is relative to max(1, |primal|) and the primal is at most C:
	// below C = 1 the tolerance shrinks with C, so that a small C is
	// screened to the same share of its objective (and is still above the
	// tolerance, see frob.Learn), never looser than the certificate's.
	opt.GapTol = max(frob.DefaultGapTol, frob.SelectGapTol*min(1, c))
	opt.MaxIter = min(cmp.Or(s.e.Iters, frob.SelectMaxIter), frob.SelectMaxIter)
	if s.prepared == nil && s.p.Dist == nil {
		var err error
		if s.prepared, err = frob.NewProblem(s.p.X, s.p.Triplets); err != nil {
			return nil, err
		}
	}
	sol, err := s.learn(ctx, c, opt, "")
	if sol != nil && !sol.Converged && s.e.Iters > 0 && s.e.Iters < frob.SelectMaxIter {
		sol.Warnings = append(sol.Warnings, fmt.Sprintf("frobmetric C=%g: candidate not solved to the selection tolerance (%s): relative duality gap %.3g above %.3g after %d iterations (the iteration limit)",
			c, sol.Reason, sol.DualityGap, sol.GapTol, sol.Iterations))
	}
	return sol, err
}

// Refine learns with c to the certificate from the dual point of c's
// candidate (Screen), or as Solve without one.
func (s *frobSolver) Refine(ctx context.Context, c float64) (*Solution, error) {
	opt := s.options(c)
	if u, ok := s.duals[c]; ok {
		opt.U0 = u
	}
	defer func() { s.prepared = nil }()
	return s.learn(ctx, c, opt, "chosen ")
}

// options are the options of a solve with c to the certificate,
// warm-started from the previous C's dual point.
func (s *frobSolver) options(c float64) frob.MetricOptions {
	p := s.p
	opt := frob.MetricOptions{C: c, MaxIter: s.e.Iters, WorkingSet: s.e.WorkingSet, Backend: p.Backend, Progress: p.Progress}
	if s.e.Iters > 0 {
		// The limit bounds the Newton polish too, not only L-BFGS-B.
		opt.NewtonSteps = min(frob.DefaultNewtonSteps, s.e.Iters)
	}
	if s.prev != nil {
		opt.U0 = make([]float64, len(s.prev))
		for i, v := range s.prev {
			opt.U0[i] = v * c / s.prevC
		}
	}
	return opt
}

// learn runs frob.Learn with opt and keeps its dual point.
func (s *frobSolver) learn(ctx context.Context, c float64, opt frob.MetricOptions, what string) (*Solution, error) {
	var (
		res *frob.MetricResult
		err error
	)
	if s.p.Dist != nil {
		res, err = s.p.Dist.FrobMetric(ctx, s.p.X, s.p.Triplets, opt)
	} else if s.prepared != nil {
		res, err = s.prepared.Learn(ctx, opt)
	} else {
		res, err = frob.Learn(ctx, s.p.X, s.p.Triplets, opt)
	}
	if res == nil {
		return nil, err
	}
	if err == nil {
		s.prev, s.prevC = res.U, c
		if s.duals == nil {
			s.duals = map[float64][]float64{}
		}
		s.duals[c] = res.U
	}
	return &Solution{
		M: res.M, Iterations: res.Iterations, Objective: res.Primal, DualityGap: res.RelGap, GapTol: cmp.Or(opt.GapTol, frob.DefaultGapTol),
		Converged: res.Certified, Reason: res.Reason, Curve: res.Curve,
		Summary: fmt.Sprintf("frobmetric %sC=%g: %d iterations, primal %.8g, rel. duality gap %.3g (%s)", what, c, res.Iterations, res.Primal, res.RelGap, res.Reason),
	}, err
}

// itmlSolver runs ITML on the problem's pairs: the given ones, else pairs
// sampled from the labels, else the pairs of the triplets.
type itmlSolver struct {
	e     ITML
	p     *Problem
	pairs *constraints.Pairs
}

// NewSolver returns ITML's solver on p.
func (e ITML) NewSolver(p *Problem) (Solver, error) {
	if e.Iters < 0 {
		return nil, optionf("Iters = %d, want ≥ 0", e.Iters)
	}
	s := &itmlSolver{e: e, p: p, pairs: p.Pairs}
	var err error
	switch {
	case s.pairs != nil:
	case p.Y != nil && p.Classes >= 2:
		s.pairs, err = itml.LabelPairs(p.Y, 0, p.Seed)
	case p.Triplets != nil && p.Triplets.Len() > 0:
		s.pairs, err = itml.TripletPairs(p.Triplets)
	default:
		err = fmt.Errorf("%w: itml needs labels of two classes or more, pairs or triplets", ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *itmlSolver) Solve(ctx context.Context, g float64) (*Solution, error) {
	if !(g > 0) {
		return nil, optionf("Gamma = %v, want > 0", g)
	}
	res, err := itml.Learn(ctx, s.p.X, s.pairs, itml.Options{Gamma: g, MaxIter: s.e.Iters, Backend: s.p.Backend, Progress: s.p.Progress})
	if res == nil || res.M == nil {
		return nil, err
	}
	return &Solution{
		M: res.M, Iterations: res.Iterations, Objective: math.NaN(), DualityGap: math.NaN(), GapTol: math.NaN(),
		Converged: res.Converged, Reason: res.Reason, Curve: res.Curve,
		Summary: fmt.Sprintf("itml γ=%g: %d cycles, %d constraints (u = %.4g, l = %.4g, paper γ = %.4g, %d skipped), %s",
			g, res.Iterations, s.pairs.Len(), res.U, res.L, res.PaperGamma, res.Skipped, res.Reason),
	}, err
}

// lmnnSolver runs LMNN (no C).
type lmnnSolver struct {
	e LMNN
	p *Problem
}

// NewSolver returns LMNN's solver on p: it needs labels.
func (e LMNN) NewSolver(p *Problem) (Solver, error) {
	if math.IsNaN(e.Mu) || e.Mu < 0 || e.Mu > 1 {
		return nil, optionf("Mu = %v, want a value in (0, 1] (0 for the default %g)", e.Mu, lmnn.DefaultMu)
	}
	if e.Iters < 0 {
		return nil, optionf("Iters = %d, want ≥ 0", e.Iters)
	}
	if p.Y == nil {
		return nil, fmt.Errorf("%w: lmnn learns from class labels (impostors are differently-labelled points), not from given constraints", ErrInvalid)
	}
	if _, d := p.X.Dims(); e.Rank < 0 || e.Rank > d {
		return nil, fmt.Errorf("%w: Rank = %d, want 1 ≤ Rank ≤ %d (the dimension after preprocessing), or 0 for the full-rank M", ErrInvalid, e.Rank, d)
	}
	return &lmnnSolver{e: e, p: p}, nil
}

func (s *lmnnSolver) Solve(ctx context.Context, _ float64) (*Solution, error) {
	p := s.p
	mu := s.e.Mu
	if mu == 0 {
		mu = lmnn.DefaultMu
	}
	opt := lmnn.Options{Mu: mu, MaxIter: s.e.Iters, Rank: s.e.Rank, Backend: p.Backend, Progress: p.Progress}
	var res *lmnn.Result
	var err error
	if d, ok := p.Dist.(LMNNDistributor); ok {
		res, err = d.LMNN(ctx, p.X, p.Y, p.Triplets, opt)
	} else {
		res, err = lmnn.Learn(ctx, p.X, p.Y, p.Triplets, opt)
	}
	if res == nil {
		return nil, err
	}
	sol := &Solution{
		M: res.M, Iterations: res.Iterations, Objective: res.Objective, DualityGap: math.NaN(), GapTol: math.NaN(),
		Converged: res.Converged, Reason: res.Reason, Curve: res.Curve,
		Summary: fmt.Sprintf("lmnn μ=%g: %d iterations, objective %.8g, %s", mu, res.Iterations, res.Objective, res.Reason),
	}
	if res.Truncated > 0 {
		sol.Warnings = append(sol.Warnings, fmt.Sprintf("lmnn: the last impostor search was cut at %d neighbours for %d of %d points: impostors beyond them were not seen",
			lmnn.DefaultCandidates, res.Truncated, p.X.RawMatrix().Rows))
	}
	return sol, err
}

// options are the effective settings of the learner for the model file.
func (e BoostMetric) options() map[string]any {
	return map[string]any{"loss": e.Loss.String(), "mode": e.Mode.String(), "precision": e.Precision.String(),
		"passes": max(e.Passes, 1), "iters": cmp.Or(e.Iters, DefaultBoostIters), "nu": e.Nu}
}

func (e PSDBoost) options() map[string]any {
	return map[string]any{"loss": boost.Hinge.String(), "iters": cmp.Or(e.Iters, DefaultPSDBoostIters)}
}

func (e FrobMetric) options() map[string]any {
	return map[string]any{"iters": cmp.Or(e.Iters, frob.DefaultMaxIter), "working_set": e.WorkingSet.String()}
}

func (e ITML) options() map[string]any {
	return map[string]any{"iters": cmp.Or(e.Iters, itml.DefaultMaxIter)}
}

func (e LMNN) options() map[string]any {
	return map[string]any{"mu": cmp.Or(e.Mu, lmnn.DefaultMu), "iters": cmp.Or(e.Iters, lmnn.DefaultMaxIter), "rank": e.Rank}
}
