package boost

import (
	"context"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
)

// TestPhases checks BoostMetric's phase profile against the run it
// describes: one eigensolve per pricing step (len(Lambda)), one Gram per
// dense pricing step and none on the Lanczos path (where the operator
// products are counted instead, at least one per solve; a corrective run
// may price its last step twice), one margin pass
// per term, and disjoint phases whose times add up to no more than the
// call's wall time.
func TestPhases(t *testing.T) {
	x, y := circles(1, 60, 1)
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"dense stage-wise", Options{Eig: EigDense, Precision: PrecisionDouble, Iters: 40}},
		{"lanczos stage-wise", Options{Eig: EigLanczos, Precision: PrecisionDouble, Iters: 40}},
		{"dense corrective", Options{Eig: EigDense, Mode: Corrective, Precision: PrecisionDouble, Iters: 15}},
	} {
		start := time.Now()
		res, err := BoostMetric(context.Background(), x, ts, c.opt)
		wall := time.Since(start).Seconds()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := res.Phases
		t.Logf("%s: %d iterations, %d pricing steps, %+v", c.name, res.Iterations, len(res.Lambda), p)
		// A corrective run that converges after a bounded re-solve prices
		// that step twice and keeps one λ.
		eigsOK := p.Eigs == len(res.Lambda) || (c.opt.Mode == Corrective && p.Eigs == len(res.Lambda)+1)
		if !eigsOK || p.MarginPasses != res.Iterations || p.Grams32 != 0 {
			t.Errorf("%s: %d eigensolves, %d margin passes, %d single-precision Grams for %d pricing steps and %d terms",
				c.name, p.Eigs, p.MarginPasses, p.Grams32, len(res.Lambda), res.Iterations)
		}
		if n, _ := x.Dims(); p.GramRows > p.Grams*n || (p.Grams > 0 && p.GramRows < 1) {
			t.Errorf("%s: %d rows over %d Grams of %d rows", c.name, p.GramRows, p.Grams, n)
		}
		if c.opt.Eig == EigDense && (p.Grams != p.Eigs || p.Products != 0) {
			t.Errorf("%s: %d Grams, %d operator products for %d eigensolves", c.name, p.Grams, p.Products, p.Eigs)
		}
		if c.opt.Eig == EigLanczos && (p.Grams != 0 || p.Products < p.Eigs) {
			t.Errorf("%s: %d Grams, %d operator products for %d eigensolves", c.name, p.Grams, p.Products, p.Eigs)
		}
		for _, v := range []float64{p.Gram, p.Eig, p.Margins, p.Weights} {
			if v < 0 {
				t.Errorf("%s: negative phase time in %+v", c.name, p)
			}
		}
		if sum := p.Gram + p.Eig + p.Margins + p.Weights; sum > wall {
			t.Errorf("%s: phases add up to %g s, the call took %g s", c.name, sum, wall)
		}
	}
}
