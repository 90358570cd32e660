package boost

import (
	"fmt"

	"github.com/psdlearn/psdlearn/internal/f64"
	"gonum.org/v1/gonum/blas"
)

// projectedTerms evaluates the terms through the projections of the points
// on them, P = X V (N×J, a column per term, computed once when the term is
// added):
//   - the pair forms of X = Σ_j w_j v_j v_jᵀ are Σ_j w_j (P_aj − P_bj)²;
//   - Σ_r p_r H_rj = v_jᵀ Xᵀ L_W X v_j = Σ_ab ω_ab (P_aj − P_bj)², with ω the
//     pair weights of the triplet weights p (L_W their graph Laplacian).
//
// An evaluation costs O(pairs·J) flops and P takes N·J floats, where
// the stored margins take m·J (m triplets) and the D×D evaluator costs
// O(N·D² + pairs·D) whatever J. When the D×D evaluator is set (dense), it
// takes over from the term count at which it becomes the cheaper one
// (crossover), so a run uses the projections while the terms are few.
type projectedTerms struct {
	pr        *pricer
	norms     []float64 // ‖v_j‖²
	proj      []float64 // P, N×stride, row-major
	stride, j int       // capacity and number of terms
	pairs     []float64 // the pair forms
	omega     []float64 // the pair weights of the triplet weights

	dense     *metricTerms // nil: projections at every size
	crossover int          // dense evaluates when j > crossover
}

func newProjectedTerms(pr *pricer) *projectedTerms {
	return &projectedTerms{pr: pr, pairs: make([]float64, len(pr.ts.Pairs)), omega: make([]float64, len(pr.ts.Pairs))}
}

// projectedCrossover returns the number of terms above which the D×D
// evaluator is cheaper than the projections, from the cost of one
// evaluation (margins and gradient products) of each, in units of a flop
// of the scalar pair loops:
//
//	D×D:         2·(2·N·D²)/gemmSpeedup + 6·pairs·D (two GEMMs, the pair forms and the Laplacian product)
//	projections: 6·pairs·J/simdSpeedup             (the weighted pair forms and the weighted squared differences)
//
// The GEMMs run gemmSpeedup times faster per flop than the scalar pair
// loops, which read rows of X or P at random, and the projections' loops
// (f64.WeightedSqDist, f64.AddScaledSq: AVX2 where the processor has it)
// simdSpeedup times faster. BenchmarkTerms measures both: on 20,000 points
// in 164 dimensions with 109,695 pairs, the D×D evaluation takes 90–120 ms
// at any J and the projections 28 ms at J = 200 and 48 ms at J = 400
// (47 and 81 ms with scalar loops), so the crossover the model gives
// (about 970 terms) is where the two meet.
func projectedCrossover(n, d, pairs int) int {
	const (
		gemmSpeedup = 8
		simdSpeedup = 1.7
	)
	nn, dd, pp := float64(n), float64(d), float64(pairs)
	dense := 4*nn*dd*dd/gemmSpeedup + 6*pp*dd
	return int(simdSpeedup * dense / (6 * pp))
}

func (t *projectedTerms) add(v, h []float64) {
	n := t.pr.n
	if t.j == t.stride {
		t.grow(max(16, 2*t.stride))
	}
	raw := t.pr.x.RawMatrix()
	t.pr.b.BLAS().Dgemv(blas.NoTrans, n, t.pr.d, 1, raw.Data, raw.Stride, v, 1, 0, t.proj[t.j:], t.stride)
	var s float64
	for _, e := range v {
		s += e * e
	}
	t.norms = append(t.norms[:t.j], s)
	t.j++
	if t.dense != nil {
		t.dense.add(v, h)
	}
}

// grow moves P into rows of the given capacity.
func (t *projectedTerms) grow(stride int) {
	n := t.pr.n
	proj := make([]float64, n*stride)
	for i := 0; i < n; i++ {
		copy(proj[i*stride:i*stride+t.j], t.proj[i*t.stride:i*t.stride+t.j])
	}
	t.proj, t.stride = proj, stride
}

func (t *projectedTerms) truncate(j int) {
	t.j = j
	t.norms = t.norms[:j]
	if t.dense != nil {
		t.dense.truncate(j)
	}
}

func (t *projectedTerms) useDense() bool { return t.dense != nil && t.j > t.crossover }

func (t *projectedTerms) margins(rho, w []float64) (float64, error) {
	if t.useDense() {
		return t.dense.margins(rho, w)
	}
	if len(w) != t.j {
		return 0, fmt.Errorf("boost: margins: %d weights for %d terms", len(w), t.j)
	}
	j, st := t.j, t.stride
	pairs := t.pr.ts.Pairs
	forChunks(len(pairs), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			a, b := pairs[k].A*st, pairs[k].B*st
			t.pairs[k] = f64.WeightedSqDist(w, t.proj[a:a+j], t.proj[b:b+j])
		}
	})
	t.pr.ts.Margins(rho, t.pairs)
	var tr float64
	for c, wc := range w {
		tr += wc * t.norms[c]
	}
	return tr, nil
}

func (t *projectedTerms) dots(g, p []float64) error {
	if t.useDense() {
		return t.dense.dots(g, p)
	}
	j, st := t.j, t.stride
	if j == 0 {
		return nil
	}
	pairs := t.pr.ts.Pairs
	t.pr.ts.PairWeights(t.omega, p)
	// g_c = Σ_pairs ω_ab (P_ac − P_bc)², summed by chunk of pairs and the
	// chunks in order, so the sum does not depend on the number of threads.
	bounds := chunks(len(pairs))
	partial := make([]float64, (len(bounds)-1)*j)
	forChunks(len(pairs), func(c, lo, hi int) {
		acc := partial[c*j : (c+1)*j]
		for k := lo; k < hi; k++ {
			if om := t.omega[k]; om != 0 {
				a, b := pairs[k].A*st, pairs[k].B*st
				f64.AddScaledSq(acc, om, t.proj[a:a+j], t.proj[b:b+j])
			}
		}
	})
	for k := range g[:j] {
		g[k] = 0
	}
	for c := 0; c+1 < len(bounds); c++ {
		for k, v := range partial[c*j : (c+1)*j] {
			g[k] += v
		}
	}
	return nil
}
