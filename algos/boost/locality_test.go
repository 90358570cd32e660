package boost

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/internal/locality"
	"gonum.org/v1/gonum/mat"
)

// TestRenumbered checks that BoostMetric (both losses, both modes) learns
// the same metric on points renumbered for locality, as it does for large
// data: the problem is the same, only the order of sums changes.
func TestRenumbered(t *testing.T) {
	x, y := standardized(t, "iris")
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	_, d := x.Dims()
	for _, tc := range []struct {
		name string
		opt  Options
		tol  float64 // relative difference of the metrics
	}{
		// Stage-wise: the same greedy path, rounding only.
		{"exp", Options{Loss: Exp}, 1e-8},
		{"logistic", Options{Loss: Logistic}, 1e-8},
		// Corrective: every re-solve is an L-BFGS-B run stopped by its own
		// tolerance, which rounding moves within that tolerance.
		{"corrective", Options{Loss: Exp, Mode: Corrective}, 1e-6},
	} {
		for _, b := range enginetest.Backends(t) {
			t.Run(tc.name+"/"+b.Name(), func(t *testing.T) {
				opt := tc.opt
				opt.Backend = b
				plain, err := BoostMetric(context.Background(), x, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				old := locality.MinBytes
				locality.MinBytes = 0
				defer func() { locality.MinBytes = old }()
				res, err := BoostMetric(context.Background(), x, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				// Renumbering sums the triplets in another order: the
				// iterations are bounded, not equated. Corrective runs reach
				// the same optimum, but the iteration at which its stopping
				// test fires there depends on rounding.
				if tc.opt.Mode == Stagewise && (res.Stop != plain.Stop || res.Iterations < plain.Iterations-1 || res.Iterations > plain.Iterations+1) {
					t.Errorf("renumbered: %v after %d iterations; original order: %v after %d", res.Stop, res.Iterations, plain.Stop, plain.Iterations)
				}
				objTol := 1e-9
				if res.Iterations != plain.Iterations {
					// One term apart: only the objectives compare.
					objTol = 1e-6
				}
				if rel := math.Abs(res.Objective-plain.Objective) / math.Max(1, math.Abs(plain.Objective)); rel > objTol {
					t.Errorf("objective %v renumbered, %v in the original order", res.Objective, plain.Objective)
				}
				if res.Iterations != plain.Iterations {
					return
				}
				var diff mat.Dense
				diff.Sub(plain.Matrix(d), res.Matrix(d))
				if rel := mat.Norm(&diff, 2) / mat.Norm(plain.Matrix(d), 2); rel > tc.tol {
					t.Errorf("metrics learned in the two orders differ by %.3g (relative)", rel)
				}
			})
		}
	}
}
