package npkl

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Loss selects the loss on the alignments T_ij K_ij.
type Loss int

const (
	// Linear is ℓ(f) = −f: one closed-form solve.
	Linear Loss = iota
	// SquaredHinge is ℓ(f) = max(0, 1 − f)²/2: the iterative saddle-point algorithm.
	SquaredHinge
)

// String returns the CLI name of the loss.
func (l Loss) String() string {
	switch l {
	case Linear:
		return "linear"
	case SquaredHinge:
		return "sqhinge"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss parses "linear" or "sqhinge" (also "squared-hinge", "shl", "ll").
func ParseLoss(s string) (Loss, error) {
	switch s {
	case "linear", "ll":
		return Linear, nil
	case "sqhinge", "squared-hinge", "squaredhinge", "shl":
		return SquaredHinge, nil
	}
	return 0, errs.Option(fmt.Errorf("npkl: unknown loss %q (want linear or sqhinge)", s))
}

// Eigensolver selects how the top eigenpairs of A_t are computed.
type Eigensolver int

const (
	// Auto, the default, is KrylovSchur on operators of dimension at least
	// AutoKrylovSchurDim and Lanczos below. On the first 1,000, 2,000,
	// 5,000 and 10,000 letters (100 eigenpairs, 10 squared-hinge
	// iterations) Krylov–Schur with its filter took 0.4, 0.6, 0.4 and 0.26
	// of ARPACK's time (docs/algorithms/simplenpkl.md); at 500
	// points the two were even. Below the threshold ARPACK stays: it is
	// the solver the distributed one (package distributed) matches bit for bit.
	Auto Eigensolver = iota
	// Lanczos is the backend's implicitly restarted Lanczos (ARPACK on the
	// native backend), from a random start at every iteration.
	Lanczos
	// Block is engine.BlockEigs (LOBPCG) with block operator products,
	// warm-started at every squared-hinge iteration after the first from
	// the previous iteration's Ritz subspace; the first solve is Lanczos.
	// Its tolerance is relative to ‖A‖: residuals ≤ EigTol·‖A‖.
	Block
	// Filtered is the backend's Lanczos on a Chebyshev filter of A,
	// degree filterDegree (8), as KrylovSchur filters its solves (see
	// there). Each Lanczos step then costs 8 products but one
	// reorthogonalisation, which dominates ARPACK's cost on large problems;
	// the gain did not outweigh the products on letters
	// (docs/algorithms/simplenpkl.md). Experimental.
	Filtered
	// KrylovSchur is engine.KrylovSchur, the block Krylov–Schur method
	// with block operator products and BLAS-3 orthogonalisation and
	// restarts, with ARPACK's test at EigTol. Every solve after the first
	// is filtered and warm: it runs on p(A) = T_6((A − c)/e), the Chebyshev
	// polynomial of degree 6 that stays in [−1, 1] on [λ_lo, cut] and grows
	// fast above it, starting from the previous solve's eigenvectors. The
	// cut is half the k-th Ritz value of A on the span of those vectors, a
	// lower bound of λ_k(A) however much A changed (Cauchy's interlacing),
	// and λ_lo an estimate of A's smallest eigenvalue (a short solve,
	// warm too). A filtered step costs six products, but the wanted
	// eigenvalues of p(A) are so well separated that Krylov–Schur needs
	// about a third of the basis vectors, and the orthogonalisation
	// against the basis, not the products, dominated the plain solves. The
	// returned Ritz values are Rayleigh quotients on A and every pair must
	// pass the test on A itself (residuals recomputed); a filtered solve
	// that fails it, or does not converge in 30 restarts, is redone plain.
	// On letters (100 eigenpairs, ten squared-hinge iterations) the filter
	// takes 0.7 of the plain solves' time (docs/algorithms/simplenpkl.md).
	KrylovSchur
)

// AutoKrylovSchurDim is the operator dimension from which Auto selects
// KrylovSchur.
const AutoKrylovSchurDim = 1000

// String returns the eigensolver's name.
func (e Eigensolver) String() string {
	switch e {
	case Auto:
		return "auto"
	case Lanczos:
		return "lanczos"
	case Block:
		return "block"
	case Filtered:
		return "filtered"
	case KrylovSchur:
		return "krylovschur"
	}
	return fmt.Sprintf("Eigensolver(%d)", int(e))
}

// ksBlock is KrylovSchur's block size (0: the engine's default); the
// letters scale test sets it.
var ksBlock int

// ksFilter makes KrylovSchur filter its solves after the first (see
// there); tests and measurements turn it off to compare.
var ksFilter = true

// filterDegree is Filtered's filter degree (ksFilterDegree KrylovSchur's)
// and filterCut the filter's cut as a fraction of the bound on λ_k
// (filter.go).
var (
	filterDegree = 8
	filterCut    = 0.5
)

// The defaults of Options, each defined once.
const (
	// DefaultB bounds the capacity tr(K²) (the paper's setting for the UCI sets).
	DefaultB = 1.0
	// DefaultC weighs the loss.
	DefaultC = 1.0
	// DefaultIters is the number of squared-hinge iterations.
	DefaultIters = 10
	// DefaultAlpha0 is the squared hinge's initial α (the paper's).
	DefaultAlpha0 = 1.0
)

// Options configures Learn. Zero values select the documented defaults.
type Options struct {
	Loss Loss
	// B bounds the capacity tr(K²) ≤ B (0: DefaultB).
	B float64
	// C weighs the loss (0: DefaultC).
	C float64
	// Iters is the number of squared-hinge iterations (0: DefaultIters).
	Iters int
	// Eta scales the squared-hinge step η_t = 2·Eta/(t+2), t = 1, 2, …
	// Default C, which makes α_t a weighted average of α⁰ and the best
	// responses C·max(0, 1 − T_ij K_ij) with weights growing like t: an
	// O(1/t) step as the paper asks, that forgets α⁰ = 1 within a few
	// iterations when C ≠ 1 (α⁰ keeps weight 2/((t+1)(t+2))).
	Eta float64
	// Alpha0 is the initial α of the squared-hinge algorithm (0: DefaultAlpha0).
	Alpha0 float64
	// Tol stops the squared-hinge iterations early when
	// ‖α_t − α_{t−1}‖∞ ≤ Tol·max(1, ‖α_t‖∞). Default 0: run Iters iterations.
	Tol float64
	// Rank is the first number of eigenpairs requested. Default: the Pataki
	// bound, the largest r with r(r+1)/2 ≤ m for m constraints (the paper's
	// choice). The positive rank is often far below it; a small Rank then
	// saves work, since the solver doubles the request until the positive
	// spectrum is covered.
	Rank int
	// MaxRank caps the number of eigenpairs (and so the rank of K). When the
	// positive spectrum of A is not covered within the cap, K is the best
	// rank-MaxRank approximation of the closed form and Result.Covered is
	// false. Default min(n−1, max(2·Rank, 64), 256).
	MaxRank int
	// EigTol is the relative accuracy of the Ritz values (engine EigsOptions.Tol).
	// Default 0: machine precision.
	EigTol float64
	// EarlyEigTol, when positive, is the eigensolver tolerance of the
	// squared-hinge iterations before the last: their kernels only feed a
	// gradient step on α of size η/(t+2), so they need not be computed to
	// EigTol. The last iteration (the returned kernel) always uses EigTol.
	// Ignored when Tol > 0 (any iteration may then be the last).
	// Default 0: EigTol throughout.
	EarlyEigTol float64
	// Eigensolver selects the eigensolver of the closed form. Default
	// Auto, which WithDefaults resolves by the number of points.
	Eigensolver Eigensolver
	// Seed fixes the eigensolver's random start vector.
	Seed uint64
	// Backend runs the eigensolver; nil means engine.Default().
	Backend engine.Backend
	// Progress, if non-nil, receives an event after every iteration (with
	// its objective).
	Progress progress.Func
}

// Iteration records one solve of the closed form.
type Iteration struct {
	// T is the iteration number, from 1.
	T int
	// Rank is the rank of K_t; Eigenpairs the number of eigenpairs computed last.
	Rank, Eigenpairs int
	// Covered reports whether the whole positive spectrum of A_t was computed.
	Covered bool
	// Objective is J(K_t, α_{t−1}) = min_K J(K, α_{t−1}), the saddle-point
	// objective (12); for the linear loss it is the objective of (6), −tr(A K*).
	Objective float64
	// Primal is the objective (9) at K_t: tr(L K_t) + C/2 Σ max(0, 1 − T_ij K_ij)².
	// For the linear loss it is tr(L K) − C Σ T_ij K_ij, equal to Objective.
	Primal float64
	// AlphaChange is ‖α_t − α_{t−1}‖∞ (squared hinge only).
	AlphaChange float64
	// OpApplies is the number of operator products of the iteration's solves.
	OpApplies int
	// Seconds is the wall time of the iteration.
	Seconds float64
}

// Result is a learned kernel K = V diag(λ) Vᵀ (eigenvalues λ positive and
// descending, V orthonormal) and a record of the run. The kernel model of a
// model file (model.Kernel) is made from V and Lambda above this package.
type Result struct {
	// V is the n×r factor of K (orthonormal columns), Lambda its r
	// eigenvalues, positive and descending.
	V      *mat.Dense
	Lambda []float64
	// Spectrum holds the eigenvalues of the last A computed by the eigensolver, descending;
	// when Covered it ends with the first non-positive one.
	Spectrum []float64
	// Covered reports whether the positive spectrum of the last A was covered
	// (false when the eigenpair cap was reached first).
	Covered bool
	// Alpha holds the final dual variables (squared hinge) or C for every constraint (linear).
	Alpha []float64
	// History has one entry per closed-form solve.
	History []Iteration
	// Iterations is len(History).
	Iterations int
	// EigIterations and OpApplies total the eigensolver's restarts and operator products.
	EigIterations, OpApplies int
	// Eigensolver is the eigensolver that ran (Auto resolved).
	Eigensolver Eigensolver
	// Seconds is the wall time of Learn.
	Seconds float64
}

// N returns the number of points of the kernel.
func (r *Result) N() int { n, _ := r.V.Dims(); return n }

// Rank returns r, the number of eigenpairs of K.
func (r *Result) Rank() int { return len(r.Lambda) }

// At returns K_ij = Σ_c λ_c V_ic V_jc.
func (r *Result) At(i, j int) float64 {
	vi, vj := r.V.RawRowView(i), r.V.RawRowView(j)
	var s float64
	for c, l := range r.Lambda {
		s += l * vi[c] * vj[c]
	}
	return s
}

// Factor returns F = V diag(√λ) (n×r), so K = F Fᵀ: the rows of F are the
// points in the kernel's feature space (kernel k-means is k-means on them).
func (r *Result) Factor() *mat.Dense {
	n, k := r.V.Dims()
	f := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		src, dst := r.V.RawRowView(i), f.RawRowView(i)
		for c, l := range r.Lambda {
			dst[c] = math.Sqrt(l) * src[c]
		}
	}
	return f
}

// Entries writes K_ab for every constraint into dst (len(dst) == pairs.Len()).
func (r *Result) Entries(dst []float64, pairs *constraints.Pairs) {
	sparse.ParallelRows(len(pairs.List), len(pairs.List)*r.Rank(), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			dst[c] = r.At(pairs.List[c].A, pairs.List[c].B)
		}
	})
}

// PatakiRank is the largest r with r(r+1)/2 ≤ m (at least 1).
func PatakiRank(m int) int {
	r := int((math.Sqrt(8*float64(m)+1) - 1) / 2)
	for r*(r+1)/2 > m {
		r--
	}
	for (r+1)*(r+2)/2 <= m {
		r++
	}
	return max(r, 1)
}

// ErrNoPositiveSpectrum is returned when A has no positive eigenvalue, so the
// optimal kernel is K = 0 (the loss weight C is too small against L).
var ErrNoPositiveSpectrum = errs.New("npkl: A has no positive eigenvalue (K* = 0); increase C", errs.ErrInvalid)

// Learn learns the kernel on the n points of the n×n normalised Laplacian lap
// (see Laplacian) from the constraints. It never forms an n×n matrix.
//
// The context is checked before every iteration and inside the eigensolver.
// On cancellation Learn returns the best iterate so far — the result of the
// iterations completed before it (the kernel of the last one, as at a normal
// end), or nil if none completed — and an error wrapping ctx.Err().
func Learn(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, opt Options) (*Result, error) {
	start := time.Now()
	if lap == nil || lap.Rows != lap.Cols || lap.Rows < 3 {
		return nil, fmt.Errorf("npkl: Learn: need a square Laplacian on at least 3 points")
	}
	n := lap.Rows
	if err := checkPairs(n, pairs); err != nil {
		return nil, err
	}
	m := pairs.Len()
	o, err := opt.WithDefaults(n, m)
	if err != nil {
		return nil, err
	}
	if o.Eigensolver != KrylovSchur {
		return learn(ctx, lap, pairs, o, start)
	}
	// Krylov–Schur's products gather x's rows at the graph's columns: in
	// the order data sets arrive those lie anywhere, and numbering the
	// points along the graph (Cuthill–McKee) keeps them in cache (on a
	// letters-sized graph, 1.0 ms per block product instead of 1.3 ms).
	// The solve runs on the renumbered problem and the kernel's rows are
	// put back; the Lanczos path keeps the given order, which the
	// distributed solver matches bit for bit.
	perm, err := sparse.CuthillMcKee(lap)
	if err != nil {
		return nil, fmt.Errorf("npkl: Learn: %w", err)
	}
	plap, err := sparse.PermuteSym(lap, perm)
	if err != nil {
		return nil, fmt.Errorf("npkl: Learn: %w", err)
	}
	inv := make([]int, n)
	for k, i := range perm {
		inv[i] = k
	}
	pp := &constraints.Pairs{N: n, List: make([]constraints.LabelledPair, m)}
	for c, q := range pairs.List {
		pp.List[c] = constraints.LabelledPair{A: inv[q.A], B: inv[q.B], Same: q.Same}
	}
	res, err := learn(ctx, plap, pp, o, start)
	if res != nil && res.V != nil {
		v := res.V
		back := mat.NewDense(v.RawMatrix().Rows, v.RawMatrix().Cols, nil)
		for k, i := range perm {
			back.SetRow(i, v.RawRowView(k))
		}
		res.V = back
	}
	return res, err
}

// learn is Learn on validated inputs and resolved options o.
func learn(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, o Options, start time.Time) (*Result, error) {
	n, m := lap.Rows, pairs.Len()
	tv := pairs.T()
	alpha := make([]float64, m)
	init := o.C
	if o.Loss == SquaredHinge {
		init = o.Alpha0
	}
	for c := range alpha {
		alpha[c] = init
	}
	op, err := NewOperator(lap, pairs, alpha)
	if err != nil {
		return nil, err
	}
	s := &solver{ctx: ctx, b: engine.Or(o.Backend), op: op, n: n, opt: o}
	res := &Result{Alpha: alpha, Eigensolver: o.Eigensolver}
	kij := make([]float64, m)
	iters := 1
	if o.Loss == SquaredHinge {
		iters = o.Iters
	}
	// cancelled returns the iterations completed so far with err.
	cancelled := func(err error) (*Result, error) {
		if res.V == nil {
			return nil, err
		}
		res.Iterations = len(res.History)
		res.Seconds = time.Since(start).Seconds()
		return res, err
	}
	for t := 1; t <= iters; t++ {
		t0 := time.Now()
		if err := ctx.Err(); err != nil {
			return cancelled(fmt.Errorf("npkl: Learn: %w", err))
		}
		if t > 1 {
			if err := op.SetWeights(alpha); err != nil {
				return nil, err
			}
		}
		s.tol = o.EigTol
		if o.EarlyEigTol > 0 && o.Tol == 0 && t < iters {
			s.tol = o.EarlyEigTol
		}
		sol, err := s.closedForm()
		if err != nil {
			err = fmt.Errorf("npkl: iteration %d: %w", t, err)
			if ctx.Err() != nil {
				return cancelled(err)
			}
			return nil, err
		}
		if err := checkFactor(sol.vectors, sol.values); err != nil {
			return nil, fmt.Errorf("npkl: iteration %d: %w", t, err)
		}
		res.V, res.Lambda = sol.vectors, sol.values
		res.Spectrum, res.Covered = sol.spectrum, sol.covered
		res.EigIterations += sol.eigIters
		res.OpApplies += sol.applies
		res.Entries(kij, pairs)
		// tr(A_t K_t) = √(B Σσ₊²); tr(L K_t) = Σ α T K_ij − tr(A_t K_t).
		trAK := sol.trAK
		var sumAlpha, sumAlpha2, align float64
		for c, a := range alpha {
			sumAlpha += a
			sumAlpha2 += a * a
			align += a * tv[c] * kij[c]
		}
		trLK := align - trAK
		it := Iteration{T: t, Rank: len(sol.values), Eigenpairs: sol.computed, Covered: sol.covered, OpApplies: sol.applies}
		if o.Loss == Linear {
			it.Objective = -trAK
			it.Primal = trLK - align
		} else {
			it.Objective = -trAK + sumAlpha - sumAlpha2/(2*o.C)
			var hinge float64
			for c := range tv {
				if h := 1 - tv[c]*kij[c]; h > 0 {
					hinge += h * h
				}
			}
			it.Primal = trLK + o.C/2*hinge
			eta := 2 * o.Eta / float64(t+2)
			var change float64
			for c, a := range alpha {
				g := 1 - tv[c]*kij[c] - a/o.C // ∂J/∂α_c
				na := max(a+eta*g, 0)
				change = max(change, math.Abs(na-a))
				alpha[c] = na
			}
			it.AlphaChange = change
		}
		it.Seconds = time.Since(t0).Seconds()
		res.History = append(res.History, it)
		if o.Progress != nil {
			o.Progress(progress.Event{Algorithm: "simplenpkl", Iteration: it.T, Objective: it.Objective, Gap: math.NaN(),
				Message: fmt.Sprintf("simplenpkl: iteration %d, rank %d, objective %.10g", it.T, it.Rank, it.Objective)})
		}
		if o.Loss == SquaredHinge && o.Tol > 0 && it.AlphaChange <= o.Tol*max(1, maxAbs(alpha)) {
			break
		}
	}
	res.Iterations = len(res.History)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// checkFactor refuses a kernel factor with a non-finite entry or
// eigenvalue (an eigensolver that broke down) or eigenvalues that do not
// match its columns.
func checkFactor(v *mat.Dense, lambda []float64) error {
	n, r := v.Dims()
	if len(lambda) != r {
		return fmt.Errorf("kernel factor is %d×%d with %d eigenvalues", n, r, len(lambda))
	}
	for _, l := range lambda {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("kernel eigenvalue %v, want positive and finite", l)
		}
	}
	raw := v.RawMatrix()
	for i := 0; i < n; i++ {
		for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+r] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("kernel factor entry (%d,%d) = %v", i, j, x)
			}
		}
	}
	return nil
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// WithDefaults returns the options with every zero value replaced by its
// documented default for n points and m constraints, or an error when one
// is invalid: the options Learn runs with (package distributed's
// solver takes them from here too).
func (o Options) WithDefaults(n, m int) (Options, error) {
	if o.Loss != Linear && o.Loss != SquaredHinge {
		return o, fmt.Errorf("npkl: unknown loss %v", o.Loss)
	}
	if o.B == 0 {
		o.B = DefaultB
	}
	if o.C == 0 {
		o.C = DefaultC
	}
	if !(o.B > 0) || math.IsInf(o.B, 0) || !(o.C > 0) || math.IsInf(o.C, 0) {
		return o, errs.Option(fmt.Errorf("npkl: B = %v and C = %v must be positive and finite", o.B, o.C))
	}
	if o.Iters == 0 {
		o.Iters = DefaultIters
	}
	if o.Eta == 0 {
		o.Eta = o.C
	}
	if o.Alpha0 == 0 {
		o.Alpha0 = DefaultAlpha0
	}
	switch o.Eigensolver {
	case Auto:
		o.Eigensolver = Lanczos
		if n >= AutoKrylovSchurDim {
			o.Eigensolver = KrylovSchur
		}
	case Lanczos, Block, Filtered, KrylovSchur:
	default:
		return o, fmt.Errorf("npkl: unknown eigensolver %d", int(o.Eigensolver))
	}
	if o.Iters < 0 || !(o.Eta > 0) || !(o.Alpha0 > 0) || o.Tol < 0 || o.EigTol < 0 || o.EarlyEigTol < 0 {
		return o, fmt.Errorf("npkl: invalid options: Iters=%d Eta=%v Alpha0=%v Tol=%v EigTol=%v", o.Iters, o.Eta, o.Alpha0, o.Tol, o.EigTol)
	}
	if o.Rank < 0 || o.MaxRank < 0 {
		return o, fmt.Errorf("npkl: invalid options: Rank=%d MaxRank=%d", o.Rank, o.MaxRank)
	}
	if o.Rank == 0 {
		o.Rank = PatakiRank(m)
	}
	if o.MaxRank == 0 {
		o.MaxRank = min(max(2*o.Rank, 64), 256)
	}
	o.MaxRank = min(o.MaxRank, n-1)
	o.Rank = min(o.Rank, o.MaxRank)
	return o, nil
}

// solver computes the closed form (8) for the current weights of op.
type solver struct {
	ctx context.Context
	b   engine.Backend
	op  *Operator
	n   int
	opt Options
	k   int        // eigenpairs to request next
	tol float64    // eigensolver tolerance of the current solve
	low *mat.Dense // the last estimate of A's smallest eigenvector (filters)
	sub *mat.Dense // the last solve's eigenvectors (Block: its Ritz subspace): the next solve's start and the filters' cut
}

type closedForm struct {
	values   []float64  // λ of K, descending
	vectors  *mat.Dense // n×r
	spectrum []float64  // computed eigenvalues of A, descending
	covered  bool
	computed int
	trAK     float64 // tr(A K*) = √(B Σσ₊²)
	eigIters int
	applies  int
}

// posTol is the threshold above which an eigenvalue of A counts as positive.
// ‖L‖ ≤ 2, so eigenvalues of A of size ~1e-12 are round-off around a true zero
// (for example the null vectors D^{1/2}1 of graph components no constraint touches).
const posTol = 1e-10

func (s *solver) closedForm() (closedForm, error) {
	var out closedForm
	k := s.k
	if k == 0 {
		k = s.opt.Rank
	}
	for {
		r, err := s.eigs(k)
		out.eigIters += r.Iterations
		out.applies += r.OpApplies
		if err != nil {
			return out, fmt.Errorf("eigensolver (%d eigenpairs, backend %s): %w", k, s.b.Name(), err)
		}
		if len(r.Values) != k {
			return out, fmt.Errorf("eigensolver returned %d of %d eigenpairs", len(r.Values), k)
		}
		// r.Values ascending: the smallest computed decides coverage.
		covered := r.Values[0] <= posTol
		if covered || k >= s.opt.MaxRank {
			out.covered = covered
			out.computed = k
			s.fill(&out, r)
			// The next solve (squared hinge) starts from the positive rank
			// just found plus a margin: A_t changes little between iterations,
			// and coverage is checked (and k doubled) again anyway.
			pos := len(out.values)
			s.k = min(max(pos+max(5, pos/4), 1), s.opt.MaxRank)
			if len(out.values) == 0 {
				return out, ErrNoPositiveSpectrum
			}
			return out, nil
		}
		k = min(2*k, s.opt.MaxRank)
	}
}

// eigs computes the k largest eigenpairs of A.
func (s *solver) eigs(k int) (engine.EigsResult, error) {
	if s.opt.Eigensolver == Block && s.sub != nil {
		bo := engine.BlockEigsOptions{Start: s.sub, Tol: max(s.tol, 1e-14), Seed: s.opt.Seed}
		r, err := engine.BlockEigs(s.ctx, s.b, s.op, k, engine.LargestAlgebraic, bo)
		if err == nil {
			s.sub = r.Subspace
		}
		return r.EigsResult, err
	}
	var r, wasted engine.EigsResult
	var err error
	if s.opt.Eigensolver == Filtered || (s.opt.Eigensolver == KrylovSchur && ksFilter) {
		var ok bool
		r, ok, err = s.filtered(k)
		switch {
		case err != nil:
			return r, err
		case ok:
			s.sub = r.Vectors
			return r, nil
		}
		wasted = r
	}
	if s.opt.Eigensolver == KrylovSchur {
		// Warm: the previous iteration's eigenvectors seed the start.
		ko := engine.KrylovSchurOptions{Tol: s.tol, Seed: s.opt.Seed, Block: ksBlock, Start: s.sub}
		r, err = engine.KrylovSchur(s.ctx, s.b, s.op, k, engine.LargestAlgebraic, ko)
	} else {
		eo := engine.EigsOptions{Tol: s.tol, Seed: s.opt.Seed}
		r, err = s.b.Eigs(s.ctx, s.op, k, engine.LargestAlgebraic, eo)
	}
	r.OpApplies += wasted.OpApplies
	r.Iterations += wasted.Iterations
	if err == nil {
		s.sub = r.Vectors
	}
	return r, err
}

// fill extracts the positive part of r and scales it by Proposition 1.
func (s *solver) fill(out *closedForm, r engine.EigsResult) {
	out.spectrum, out.values, out.trAK = ClosedForm(r.Values, s.opt.B)
	out.vectors = TopVectors(r.Vectors, len(out.values))
}

// ClosedForm applies Proposition 1 to k eigenvalues of A given in
// ascending order (as the eigensolvers return them): it returns the
// spectrum in descending order, the eigenvalues of K (the positive ones,
// scaled so that tr(K²) = B; none when no eigenvalue exceeds 10⁻¹⁰) and
// tr(A K) = √(B Σσ₊²). The distributed solver (package distributed) shares it.
func ClosedForm(ascending []float64, b float64) (spectrum, values []float64, trAK float64) {
	k := len(ascending)
	spectrum = make([]float64, k)
	for i, v := range ascending {
		spectrum[k-1-i] = v
	}
	var p int
	var ss float64
	for _, v := range spectrum {
		if v <= posTol {
			break
		}
		p++
		ss += v * v
	}
	if p == 0 {
		return spectrum, nil, 0
	}
	scale := math.Sqrt(b / ss)
	values = make([]float64, p)
	for l := range values {
		values[l] = scale * spectrum[l]
	}
	return spectrum, values, math.Sqrt(b * ss)
}

// TopVectors returns the last p columns of vecs (eigenvectors in ascending
// order of their eigenvalues) in reverse order: the eigenvectors of the p
// largest, descending. nil when p is 0.
func TopVectors(vecs *mat.Dense, p int) *mat.Dense {
	if p == 0 {
		return nil
	}
	n, k := vecs.Dims()
	v := mat.NewDense(n, p, nil)
	dst, src := v.RawMatrix(), vecs.RawMatrix()
	for i := 0; i < n; i++ {
		d := dst.Data[i*dst.Stride : i*dst.Stride+p]
		row := src.Data[i*src.Stride : i*src.Stride+k]
		for l := range d {
			d[l] = row[k-1-l]
		}
	}
	return v
}
