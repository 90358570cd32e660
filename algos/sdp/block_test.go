package sdp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestSDPBlockEigensolver evaluates the dual of an unfolding problem along a
// sequence of nearby points, as L-BFGS-B does, with the sparse method on
// both eigensolvers — Lanczos from one start vector, and LOBPCG warm-started
// from the previous evaluation's block — and with the dense method: the
// objectives and gradients must agree to the eigensolver tolerance, and the
// block solver must report its operator products.
func TestSDPBlockEigensolver(t *testing.T) {
	x, _, _ := datasets.SwissRoll(120, 3)
	p := mvuProblem(t, x, 5, 10)
	m := len(p.Constraints)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			evs := make([]*dualEval, 3)
			for i, opt := range []Options{
				{Method: Dense, Backend: b},
				{Method: Sparse, Backend: b, InitRank: 8, EigTol: 1e-12},
				{Method: Sparse, Backend: b, InitRank: 8, EigTol: 1e-12, Eigensolver: Block},
			} {
				ev, err := compileSDP(p, opt)
				if err != nil {
					t.Fatal(err)
				}
				ev.ctx = context.Background()
				evs[i] = ev
			}
			rng := rand.New(rand.NewPCG(8, 9))
			u := make([]float64, m)
			for i := range u {
				u[i] = 0.3 + 0.05*rng.Float64() // a low-rank negative part
			}
			for step := 0; step < 4; step++ {
				for i := range u {
					u[i] += 0.002 * (rng.Float64() - 0.5)
				}
				var f [3]float64
				var g [3][]float64
				for i, ev := range evs {
					g[i] = make([]float64, m)
					var err error
					if f[i], err = ev.eval(u, g[i]); err != nil {
						t.Fatal(err)
					}
				}
				for i := 1; i < 3; i++ {
					if math.Abs(f[i]-f[0]) > 1e-8*math.Max(1, math.Abs(f[0])) {
						t.Errorf("step %d, solver %d: dual %.12g, dense %.12g", step, i, f[i], f[0])
					}
					var worst float64
					for j := range g[0] {
						worst = math.Max(worst, math.Abs(g[i][j]-g[0][j]))
					}
					if worst > 1e-6 {
						t.Errorf("step %d, solver %d: gradient differs by %.3g", step, i, worst)
					}
				}
			}
			if evs[2].applies == 0 {
				t.Error("the block eigensolver reported no operator products")
			}
			t.Logf("operator products over 4 evaluations: Lanczos %d, block %d", evs[1].applies, evs[2].applies)
		})
	}
}
