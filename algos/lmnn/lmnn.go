// Package lmnn implements Large Margin Nearest Neighbor metric learning
// (Weinberger & Saul, "Distance Metric Learning for Large Margin Nearest
// Neighbor Classification", JMLR 10, 2009):
//
//	min_{M ⪰ 0}  (1−μ) Σ_{i, j⇝i} d_M(x_i,x_j)
//	           + μ Σ_{i, j⇝i, l: y_l ≠ y_i} [1 + d_M(x_i,x_j) − d_M(x_i,x_l)]_+
//
// solved by projected subgradient descent on M with the paper's adaptive
// step (×1.01 after an accepted step, halved and rejected after an increase).
// With Options.Rank = r the same objective is minimised over M = L Lᵀ with a
// D×r factor L, by (sub)gradient steps on L (∇_L = 2·G·L), started from the
// top r principal axes of the data: no eigendecomposition per step, and a
// metric of rank at most r.
//
// The subgradient G = (1−μ) Σ C_ij + μ Σ_active (C_ij − C_il), with
// C_ab = (x_a−x_b)(x_a−x_b)ᵀ, is never formed triplet by triplet: it is
// Xᵀ L_W X for a signed pair graph W (weight (1−μ) + μ·#active triplets on a
// target pair, −μ·#active triplets on an impostor pair), one
// engine.Backend.WeightedGram per accepted step. See docs/algorithms/lmnn.md.
package lmnn

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// ErrInput is wrapped by errors about invalid data or options.
var ErrInput = errs.New("lmnn: invalid input", errs.ErrInvalid)

// Defaults of Options.
const (
	DefaultMu           = 0.5
	DefaultMaxIter      = 1000
	DefaultTol          = 1e-5
	DefaultRefreshEvery = 10
	DefaultK            = 3
	// DefaultCandidates is the number of nearest neighbours (in the
	// current metric, any class) searched per point at an impostor
	// refresh; the differently-labelled ones within the target radius plus
	// the margin become the point's impostor candidates.
	DefaultCandidates = 40
)

// Options configure Learn. Zero values select the defaults.
type Options struct {
	// Mu weighs the push (hinge) term against the pull term, in (0, 1]
	// (0: DefaultMu, 0.5).
	Mu float64
	// K is the number of target neighbours per point when Learn builds
	// them itself (targets nil; 0: 3).
	K int
	// MaxIter bounds the iterations, accepted or rejected (0: 1000).
	MaxIter int
	// Tol stops the descent when an accepted step changes the objective by
	// less than Tol relative to it, and a final impostor refresh finds no
	// new active triplet (0: 1e-5).
	Tol float64
	// RefreshEvery is the number of iterations between impostor refreshes
	// (0: 10).
	RefreshEvery int
	// Candidates bounds the neighbours searched per point at a refresh
	// (0: DefaultCandidates; it is capped at n−1).
	Candidates int
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if non-nil, receives one event per refresh.
	Progress progress.Func
	// Rank selects the parametrisation. 0: the full D×D matrix M with a
	// projection onto the PSD cone after every step (an O(D³)
	// eigendecomposition). r in [1, D]: M = L Lᵀ for a D×r factor L, updated
	// by gradient steps L ← L − α·2·G·L (G the D×D subgradient in M), no
	// projection; the metric has rank at most r. L starts from the top r
	// principal axes of the (normalised) data, orthonormal, so that M₀ is
	// the full-rank start I restricted to those axes. See
	// docs/algorithms/lmnn.md, "Low rank".
	Rank int
	// Split, if set, spreads the run over the processes of a job (see
	// Splitter); every process gets the same Result.
	Split Splitter
}

// Result is a learned metric with a summary of the solve.
type Result struct {
	// M is the learned PSD matrix in the units of the input rows.
	M *mat.SymDense
	// L is a D×r factor of M (M = L Lᵀ): with Options.Rank = 0, r is the
	// numerical rank of M (the projection's kept eigenvalues); with
	// Options.Rank = r > 0, L is the optimised factor itself (the transpose
	// of the r×D map x ↦ Lᵀx of the low-rank objective), of r columns
	// whatever M's numerical rank.
	L *mat.Dense
	// Iterations counts the iterations run, accepted or rejected.
	Iterations int
	// Objective is the LMNN objective of M on the data divided by
	// √Scale (the units the margin 1 is in).
	Objective float64
	// Curve is the objective after every accepted step.
	Curve []float64
	// Converged reports that the stopping rule was met (see Options.Tol).
	Converged bool
	// Reason says why the solve stopped.
	Reason string
	// Scale is the normalisation factor: the mean squared Euclidean
	// distance of the target pairs. The margin 1 is in units of Scale.
	Scale float64
	// Active is the number of active triplets (positive hinge) at M.
	Active int
	// Candidates is the number of impostor candidate pairs of the last refresh.
	Candidates int
	// Truncated counts the points whose candidate search at the last
	// refresh was cut by Options.Candidates (some impostor within the
	// target radius plus margin may have been missed).
	Truncated int
	// Refreshes counts the impostor refreshes.
	Refreshes int
}

// Targets returns the target neighbours of every point as listed by the
// triplets of ts (the distinct J of the triplets (I, J, K), in order of
// first appearance), as CSR arrays: the targets of point i are
// idx[ptr[i]:ptr[i+1]].
func Targets(ts *constraints.TripletSet) (ptr, idx []int) {
	per := make([][]int, ts.N)
	for _, t := range ts.Triplets {
		dup := false
		for _, j := range per[t.I] {
			if j == t.J {
				dup = true
				break
			}
		}
		if !dup {
			per[t.I] = append(per[t.I], t.J)
		}
	}
	ptr = make([]int, ts.N+1)
	for i, p := range per {
		ptr[i+1] = ptr[i] + len(p)
		idx = append(idx, p...)
	}
	return ptr, idx
}

// Learn runs LMNN on the rows of x with class labels y (≥ 0, at least two
// classes). The target neighbours are those of the triplets ts on the rows of
// x (constraints.Triplets: the K nearest same-class points, exact
// Euclidean); with ts nil Learn builds them with Options.K. Impostors are
// searched in the current metric (see docs/algorithms/lmnn.md).
//
// On cancellation Learn returns the current iterate with an error wrapping
// ctx.Err().
func Learn(ctx context.Context, x *mat.Dense, y []int, ts *constraints.TripletSet, opt Options) (*Result, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInput)
	}
	n, d := x.Dims()
	if n < 2 || d < 1 {
		return nil, fmt.Errorf("%w: %d×%d data, want at least 2 rows and 1 column", ErrInput, n, d)
	}
	if opt.Rank > d {
		return nil, fmt.Errorf("%w: rank %d above the dimension %d of the data (want 1 ≤ rank ≤ %d, or 0 for the full-rank M)", ErrInput, opt.Rank, d, d)
	}
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d rows", ErrInput, len(y), n)
	}
	classes := map[int]bool{}
	for i, c := range y {
		if c < 0 {
			return nil, fmt.Errorf("%w: label %d of row %d is negative", ErrInput, c, i)
		}
		classes[c] = true
	}
	if len(classes) < 2 {
		return nil, fmt.Errorf("%w: LMNN needs at least two classes, the labels have %d", ErrInput, len(classes))
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		if err := engine.CheckFinite(fmt.Sprintf("x row %d", i), raw.Data[i*raw.Stride:i*raw.Stride+d]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	if ts != nil && ts.N != n {
		return nil, fmt.Errorf("%w: triplets on %d points for %d rows", ErrInput, ts.N, n)
	}
	opt = opt.withDefaults()
	b := engine.Or(opt.Backend)
	if ts == nil {
		var err error
		if ts, err = constraints.TripletsBLAS(b.BLAS(), x, y, opt.K); err != nil {
			return nil, fmt.Errorf("lmnn: targets: %w", err)
		}
	}
	s := newSolver(b, x, y, ts, opt)
	if err := s.init(); err != nil {
		return nil, err
	}
	return s.run(ctx)
}

func (o Options) validate() error {
	switch {
	case math.IsNaN(o.Mu) || o.Mu < 0 || o.Mu > 1:
		return fmt.Errorf("%w: μ = %v, want a value in (0, 1] (0 for the default %v)", ErrInput, o.Mu, DefaultMu)
	case o.K < 0:
		return fmt.Errorf("%w: K = %d, want ≥ 1 (0 for the default)", ErrInput, o.K)
	case o.MaxIter < 0:
		return fmt.Errorf("%w: iteration limit %d, want > 0 (0 for the default)", ErrInput, o.MaxIter)
	case math.IsNaN(o.Tol) || o.Tol < 0 || math.IsInf(o.Tol, 0):
		return fmt.Errorf("%w: tolerance %v, want a finite value ≥ 0", ErrInput, o.Tol)
	case o.RefreshEvery < 0:
		return fmt.Errorf("%w: refresh period %d, want ≥ 1 (0 for the default)", ErrInput, o.RefreshEvery)
	case o.Candidates < 0:
		return fmt.Errorf("%w: candidate bound %d, want ≥ 1 (0 for the default)", ErrInput, o.Candidates)
	case o.Rank < 0:
		return fmt.Errorf("%w: rank %d, want 1 ≤ rank ≤ D for the low-rank factor, or 0 for the full-rank M", ErrInput, o.Rank)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Mu == 0 {
		o.Mu = DefaultMu
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.MaxIter == 0 {
		o.MaxIter = DefaultMaxIter
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
	}
	if o.RefreshEvery == 0 {
		o.RefreshEvery = DefaultRefreshEvery
	}
	if o.Candidates == 0 {
		o.Candidates = DefaultCandidates
	}
	return o
}

// solver holds the state of one run. All quantities are in normalised
// units: the rows are x/√scale.
type solver struct {
	b     engine.Backend
	impl  blas.Float64
	opt   Options
	mu    float64
	n, d  int
	rank  int        // Options.Rank: 0 full-rank M, else the columns of L
	x     *mat.Dense // normalised rows
	y     []int
	scale float64

	tPtr, tIdx []int // targets: pair p < nT is (i, tIdx[p]) for tPtr[i] ≤ p < tPtr[i+1]
	cPtr, cIdx []int // impostor candidates: pair nT+q is (i, cIdx[q]) for cPtr[i] ≤ q < cPtr[i+1]
	pairs      []sparse.Pair
	graph      *sparse.PairGraph
	truncated  int
	refreshes  int
	search     searchState
	lo, hi     int // this process's anchors (all of them in one process)
	// candTotal and truncTotal are the candidate and truncation counts
	// of the last refresh over all processes.
	candTotal, truncTotal int
	// fullSearches counts the full k-NN searches; lastStale the points
	// re-searched alone at the last refresh.
	fullSearches, lastStale int
	// Time spent in refreshes and in their k-NN searches (for tests).
	refreshTime, knnTime time.Duration

	// The iterate: M = L Lᵀ, its objective, active count and pair weights
	// (the subgradient's graph weights at M).
	m      *mat.SymDense
	l      *mat.Dense
	obj    float64
	active int
	w      []float64
	grad   *mat.SymDense
	// gl is the gradient in the factor, 2·G·L (D×r), when rank > 0.
	gl *mat.Dense

	// Scratch.
	z      []float64
	dist   []float64
	rowObj []float64
	rowAct []int
	wTry   []float64
}

func newSolver(b engine.Backend, x *mat.Dense, y []int, ts *constraints.TripletSet, opt Options) *solver {
	n, d := x.Dims()
	s := &solver{b: b, impl: b.BLAS(), opt: opt, mu: opt.Mu, n: n, d: d, rank: opt.Rank, x: x, y: y, hi: n}
	if opt.Split != nil {
		s.lo, s.hi = opt.Split.Block(n)
	}
	s.tPtr, s.tIdx = Targets(ts)
	// scale: the mean squared Euclidean target distance.
	var sum float64
	for i := 0; i < n; i++ {
		for p := s.tPtr[i]; p < s.tPtr[i+1]; p++ {
			sum += f64.SqDist(x.RawRowView(i), x.RawRowView(s.tIdx[p]))
		}
	}
	s.scale = sum / float64(len(s.tIdx))
	return s
}

func (s *solver) init() error {
	if len(s.tIdx) == 0 {
		return fmt.Errorf("%w: no target pairs", ErrInput)
	}
	if !(s.scale > 0) || math.IsInf(s.scale, 0) {
		return fmt.Errorf("%w: the target neighbours' mean squared distance is %v: the data cannot be normalised", ErrInput, s.scale)
	}
	inv := 1 / math.Sqrt(s.scale)
	xs := mat.NewDense(s.n, s.d, nil)
	xs.Scale(inv, s.x)
	s.x = xs
	s.rowObj = make([]float64, s.n)
	s.rowAct = make([]int, s.n)
	s.z = make([]float64, s.n*s.d)
	s.grad = mat.NewSymDense(s.d, nil)
	if s.rank > 0 {
		return s.initFactor()
	}
	// M0 = I.
	s.m = mat.NewSymDense(s.d, nil)
	s.l = mat.NewDense(s.d, s.d, nil)
	for i := 0; i < s.d; i++ {
		s.m.SetSym(i, i, 1)
		s.l.Set(i, i, 1)
	}
	return nil
}
