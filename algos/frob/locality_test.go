package frob

import (
	"context"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/internal/locality"
	"gonum.org/v1/gonum/mat"
)

// TestLearnRenumbered checks that training on the points renumbered for
// locality (what Learn does for large data) solves the same problem: the
// certificate recomputed on the original numbering holds, and the metric,
// unique since the primal is strictly convex, agrees with the one learned
// in the original order to within what the duality gap allows.
func TestLearnRenumbered(t *testing.T) {
	for _, set := range []string{"iris", "wine"} {
		d, ts := smallSet(t, set)
		for _, b := range enginetest.Backends(t) {
			t.Run(set+"/"+b.Name(), func(t *testing.T) {
				opt := MetricOptions{C: 100, Backend: b, GapTol: 1e-12}
				plain, err := Learn(context.Background(), d.X, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				old := locality.MinBytes
				locality.MinBytes = 0
				defer func() { locality.MinBytes = old }()
				res, err := Learn(context.Background(), d.X, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Certified {
					t.Fatalf("renumbered run not certified: %s, gap %.3g", res.Reason, res.RelGap)
				}
				if g := checkCertificate(t, d.X, ts, res, opt.C); !(g <= 1e-10) {
					t.Errorf("explicit relative gap %.3g on the original numbering, want ≤ 1e-10", g)
				}
				var diff mat.Dense
				diff.Sub(plain.M, res.M)
				if rel := mat.Norm(&diff, 2) / mat.Norm(plain.M, 2); rel > 1e-5 {
					t.Errorf("metrics learned in the two orders differ by %.3g (relative)", rel)
				}
			})
		}
	}
}
