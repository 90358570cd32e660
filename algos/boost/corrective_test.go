package boost

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// storedTerms is the definition the evaluators are checked against: the
// margins H_j = (⟨A_r, v_j v_jᵀ⟩)_r of every term, stored.
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

// TestTermsAgree: the evaluators of the corrective re-solves (the
// projections P = X V, the D×D one from X = Σ_j w_j v_j v_jᵀ and one
// weighted Gram matrix, and the switch between them) give the margins
// ρ = H w and the products Hᵀp of the stored margins H, on both backends,
// after the projections' storage has grown and after a truncation.
func TestTermsAgree(t *testing.T) {
	x, y := standardized(t, "wine")
	evaluators := []struct {
		name string
		new  func(*pricer) terms
	}{
		{"projections", func(pr *pricer) terms { return newProjectedTerms(pr) }},
		{"dense", func(pr *pricer) terms {
			t := newTerms(pr).(*projectedTerms)
			t.crossover = -1
			return t
		}},
		{"switch", func(pr *pricer) terms {
			t := newTerms(pr).(*projectedTerms)
			t.crossover = 10
			return t
		}},
		{"auto", newTerms},
	}
	for _, b := range enginetest.Backends(t) {
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
		for _, ev := range evaluators {
			t.Run(b.Name()+"/"+ev.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(9, 10))
				fast, slow := ev.new(pr), &storedTerms{}
				add := func(k int) {
					for ; k > 0; k-- {
						v := make([]float64, pr.d)
						for i := range v {
							v[i] = rng.NormFloat64()
						}
						normalize(v)
						h := make([]float64, ts.Len())
						if err := pr.margins(h, v); err != nil {
							t.Fatal(err)
						}
						fast.add(v, h)
						slow.add(v, h)
					}
				}
				add(7)
				checkTerms(t, rng, fast, slow, ts.Len())
				add(14) // past the projections' first capacity of 16 terms
				checkTerms(t, rng, fast, slow, ts.Len())
				fast.truncate(3)
				slow.truncate(3)
				checkTerms(t, rng, fast, slow, ts.Len())
				add(2)
				checkTerms(t, rng, fast, slow, ts.Len())
			})
		}
	}
}

// checkTerms compares the margins and gradient products of fast with
// those of slow at random weights (one of them zero) and triplet weights.
func checkTerms(t *testing.T, rng *rand.Rand, fast terms, slow *storedTerms, m int) {
	t.Helper()
	terms := len(slow.hs)
	w := make([]float64, terms)
	for j := range w {
		w[j] = rng.Float64()
	}
	w[terms/2] = 0
	r1, r2 := make([]float64, m), make([]float64, m)
	t1, err := fast.margins(r1, w)
	if err != nil {
		t.Fatal(err)
	}
	t2, _ := slow.margins(r2, w)
	if math.Abs(t1-t2) > 1e-14*t2 {
		t.Errorf("%d terms: trace %.17g, want %.17g", terms, t1, t2)
	}
	var scale float64
	for r := range r2 {
		scale = math.Max(scale, math.Abs(r2[r]))
	}
	for r := range r1 {
		if math.Abs(r1[r]-r2[r]) > 1e-12*scale {
			t.Fatalf("%d terms: margin %d: %.17g, want %.17g", terms, r, r1[r], r2[r])
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
			t.Errorf("%d terms: Σ p H_%d = %.17g, want %.17g", terms, j, g1[j], g2[j])
		}
	}
}

// BenchmarkTerms times one evaluation (margins and gradient products) of
// the corrective re-solve by each evaluator and number of terms, on
// 20,000 points in 164 dimensions (MNIST's principal components) with
// their 3×3 nearest-neighbour triplets: the data behind projectedCrossover.
func BenchmarkTerms(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n, d = 20000, 164
	x, ts := classTriplets(b, rng, n, d, 10, 0.5)
	be := engine.Default()
	pr, err := newPricer(be, x, ts, Options{Eig: EigDense})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d points, %d triplets, %d pairs, crossover at %d terms", n, ts.Len(), len(ts.Pairs), projectedCrossover(n, d, len(ts.Pairs)))
	m := ts.Len()
	p, rho := make([]float64, m), make([]float64, m)
	for r := range p {
		p[r] = rng.Float64()
	}
	for _, terms := range []int{50, 100, 200, 400} {
		for _, dense := range []bool{false, true} {
			t := newTerms(pr).(*projectedTerms)
			t.crossover = math.MaxInt
			if dense {
				t.crossover = -1
			}
			w := make([]float64, terms)
			for j := range w {
				v := make([]float64, d)
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				normalize(v)
				t.add(v, nil)
				w[j] = rng.Float64()
			}
			g := make([]float64, terms)
			name := map[bool]string{false: "projections", true: "dense"}[dense]
			b.Run(fmt.Sprintf("%s/J=%d", name, terms), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := t.margins(rho, w); err != nil {
						b.Fatal(err)
					}
					if err := t.dots(g, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
