package boost

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestTermsAgree: the D×D evaluator of the corrective re-solves (margins
// from X = Σ w_j v_j v_jᵀ, gradient from one weighted Gram matrix) gives the
// margins ρ = H w and the products Hᵀp of the stored margins H, on both
// backends.
func TestTermsAgree(t *testing.T) {
	x, y := standardized(t, "wine")
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			ts, err := makeTriplets(b, x, y, 3)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := newPricer(b, x, ts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !pr.dense {
				t.Fatal("wine (D = 13) should use the dense pricer")
			}
			m := ts.Len()
			rng := rand.New(rand.NewPCG(9, 10))
			fast, slow := newTerms(pr), &storedTerms{}
			const terms = 7
			w := make([]float64, terms)
			for j := 0; j < terms; j++ {
				v := make([]float64, pr.d)
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				normalize(v)
				h := make([]float64, m)
				if err := pr.margins(h, v); err != nil {
					t.Fatal(err)
				}
				fast.add(v, h)
				slow.add(v, h)
				w[j] = rng.Float64()
			}
			w[2] = 0
			r1, r2 := make([]float64, m), make([]float64, m)
			t1, err := fast.margins(r1, w)
			if err != nil {
				t.Fatal(err)
			}
			t2, _ := slow.margins(r2, w)
			if math.Abs(t1-t2) > 1e-15*t2 {
				t.Errorf("trace %.17g, want %.17g", t1, t2)
			}
			var scale float64
			for r := range r2 {
				scale = math.Max(scale, math.Abs(r2[r]))
			}
			for r := range r1 {
				if math.Abs(r1[r]-r2[r]) > 1e-12*scale {
					t.Fatalf("margin %d: %.17g, want %.17g", r, r1[r], r2[r])
				}
			}
			p := make([]float64, m)
			for r := range p {
				p[r] = rng.Float64()
			}
			g1, g2 := make([]float64, terms), make([]float64, terms)
			if err := fast.dots(g1, p); err != nil {
				t.Fatal(err)
			}
			slow.dots(g2, p)
			for j := range g1 {
				var s float64
				for r := range p {
					s += math.Abs(p[r] * slow.hs[j][r])
				}
				if math.Abs(g1[j]-g2[j]) > 1e-12*s {
					t.Errorf("Σ p H_%d = %.17g, want %.17g", j, g1[j], g2[j])
				}
			}
			fast.truncate(3)
			if got := len(fast.(*metricTerms).vs); got != 3 {
				t.Errorf("%d terms after truncate(3)", got)
			}
		})
	}
}
