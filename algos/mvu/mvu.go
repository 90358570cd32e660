package mvu

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The defaults of Options, each defined once.
const (
	// DefaultK is the number of nearest neighbours whose distances are
	// preserved.
	DefaultK = 6
	// DefaultDims is the embedding dimension.
	DefaultDims = 2
)

// Options configures MVU.
type Options struct {
	// K is the number of nearest neighbours whose distances are preserved (0: DefaultK).
	K int
	// Sigma is σ of the Frobenius perturbation −(1/2σ)‖X‖²_F of the MVU
	// objective; larger is closer to exact MVU. MVU solves the problem for
	// the data scaled so that the mean squared neighbour distance is 1 (and
	// scales the embedding back), so σ does not depend on the units of the
	// data; it should be well above the largest eigenvalue of the unfolded
	// Gram matrix in those units, about n·(intrinsic variance)/(mean squared
	// neighbour distance), which grows like n². Zero selects
	// max(SigmaFloor, λ̂/10), where λ̂ estimates that eigenvalue from graph
	// geodesics (the variance of the shortest-path distances from an end of
	// the neighbourhood graph): the paper's 1e5 up to about 1,800 Swiss-roll
	// points and more beyond. Embedding.Sigma reports the value used.
	Sigma float64
	// Dims is the embedding dimension (0: DefaultDims).
	Dims int
	// Equalities keeps every neighbour distance exactly, the original MVU
	// of Weinberger and Saul: X_aa + X_bb − 2X_ab = ‖x_a − x_b‖². By default
	// (false) MVU solves the FrobMetric paper's form, ⟨A_e, X⟩ ≤ ‖x_a − x_b‖²:
	// neighbours may come closer but not move apart. Maximising the
	// variance pushes them apart, so at the optimum nearly all distances
	// hold with equality anyway; but X = 0 is strictly feasible, and the
	// dual converges and certifies. With hard equalities on a rigid
	// neighbourhood graph no Gram matrix is strictly feasible, the dual's
	// multipliers grow without bound, and a 2,000-point Swiss roll did not
	// certify in 20,000 iterations.
	Equalities bool
	// RelaxIter applies to the equality form. On a rigid neighbourhood graph
	// the distance equalities admit no strictly feasible Gram matrix, and
	// from a cold start their dual crawls: on a 20,000-point Swiss roll
	// (σ = 1e7) 300 iterations left the median neighbour-distance error at
	// 0.92, against 0.057 with the start below. MVU therefore first solves
	// the inequality relaxation (which X = 0 satisfies strictly) for up to
	// RelaxIter L-BFGS-B iterations, stopping earlier at its own
	// certificate, and starts the equality solve from its multipliers.
	// Zero selects half of SDP.MaxIter (its default if zero); negative
	// skips the relaxation. Its iterations count towards SDP.MaxIter.
	RelaxIter int
	// Penalty > 0 softens the distance constraints: a violation costs
	// Penalty per unit and the multipliers are bounded by it (see sdp.Constraint).
	Penalty float64
	// SDP configures the solver (method, tolerances, backend, progress).
	// Its U0 is ignored: MVU starts from its own dual point. Its GapTol and
	// FeasTol default to DefaultGapTol and DefaultFeasTol here, not to the
	// package sdp's, and its Memory (L-BFGS-B correction pairs) to 20, not
	// 10 (see defaultMemory).
	SDP sdp.Options
}

// The certificate MVU asks for by default: the relative duality gap
// |primal − dual|/max(1, |primal|) of the Frobenius-perturbed problem at
// most DefaultGapTol, and the largest violation of a constraint, relative
// to 1 + its bound (squared distances in units of their mean), at most
// DefaultFeasTol. On Swiss rolls of 200 to 2,000 points solved at the
// FrobMetric paper's σ, the variance tr X certified at these tolerances
// lies within the σ bound ‖X_e‖²_F/(2σ) of the exact SDP's optimum X_e
// computed by the interior-point solver CSDP, and a feasible point scaled
// from it never exceeds that optimum (psdlearn bench --suite sdp); the
// solver's own defaults (1e-7, 1e-6) cost several times the iterations
// without changing the embedding.
const (
	DefaultGapTol  = 1e-4
	DefaultFeasTol = 1e-3
)

// defaultMemory is MVU's number of L-BFGS-B correction pairs. The dual is
// degenerate: more pairs than package sdp's 10 cut the iterations, and past
// some point L-BFGS-B's own cost per iteration (its Cauchy point and
// subspace step, O(pairs·m)) outgrows the saving. With the default
// certificate (relative gap 1e-4, violation 1e-3; the same quiet machine,
// alternating): Swiss roll N = 2,000, seed 7: 20 pairs 366 iterations,
// 4.6–6.1 s (4 runs), 40 pairs 373 iterations, 5.9–6.9 s, 10 pairs 477
// iterations, 6.6–7.0 s; seeds 1 and 2: 20 pairs 6.8 and 6.0 s, 40 pairs
// 6.9 and 6.3 s; N = 5,000: 32.2 s against 35.9 s; N = 20,000: 368 s
// (1,480 iterations) against 374 s (1,387).
const defaultMemory = 20

// Embedding is an MVU embedding.
type Embedding struct {
	// Coords is n×Dims: row i is the embedding of point i, from the top
	// eigenvectors of the learned Gram matrix X (scaled by √eigenvalue).
	Coords *mat.Dense
	// Eigenvalues are the nonzero eigenvalues of X, descending.
	Eigenvalues []float64
	// Edges are the kNN pairs whose squared distances were constrained, and
	// Dist2 those squared distances.
	Edges []engine.Pair
	Dist2 []float64
	// Solution is the SDP solution and its certificate, in the units of the
	// data (X = Factor·Factorᵀ; objectives scaled by the mean squared
	// neighbour distance, relative figures unchanged). Its Iterations and
	// Evaluations count the final solve only.
	Solution *sdp.Solution
	// Relaxation is the solution of the inequality relaxation that started
	// the equality solve (see Options.RelaxIter), in the same units, or
	// nil when there was none. If MVU was cancelled during the relaxation,
	// Solution is Relaxation.
	Relaxation *sdp.Solution
	// Iterations and Evaluations count the L-BFGS-B iterations and dual
	// evaluations of the whole run, the relaxation's included.
	Iterations, Evaluations int
	// OperatorProducts counts the sparse eigensolvers' operator
	// applications over the whole run, and Factorizations the sparse
	// Cholesky factorizations of the shift-and-invert path (see
	// sdp.Solution).
	OperatorProducts, Factorizations int
	// Sigma is the σ used (Options.Sigma, or the value chosen for it).
	Sigma float64
	// Equalities reports the form solved (Options.Equalities), and GapTol
	// and FeasTol the tolerances of the certificate Solution.Certified
	// answers (the options' or the defaults).
	Equalities      bool
	GapTol, FeasTol float64
}

// Embed computes an approximate maximum variance unfolding of the rows of x
// (n×D): the Gram matrix X of an embedding maximising the variance tr X
// while keeping every k-nearest-neighbour pair from moving apart, centred
// (1ᵀX1 = 0). The Frobenius-perturbed problem
//
//	min ⟨−I, X⟩ + (1/2σ)‖X‖²_F  s.t.  X ⪰ 0,  X_aa + X_bb − 2X_ab ≤ ‖x_a − x_b‖² on the kNN graph,  1ᵀX1 = 0
//
// (the FrobMetric paper's form; Options.Equalities keeps the distances
// exactly, after an inequality relaxation that gives that harder problem a
// starting point, see Options.RelaxIter) is solved by sdp.Solve to the
// certificate of DefaultGapTol and DefaultFeasTol unless the options ask
// for another. C + Â = −I + L_u + u₀11ᵀ is a graph Laplacian minus the
// identity plus a rank-one term, and its negative part has the rank of the
// embedding, so the sparse method handles n far beyond dense SDP solvers.
// When ctx is cancelled Embed returns the embedding of the best iterate so
// far (when one could be recovered) with an error wrapping ctx.Err().
func Embed(ctx context.Context, x *mat.Dense, opt Options) (*Embedding, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInput)
	}
	if err := checkFinite(x); err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	k := cmp.Or(opt.K, DefaultK)
	if k < 1 || k >= n {
		return nil, fmt.Errorf("%w: k = %d neighbours for %d points", ErrInput, k, n)
	}
	if err := checkOptions(n, opt); err != nil {
		return nil, err
	}
	nb, err := sparse.KNN(x, x, k, true)
	if err != nil {
		return nil, fmt.Errorf("mvu: %w", err)
	}
	edges, dist2 := knnEdges(nb)
	if !connected(n, edges) {
		return nil, fmt.Errorf("%w: the %d-nearest-neighbour graph is not connected; increase k", ErrInput, k)
	}
	return embedGraph(ctx, n, edges, dist2, opt)
}

// checkOptions validates the options that do not depend on the graph.
func checkOptions(n int, opt Options) error {
	dims := cmp.Or(opt.Dims, DefaultDims)
	if dims < 1 || dims > n {
		return fmt.Errorf("%w: %d embedding dimensions for %d points", ErrInput, dims, n)
	}
	if s := opt.Sigma; s != 0 && (!(s > 0) || math.IsInf(s, 0)) {
		return errs.Option(fmt.Errorf("%w: sigma = %v, want a finite σ > 0 (or 0 to choose it)", ErrInput, s))
	}
	if opt.Sigma > MaxSigma {
		return errs.Option(fmt.Errorf("%w: sigma = %g above %g: the dual's X grows like σ and its squared norm like σ², which overflows float64", ErrInput, opt.Sigma, MaxSigma))
	}
	return nil
}

// MaxSigma is the largest Options.Sigma accepted (1e100): the solve's X is
// σ times a matrix of the data's unit, and quantities quadratic in it must
// stay inside float64's range (about 1e308).
const MaxSigma = 1e100

// EmbedGraph is Embed on a neighbourhood graph given by its edges: the
// distinct undirected pairs (A < B, sorted by A then B) of points
// 0 … n−1, with their squared distances, such as the k-nearest-neighbour
// edges Embed computes itself (package distributed builds them on sharded rows).
// Options.K is not used. The graph must be connected.
func EmbedGraph(ctx context.Context, n int, edges []engine.Pair, dist2 []float64, opt Options) (*Embedding, error) {
	if err := checkOptions(n, opt); err != nil {
		return nil, err
	}
	if len(edges) != len(dist2) {
		return nil, fmt.Errorf("%w: %d edges and %d distances", ErrInput, len(edges), len(dist2))
	}
	for t, e := range edges {
		if e.A < 0 || e.A >= e.B || e.B >= n || !(dist2[t] >= 0) || math.IsInf(dist2[t], 0) ||
			(t > 0 && (e.A < edges[t-1].A || (e.A == edges[t-1].A && e.B <= edges[t-1].B))) {
			return nil, fmt.Errorf("%w: edge %d (%d, %d) at squared distance %v: want sorted distinct pairs 0 ≤ A < B < %d and finite distances ≥ 0", ErrInput, t, e.A, e.B, dist2[t], n)
		}
	}
	if !connected(n, edges) {
		return nil, fmt.Errorf("%w: the neighbourhood graph is not connected", ErrInput)
	}
	return embedGraph(ctx, n, edges, dist2, opt)
}

// embedGraph is EmbedGraph on validated input.
func embedGraph(ctx context.Context, n int, edges []engine.Pair, dist2 []float64, opt Options) (*Embedding, error) {
	dims := cmp.Or(opt.Dims, DefaultDims)
	sigma := opt.Sigma
	// Scale-free formulation: squared distances in units of their mean.
	unit, scale2 := unitDistances(dist2)
	if !(scale2 > 0) {
		return nil, fmt.Errorf("%w: all neighbour distances are zero", ErrInput)
	}
	if sigma == 0 {
		sigma = autoSigma(n, edges, unit)
	}
	p := sdp.UnfoldingProblem(n, sigma, edges, unit)
	for i := range edges {
		p.Constraints[i].Equality = opt.Equalities
		p.Constraints[i].Penalty = opt.Penalty
	}

	sopt := opt.SDP
	b := engine.Or(sopt.Backend)
	sopt.Backend = b
	u0, err := mvuStart(ctx, b, n, edges, dims, sopt.Seed)
	if err != nil {
		return nil, err
	}
	sopt.U0 = u0
	if sopt.NewtonSteps == 0 {
		// The MVU dual is degenerate (its optimal C + Â has a cluster of
		// eigenvalues at zero, and with hard equalities on a rigid
		// neighbourhood graph its multipliers grow without bound), which
		// defeats the Newton phase; L-BFGS-B alone makes steadier progress.
		sopt.NewtonSteps = -1
	}
	if sopt.InitRank == 0 {
		sopt.InitRank = dims + 8
	}
	if sopt.Memory == 0 {
		sopt.Memory = defaultMemory
	}
	sopt.GapTol = cmp.Or(sopt.GapTol, DefaultGapTol)
	sopt.FeasTol = cmp.Or(sopt.FeasTol, DefaultFeasTol)
	relaxed, sol, solveErr := solveMVU(ctx, p, sopt, opt)
	if sol == nil {
		return nil, fmt.Errorf("mvu: %w", solveErr)
	}
	// Back to the units of the data: X = scale2·X'.
	toDataUnits(sol, scale2)
	iters, evals, prods, facts := sol.Iterations, sol.Evaluations, sol.OperatorProducts, sol.Factorizations
	if relaxed != nil && relaxed != sol {
		toDataUnits(relaxed, scale2)
		iters += relaxed.Iterations
		evals += relaxed.Evaluations
		prods += relaxed.OperatorProducts
		facts += relaxed.Factorizations
	}
	coords, vals, err := topCoordinates(b, sol.Factor, dims)
	if err != nil {
		return nil, err
	}
	emb := &Embedding{Coords: coords, Eigenvalues: vals, Edges: edges, Dist2: dist2, Solution: sol, Relaxation: relaxed,
		Iterations: iters, Evaluations: evals, OperatorProducts: prods, Factorizations: facts, Sigma: sigma,
		Equalities: opt.Equalities, GapTol: sopt.GapTol, FeasTol: sopt.FeasTol}
	if solveErr != nil {
		// Cancelled: the embedding of the best iterate so far.
		return emb, fmt.Errorf("mvu: %w", solveErr)
	}
	return emb, nil
}

// unitDistances returns the squared distances dist2 in units of their mean
// scale2 (and scale2 itself; the units are meaningless if it is 0).
func unitDistances(dist2 []float64) (unit []float64, scale2 float64) {
	for _, v := range dist2 {
		scale2 += v
	}
	scale2 /= float64(len(dist2))
	unit = make([]float64, len(dist2))
	for i, v := range dist2 {
		unit[i] = v / scale2
	}
	return unit, scale2
}

// toDataUnits rescales a solution of the problem in units of the mean
// squared neighbour distance scale2 to the units of the data (X = scale2·X').
func toDataUnits(s *sdp.Solution, scale2 float64) {
	s.Factor.Scale(math.Sqrt(scale2), s.Factor)
	s.Primal *= scale2
	s.Dual *= scale2
	s.Gap *= scale2
	for i := range s.Curve {
		s.Curve[i] *= scale2
	}
}

// solveMVU solves p, whose edge constraints are all equalities or all
// inequalities, and the final centring equality, from sopt.U0: for the
// equality form first the inequality relaxation (opt.RelaxIter) and then p
// from the relaxation's multipliers. It returns the relaxation's solution
// (nil if none) and the final one; if ctx is cancelled during the
// relaxation both are the relaxation's best iterate.
func solveMVU(ctx context.Context, p *sdp.Problem, sopt sdp.Options, opt Options) (relaxed, sol *sdp.Solution, err error) {
	total := cmp.Or(sopt.MaxIter, sdp.DefaultMaxIter)
	relaxIter := opt.RelaxIter
	if relaxIter == 0 {
		relaxIter = total / 2
	}
	if !opt.Equalities || relaxIter < 0 || total < 2 {
		sol, err = sdp.Solve(ctx, p, sopt)
		return nil, sol, err
	}
	relaxIter = min(relaxIter, total-1)
	edges := len(p.Constraints) - 1
	for i := 0; i < edges; i++ {
		p.Constraints[i].Equality = false
	}
	ropt := sopt
	ropt.MaxIter = relaxIter
	if sopt.Progress != nil {
		ropt.Progress = progress.Prefix(sopt.Progress, "relaxation: ")
	}
	relaxed, err = sdp.Solve(ctx, p, ropt)
	for i := 0; i < edges; i++ {
		p.Constraints[i].Equality = true
	}
	if err != nil {
		return relaxed, relaxed, err
	}
	sopt.U0 = relaxed.U
	sopt.MaxIter = total - relaxed.Iterations
	sol, err = sdp.Solve(ctx, p, sopt)
	return relaxed, sol, err
}

// EdgeErrors returns the relative error |‖y_a − y_b‖² − d_ab²| / d_ab² of
// every constrained neighbour distance in the full embedding X = Factor·Factorᵀ
// (zero for a pair of coincident points), in the order of Edges.
func (e *Embedding) EdgeErrors() []float64 {
	f := e.Solution.Factor.RawMatrix()
	rel := make([]float64, len(e.Edges))
	for t, p := range e.Edges {
		ra := f.Data[p.A*f.Stride : p.A*f.Stride+f.Cols]
		rb := f.Data[p.B*f.Stride : p.B*f.Stride+f.Cols]
		var d2 float64
		for j := range ra {
			v := ra[j] - rb[j]
			d2 += v * v
		}
		if e.Dist2[t] > 0 {
			rel[t] = math.Abs(d2-e.Dist2[t]) / e.Dist2[t]
		}
	}
	return rel
}

// connected reports whether the graph with the given edges spans all n points.
func connected(n int, edges []engine.Pair) bool {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	comps := n
	for _, e := range edges {
		a, b := find(e.A), find(e.B)
		if a != b {
			parent[a] = b
			comps--
		}
	}
	return comps == 1
}

// laplacianOp is the unweighted graph Laplacian of a pair list.
type laplacianOp struct {
	n     int
	deg   []float64
	edges []engine.Pair
}

func (l *laplacianOp) Dim() int { return l.n }

func (l *laplacianOp) Apply(dst, x []float64) {
	for i := range dst {
		dst[i] = l.deg[i] * x[i]
	}
	for _, e := range l.edges {
		dst[e.A] -= x[e.B]
		dst[e.B] -= x[e.A]
	}
}

// mvuStart returns a dual starting point with few negative eigenvalues of
// C + Â = −I + c·L + u₀11ᵀ: the edge multipliers equal c = 1/λ_{dims+2}(L)
// for the unweighted graph Laplacian L, so that −I + cL has about dims
// negative eigenvalues (its spectrum below the Fiedler band), and u₀ = 2/n
// lifts the constant vector to eigenvalue +1. Starting at u = 0 instead would
// make all n eigenvalues negative.
func mvuStart(ctx context.Context, b engine.Backend, n int, edges []engine.Pair, dims int, seed uint64) ([]float64, error) {
	op := &laplacianOp{n: n, deg: make([]float64, n), edges: edges}
	for _, e := range edges {
		op.deg[e.A]++
		op.deg[e.B]++
	}
	want := dims + 2 // eigenvalues λ_1 = 0 ≤ … ≤ λ_{dims+2}
	var lam float64
	if want >= n-1 || n <= 400 {
		a := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			a.SetSym(i, i, op.deg[i])
		}
		for _, e := range edges {
			a.SetSym(e.A, e.B, a.At(e.A, e.B)-1)
		}
		eig, err := b.SymEig(a, engine.BottomK(min(want, n)), false)
		if err != nil {
			return nil, fmt.Errorf("frob: MVU: Laplacian spectrum: %w", err)
		}
		lam = eig.Values[len(eig.Values)-1]
	} else {
		res, err := b.Eigs(ctx, op, want, engine.SmallestAlgebraic, engine.EigsOptions{Tol: 1e-6, Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("frob: MVU: Laplacian spectrum: %w", err)
		}
		lam = res.Values[len(res.Values)-1]
	}
	if !(lam > 0) {
		return nil, fmt.Errorf("frob: MVU: degenerate neighbourhood graph (λ = %g)", lam)
	}
	u0 := make([]float64, len(edges)+1)
	for i := range edges {
		u0[i] = 1 / lam
	}
	u0[len(edges)] = 2 / float64(n)
	return u0, nil
}

// topCoordinates returns the top-dims principal coordinates of X = F Fᵀ (F n×r)
// and all eigenvalues of X, descending: the r×r eigenproblem of FᵀF suffices.
func topCoordinates(b engine.Backend, f *mat.Dense, dims int) (*mat.Dense, []float64, error) {
	n, r := f.Dims()
	g := mat.NewSymDense(r, nil)
	g.SymOuterK(1, f.T())
	eig, err := b.SymEig(g, engine.AllRange(), true)
	if err != nil {
		return nil, nil, fmt.Errorf("frob: MVU: embedding: %w", err)
	}
	vals := make([]float64, r)
	for i := range vals {
		vals[i] = math.Max(eig.Values[r-1-i], 0)
	}
	coords := mat.NewDense(n, dims, nil)
	for j := 0; j < dims && j < r; j++ {
		col := r - 1 - j
		w := mat.NewVecDense(r, nil)
		for i := 0; i < r; i++ {
			w.SetVec(i, eig.Vectors.At(i, col))
		}
		var y mat.VecDense
		y.MulVec(f, w) // F w has norm √λ: the principal coordinate
		for i := 0; i < n; i++ {
			coords.Set(i, j, y.AtVec(i))
		}
	}
	// Trim eigenvalues that are zero up to rounding.
	for len(vals) > 0 && vals[len(vals)-1] <= 1e-12*math.Max(vals[0], 1e-300) {
		vals = vals[:len(vals)-1]
	}
	return coords, vals, nil
}

// knnEdges returns the distinct undirected kNN pairs (A < B), sorted, with
// their squared distances.
func knnEdges(nb *sparse.Neighbors) ([]engine.Pair, []float64) {
	a, b, d2 := nb.Edges()
	pairs := make([]engine.Pair, len(a))
	for t := range a {
		pairs[t] = engine.Pair{A: a[t], B: b[t]}
	}
	return pairs, d2
}
