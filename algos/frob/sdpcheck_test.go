package frob

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestSDPFrobMetric solves FrobMetric as a general SDP — constraints
// ⟨−A_r, X⟩ ≤ −1 softened with penalty C/m, each A_r a signed sum of two
// rank-ones — and compares with Learn.
func TestSDPFrobMetric(t *testing.T) {
	d, ts := smallSet(t, "iris")
	const c = 10.0
	m := ts.Len()
	dim := d.Dim()
	p := &sdp.Problem{N: dim, Sigma: 1}
	for _, tr := range ts.Triplets {
		pv := make([]float64, dim)
		qv := make([]float64, dim)
		for k := 0; k < dim; k++ {
			pv[k] = d.X.At(tr.I, k) - d.X.At(tr.K, k)
			qv[k] = d.X.At(tr.I, k) - d.X.At(tr.J, k)
		}
		p.Constraints = append(p.Constraints, sdp.Constraint{
			A:       sdp.SymMatrix{RankOnes: []sdp.RankOne{{W: -1, Value: pv}, {W: 1, Value: qv}}},
			B:       -1,
			Penalty: c / float64(m),
		})
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			sol, err := sdp.Solve(context.Background(), p, sdp.Options{Method: sdp.Dense, Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Learn(context.Background(), d.X, ts, MetricOptions{C: c, Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			if !sol.Certified || sol.RelGap > 1e-6 {
				t.Errorf("SDP rel. gap %.3g (%s)", sol.RelGap, sol.Reason)
			}
			if math.Abs(sol.Primal-res.Primal) > 1e-6*math.Max(1, math.Abs(res.Primal)) {
				t.Errorf("SDP optimum %.10g, FrobMetric %.10g", sol.Primal, res.Primal)
			}
			if !mat.EqualApprox(sol.X(), res.M, 1e-3*mat.Norm(res.M, math.Inf(1))) {
				t.Errorf("SDP X* differs from FrobMetric M")
			}
		})
	}
}
