package boost

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// denseWins reports whether EigAuto prices an n×d problem with the dense
// eigensolver, by a cost model of one iteration on each path measured on the
// reference machine (2 cores, OpenBLAS). The dense path forms the weighted
// Gram, 2·n·d² flops at the GEMM rate (about 1e11 flop/s in single
// precision, half that in double), and takes its leading eigenpair, about
// 9.3e-11·d³ s. The Lanczos path applies v ↦ Xᵀ(L_W(X v)) about 40 times,
// each reading X twice, about 4.6e-8·n·d s in all at the memory bandwidth.
// Dividing by n·d: dense wins when d·(g + 9.3·d/n) < 4600, g = 2 for a
// single-precision Gram and 4 in double. On MNIST's 784 standardised pixels
// (n = 20,000) a dense iteration took 0.33 s and a Lanczos one 0.72 s; with
// 100 points (BoostMetric's Figure 2) the rule changes paths at d ≈ 200.
func denseWins(n, d int, prec Precision) bool {
	g := 2.0
	if prec == PrecisionDouble {
		g = 4
	}
	fd := float64(d)
	return fd*(g+9.3*fd/float64(max(n, 1))) < 4600
}

// pricer computes the leading eigenpair of Â(u) = Xᵀ L_W X and the margins
// of rank-one terms, without ever forming an A_r.
type pricer struct {
	b     engine.Backend
	x     *mat.Dense
	ts    *constraints.TripletSet
	n, d  int
	dense bool
	gram  *mat.SymDense        // dense path: D×D workspace
	op    *sparse.GramOperator // Lanczos path: v ↦ Xᵀ(L_W(X v)) on graph
	graph *sparse.PairGraph    // this run's pair weights (the triplet set is shared)
	seed  uint64
	calls uint64

	single *single // mixed precision (mixed.go); nil in double
	phases Phases  // the time of each phase so far
	double bool    // mixed precision has fallen back to double for good

	// margins workspace
	z     *mat.Dense // n×1
	pairs []float64
}

func newPricer(b engine.Backend, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*pricer, error) {
	n, d := x.Dims()
	p := &pricer{b: b, x: x, ts: ts, n: n, d: d, seed: opt.Seed,
		z: mat.NewDense(n, 1, nil), pairs: make([]float64, len(ts.Pairs))}
	switch opt.Eig {
	case EigAuto:
		p.dense = denseWins(n, d, opt.Precision)
		if opt.DenseMaxDim > 0 {
			p.dense = d <= opt.DenseMaxDim
		}
	case EigDense:
		p.dense = true
	case EigLanczos:
		p.dense = false
	default:
		return nil, fmt.Errorf("%w: unknown eigensolver choice %d", ErrInvalid, opt.Eig)
	}
	if d < 3 {
		p.dense = true // Lanczos needs k < D with room for a Krylov basis
	}
	if err := checkMemory(n, d, ts.Len(), opt.Iters, p.dense); err != nil {
		return nil, err
	}
	if p.dense {
		p.gram = mat.NewSymDense(d, nil)
		return p, nil
	}
	// The operator reads the graph's current weights at every product; the
	// pricer owns the graph (the triplet set may be shared) and top() resets
	// its weights for every u.
	g, err := ts.Graph(make([]float64, ts.Len()))
	if err != nil {
		return nil, fmt.Errorf("boost: %w", err)
	}
	p.graph = g
	if p.op, err = sparse.NewGramOperator(x, g, b.BLAS()); err != nil {
		return nil, fmt.Errorf("boost: %w", err)
	}
	return p, nil
}

// weigh sets the pricer's pair graph to the weights of Â(u).
func (p *pricer) weigh(u []float64) (*sparse.PairGraph, error) {
	g, err := p.ts.GraphInto(p.graph, u)
	if err != nil {
		return nil, fmt.Errorf("boost: triplet weights: %w", err)
	}
	p.graph = g
	return g, nil
}

// top returns the largest eigenvalue of Â(u) and a unit eigenvector.
func (p *pricer) top(ctx context.Context, u []float64) (float64, []float64, error) {
	g, err := p.weigh(u)
	if err != nil {
		return 0, nil, err
	}
	if !p.dense {
		return p.topLanczos(ctx)
	}
	t := time.Now()
	if err := p.b.WeightedGram(p.gram, p.x, g); err != nil {
		return 0, nil, fmt.Errorf("boost: %w", err)
	}
	p.phases.Gram += since(t)
	p.phases.Grams++
	p.phases.GramRows += len(g.ActiveRows())
	t = time.Now()
	e, err := p.b.SymEig(p.gram, engine.TopK(p.d, 1), true)
	if err != nil {
		return 0, nil, fmt.Errorf("boost: leading eigenpair: %w", err)
	}
	p.phases.Eig += since(t)
	p.phases.Eigs++
	return e.Values[0], mat.Col(nil, 0, e.Vectors), nil
}

// topK returns up to k leading eigenpairs of Â(u), the largest first: on
// the dense path from one eigendecomposition of the D×D Gram, on the
// Lanczos path only the leading one (whatever k).
func (p *pricer) topK(ctx context.Context, u []float64, k int) ([]float64, [][]float64, error) {
	if !p.dense || k <= 1 {
		lam, v, err := p.top(ctx, u)
		if err != nil {
			return nil, nil, err
		}
		return []float64{lam}, [][]float64{v}, nil
	}
	k = min(k, p.d)
	g, err := p.weigh(u)
	if err != nil {
		return nil, nil, err
	}
	if err := p.b.WeightedGram(p.gram, p.x, g); err != nil {
		return nil, nil, fmt.Errorf("boost: %w", err)
	}
	e, err := p.b.SymEig(p.gram, engine.TopK(p.d, k), true)
	if err != nil {
		return nil, nil, fmt.Errorf("boost: leading eigenpairs: %w", err)
	}
	n := len(e.Values)
	vals := make([]float64, n)
	vecs := make([][]float64, n)
	for i := range n {
		vals[i] = e.Values[n-1-i] // ascending → largest first
		vecs[i] = mat.Col(nil, n-1-i, e.Vectors)
	}
	return vals, vecs, nil
}

// topLanczos runs the sparse eigensolver on the matrix-free operator.
func (p *pricer) topLanczos(ctx context.Context) (float64, []float64, error) {
	p.calls++
	t := time.Now()
	res, err := p.b.Eigs(ctx, p.op, 1, engine.LargestAlgebraic, engine.EigsOptions{Tol: 1e-12, Seed: p.seed + p.calls})
	p.phases.Eig += since(t)
	p.phases.Eigs++
	p.phases.Products += res.OpApplies
	if err != nil {
		return 0, nil, fmt.Errorf("boost: leading eigenpair (Lanczos): %w", err)
	}
	if len(res.Values) == 0 {
		return 0, nil, fmt.Errorf("boost: leading eigenpair (Lanczos): no eigenpair returned")
	}
	k := len(res.Values) - 1
	v := mat.Col(nil, k, res.Vectors)
	normalize(v)
	return res.Values[k], v, nil
}

// margins writes H_r = ⟨A_r, v vᵀ⟩ = (p_r·v)² − (q_r·v)² into h: z = X v
// (one GEMV), then (z_a − z_b)² for every pair.
func (p *pricer) margins(h, v []float64) error {
	t := time.Now()
	defer func() { p.phases.Margins += since(t); p.phases.MarginPasses++ }()
	raw := p.x.RawMatrix()
	zr := p.z.RawMatrix()
	p.b.BLAS().Dgemv(blas.NoTrans, p.n, p.d, 1, raw.Data, raw.Stride, v, 1, 0, zr.Data, zr.Stride)
	if err := p.b.PairSqDists(p.pairs, p.z, p.ts.Pairs); err != nil {
		return fmt.Errorf("boost: margins: %w", err)
	}
	p.ts.Margins(h, p.pairs)
	return nil
}

// normalize scales v to unit length.
func normalize(v []float64) {
	var s float64
	for _, e := range v {
		s += e * e
	}
	s = math.Sqrt(s)
	if s == 0 {
		return
	}
	for i := range v {
		v[i] /= s
	}
}
