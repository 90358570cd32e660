package dualsolve

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// kinkDual is a separable piecewise quadratic with the shape of a degenerate
// SDP dual near its optimum: f(u) = Σ −s_i u_i + (L/2)·max(0, u_i − c_i)²,
// whose slope along −∇f stays at its initial value until the first kink
// (near 1e-4) and then grows by a factor L = 1e6 per unit step. The
// minimiser is u*_i = c_i + s_i/L; the certificate reports the known
// optimal value as the primal, so the gap is f(u) − f*.
type kinkDual struct {
	s, c  []float64
	l     float64
	cache float64
}

func newKink(n int) *kinkDual {
	p := &kinkDual{s: make([]float64, n), c: make([]float64, n), l: 1e6}
	for i := range p.s {
		p.s[i] = 0.01 * (1 + 0.5*math.Sin(float64(i)))
		p.c[i] = 1e-4 * (1 + float64(i)/float64(n))
	}
	return p
}

func (p *kinkDual) eval(u, grad []float64) (float64, error) {
	var f float64
	for i, v := range u {
		e := math.Max(0, v-p.c[i])
		f += -p.s[i]*v + 0.5*p.l*e*e
		grad[i] = -p.s[i] + p.l*e
	}
	p.cache = f
	return f, nil
}

// optimum returns f(u*).
func (p *kinkDual) optimum() float64 {
	var f float64
	for i := range p.s {
		f += -p.s[i]*p.c[i] - p.s[i]*p.s[i]/(2*p.l)
	}
	return f
}

func (p *kinkDual) certificate() (primal, dual float64) { return -p.optimum(), -p.cache }

// TestRecoverAbnormalStart: on the kinked dual, L-BFGS-B's first line search
// fails without accepting a step (the premise, checked on every backend),
// and Solve recovers with projected-gradient steps until it certifies.
func TestRecoverAbnormalStart(t *testing.T) {
	const n = 30
	for _, be := range enginetest.Backends(t) {
		t.Run(be.Name(), func(t *testing.T) {
			p := newKink(n)
			lower, upper := make([]float64, n), make([]float64, n)
			for i := range lower {
				lower[i], upper[i] = math.Inf(-1), math.Inf(1)
			}
			fn := func(x, g []float64) float64 { f, _ := p.eval(x, g); return f }
			r, _ := be.Minimize(context.Background(), engine.Problem{Func: fn, Lower: lower, Upper: upper}, make([]float64, n),
				engine.MinimizeSettings{M: 5, Factr: 1, Pgtol: -1, MaxIter: 100, MaxEval: 420})
			t.Logf("L-BFGS-B alone: %v after %d iterations, %d evaluations, f %.6g (f* %.6g)", r.Reason, r.Iterations, r.Evaluations, r.F, p.optimum())
			if r.Reason != engine.ReasonAbnormal || r.Iterations != 0 {
				t.Fatalf("premise: L-BFGS-B stopped %v after %d iterations; want an abnormal line search at the start", r.Reason, r.Iterations)
			}
			res, err := Solve(context.Background(), be, Problem{Lower: lower, Upper: upper, Eval: p.eval, Certificate: p.certificate},
				make([]float64, n), Config{GapTol: 1e-12, MaxIter: 500, Memory: 5, Restarts: 5})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Solve: %s after %d iterations, %d evaluations, gap %.3g", res.Reason, res.Iterations, res.Evaluations, RelGap(res.Primal, res.Dual))
			if !res.Certified {
				t.Fatalf("not certified: %s, gap %g", res.Reason, RelGap(res.Primal, res.Dual))
			}
		})
	}
}
