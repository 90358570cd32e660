package boost

import (
	"fmt"

	"github.com/psdlearn/psdlearn/internal/corrective"

	"gonum.org/v1/gonum/mat"
)

// Cost bounds of the totally corrective re-solves (internal/corrective).
const (
	correctiveMaxIter   = corrective.MaxIter
	correctiveFinalIter = corrective.FinalIter
)

// terms evaluates the margins ρ = H w of the weights w of the rank-one terms
// found so far and the products Hᵀp of the triplet weights p with them,
// without necessarily storing H (m×J).
type terms interface {
	// add appends the term v with margins h (H_r = ⟨A_r, v vᵀ⟩).
	add(v, h []float64)
	// truncate keeps the first j terms.
	truncate(j int)
	// margins writes ρ = Σ_j w_j H_j into rho and returns 1ᵀw.
	margins(rho, w []float64) (float64, error)
	// dots writes g_j = Σ_r p_r H_rj for every term into g.
	dots(g, p []float64) error
}

// newTerms returns the evaluator of the pricer's problem: the projections
// P = X V of the points on the terms (projectedTerms), and, when the pricer
// forms dense D×D matrices anyway and D is at most metricTermsMaxDim, the
// D×D evaluator from the number of terms at which it becomes the cheaper
// one. The margins H (m×J) are never stored: they would take m·J floats,
// nine times P's N·J on MNIST's 450,000 triplets of 50,000 points.
func newTerms(pr *pricer) terms {
	t := newProjectedTerms(pr)
	if pr.dense && pr.d <= metricTermsMaxDim {
		t.dense = &metricTerms{pr: pr, xm: mat.NewSymDense(pr.d, nil), gram: mat.NewSymDense(pr.d, nil),
			pairs: make([]float64, len(pr.ts.Pairs))}
		t.crossover = projectedCrossover(pr.n, pr.d, len(pr.ts.Pairs))
	}
	return t
}

// metricTermsMaxDim bounds the dimension of the D×D term evaluator. The
// pricer may take the dense path well above it (on MNIST's 784 pixels), but
// there an evaluation's Gram, 2·N·D² = 6e10 flops for 50,000 points, costs
// more than the projections' for any number of terms a run reaches.
const metricTermsMaxDim = 200

// metricTerms works with X = Σ_j w_j v_j v_jᵀ: the margins are ⟨A_r, X⟩ from
// the quadratic forms of X on the pairs, and Σ_r p_r H_rj = v_jᵀ Â(p) v_j
// with Â(p) = Σ_r p_r A_r formed once (a weighted Gram matrix of the points).
type metricTerms struct {
	pr       *pricer
	vs       [][]float64
	xm, gram *mat.SymDense
	pairs    []float64
}

func (t *metricTerms) add(v, _ []float64) { t.vs = append(t.vs, v) }
func (t *metricTerms) truncate(j int)     { t.vs = t.vs[:j] }

func (t *metricTerms) margins(rho, w []float64) (float64, error) {
	tr := corrective.Sum(t.xm, t.vs, w)
	if err := t.pr.b.PairQuadForms(t.pairs, t.pr.x, t.xm, t.pr.ts.Pairs); err != nil {
		return 0, fmt.Errorf("boost: margins: %w", err)
	}
	t.pr.ts.Margins(rho, t.pairs)
	return tr, nil
}

func (t *metricTerms) dots(g, p []float64) error {
	gr, err := t.pr.ts.GraphInto(t.pr.graph, p)
	if err != nil {
		return fmt.Errorf("boost: triplet weights: %w", err)
	}
	t.pr.graph = gr // top() resets the weights before its next use
	if err := t.pr.b.WeightedGram(t.gram, t.pr.x, gr); err != nil {
		return fmt.Errorf("boost: %w", err)
	}
	raw := t.gram.RawSymmetric()
	corrective.QuadForms(g, t.vs, t.pr.d, func(a int) []float64 { return raw.Data[a*raw.Stride+a : a*raw.Stride+t.pr.d] })
	return nil
}
