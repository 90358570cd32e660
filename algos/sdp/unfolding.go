package sdp

import "github.com/psdlearn/psdlearn/engine"

// UnfoldingProblem returns the Frobenius-perturbed maximum variance
// unfolding SDP on a graph of n points (Section 5 of the FrobMetric paper):
//
//	min ⟨−I, X⟩ + (1/2σ)‖X‖²_F  s.t.  X ⪰ 0,
//	X_aa + X_bb − 2X_ab = dist2[t] for every edge t = (a, b),  1ᵀX1 = 0.
//
// C + Σ u_t A_t is then a graph Laplacian minus the identity plus a rank-one
// term, sparse with a low-rank negative part: the problem the Sparse method
// is built for. Package mvu solves it on k-nearest-neighbour graphs.
func UnfoldingProblem(n int, sigma float64, edges []engine.Pair, dist2 []float64) *Problem {
	p := &Problem{N: n, Sigma: sigma}
	p.C.Entries = make([]Entry, n)
	for i := range p.C.Entries {
		p.C.Entries[i] = Entry{I: i, J: i, V: -1}
	}
	p.Constraints = make([]Constraint, 0, len(edges)+1)
	for t, e := range edges {
		p.Constraints = append(p.Constraints, Constraint{
			A:        SymMatrix{Entries: []Entry{{I: e.A, J: e.A, V: 1}, {I: e.B, J: e.B, V: 1}, {I: e.A, J: e.B, V: -1}}},
			B:        dist2[t],
			Equality: true,
		})
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	p.Constraints = append(p.Constraints, Constraint{A: SymMatrix{RankOnes: []RankOne{{W: 1, Value: ones}}}, Equality: true})
	return p
}
