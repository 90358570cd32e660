package sdp

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestSDPInexactEvaluations solves the inequality form of the unfolding
// problem of a small Swiss roll (X = 0 strictly feasible, so it certifies)
// with the sparse method twice, with every evaluation at EigTol and with
// the default inexact evaluations, on both backends: both must certify and
// reach the same dual objective to 1e-8 (relative); the certificate the
// inexact solve reports must be the tight one (a fresh evaluation at
// EigTol of its U gives the same dual and gap); and the inexact solve must
// use fewer operator applications.
func TestSDPInexactEvaluations(t *testing.T) {
	x, _, _ := datasets.SwissRoll(150, 5)
	// MVU's scaling, and a σ large enough for a low-rank solution.
	p := scaledUnfolding(t, x, 1e3, true)
	m := len(p.Constraints)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			u0 := mvuStartPoint(t, p)
			base := Options{Method: Sparse, Backend: b, GapTol: 1e-9, FeasTol: 1e-5, MaxIter: 5000, U0: u0, NewtonSteps: -1, Seed: 3}
			exactOpt := base
			exactOpt.ExactEvals = true
			var sols [2]*Solution
			for i, opt := range []Options{exactOpt, base} {
				sol, err := Solve(context.Background(), p, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !sol.Certified {
					t.Fatalf("exact=%v: not certified (%s): gap %.3g, violation %.3g", opt.ExactEvals, sol.Reason, sol.RelGap, sol.MaxViolation)
				}
				sols[i] = sol
				t.Logf("exact=%v: %d iterations, %d evaluations, %d operator applications, %d factorizations, dual %.12g, gap %.3g, violation %.3g",
					opt.ExactEvals, sol.Iterations, sol.Evaluations, sol.OperatorProducts, sol.Factorizations, sol.Dual, sol.RelGap, sol.MaxViolation)
			}
			ex, in := sols[0], sols[1]
			if d := math.Abs(in.Dual-ex.Dual) / math.Max(1, math.Abs(ex.Dual)); d > 1e-8 {
				t.Errorf("dual objectives differ by %.3g (relative): inexact %.12g, exact %.12g", d, in.Dual, ex.Dual)
			}
			// The reported certificate is the tight one.
			ev, err := compileSDP(p, Options{Method: Sparse, Backend: b, InitRank: 8})
			if err != nil {
				t.Fatal(err)
			}
			ev.ctx = context.Background()
			if _, err := ev.eval(in.U, make([]float64, m)); err != nil {
				t.Fatal(err)
			}
			pr, du := ev.certificate()
			if math.Abs(du-in.Dual) > 1e-10*math.Max(1, math.Abs(du)) || math.Abs(pr-in.Primal) > 1e-10*math.Max(1, math.Abs(pr)) {
				t.Errorf("reported certificate (primal %.14g, dual %.14g), tight re-evaluation (%.14g, %.14g)", in.Primal, in.Dual, pr, du)
			}
			if in.OperatorProducts >= ex.OperatorProducts {
				t.Errorf("inexact evaluations: %d operator applications, exact %d: want fewer", in.OperatorProducts, ex.OperatorProducts)
			}
		})
	}
}
