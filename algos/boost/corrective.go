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

// newTerms returns the cheaper evaluator for the pricer's problem: the D×D
// one (cost O(N·D² + pairs·D) per evaluation, whatever the number of terms)
// when the pricer forms dense D×D matrices anyway and D is at most
// metricTermsMaxDim, and the stored margins (O(m·J) per evaluation, m·J
// floats of memory) otherwise.
func newTerms(pr *pricer) terms {
	if pr.dense && pr.d <= metricTermsMaxDim {
		return &metricTerms{pr: pr, xm: mat.NewSymDense(pr.d, nil), gram: mat.NewSymDense(pr.d, nil),
			pairs: make([]float64, len(pr.ts.Pairs))}
	}
	return &storedTerms{}
}

// metricTermsMaxDim bounds the dimension of the D×D term evaluator. The
// pricer may take the dense path well above it (on MNIST's 784 pixels), but
// there an evaluation's Gram, 2·N·D² = 6e10 flops for 50,000 points, costs
// far more than the stored margins' m·J = 2e8 for 450,000 triplets and 500
// terms.
const metricTermsMaxDim = 200

// storedTerms keeps the margins of every term.
type storedTerms struct{ hs [][]float64 }

func (s *storedTerms) add(_, h []float64) { s.hs = append(s.hs, h) }
func (s *storedTerms) truncate(j int)     { s.hs = s.hs[:j] }
func (s *storedTerms) margins(rho, w []float64) (float64, error) {
	return marginsOf(rho, s.hs, w), nil
}
func (s *storedTerms) dots(g, p []float64) error {
	for j, hj := range s.hs {
		var t float64
		for r, v := range hj {
			t += v * p[r]
		}
		g[j] = t
	}
	return nil
}

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
