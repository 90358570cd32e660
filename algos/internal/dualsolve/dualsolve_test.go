package dualsolve

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// boxDual is the dual of the projection min_x ½‖x‖² s.t. x ≥ b: minimise
// f(u) = ½‖u‖² − bᵀu over u ≥ 0. The optimum is u* = max(b, 0), with
// primal and dual value ½‖u*‖². Its certificate recovers the feasible
// primal point x = max(u, b), so the gap is positive away from u* and zero
// at it: the known answer the driver and the Newton polish must reach.
type boxDual struct {
	b, cache []float64
}

func (p *boxDual) eval(u, grad []float64) (float64, error) {
	var f float64
	for i, v := range u {
		f += 0.5*v*v - p.b[i]*v
		grad[i] = v - p.b[i]
	}
	p.cache = append(p.cache[:0], u...)
	return f, nil
}

func (p *boxDual) certificate() (primal, dual float64) {
	for i, v := range p.cache {
		x := math.Max(v, p.b[i])
		primal += 0.5 * x * x
		dual += p.b[i]*v - 0.5*v*v
	}
	return primal, dual
}

func newBox(n int) *boxDual {
	p := &boxDual{b: make([]float64, n)}
	for i := range p.b {
		p.b[i] = math.Sin(float64(3*i+1)) * float64(i%7+1)
	}
	return p
}

func TestSolveBoxDual(t *testing.T) {
	const n = 50
	for _, be := range enginetest.Backends(t) {
		t.Run(be.Name(), func(t *testing.T) {
			p := newBox(n)
			lower, upper := make([]float64, n), make([]float64, n)
			for i := range upper {
				upper[i] = math.Inf(1)
			}
			res, err := Solve(context.Background(), be, Problem{Lower: lower, Upper: upper, Eval: p.eval, Certificate: p.certificate},
				make([]float64, n), Config{GapTol: 1e-10, MaxIter: 500, Memory: 5, Restarts: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Certified {
				t.Fatalf("not certified: %s, gap %g", res.Reason, RelGap(res.Primal, res.Dual))
			}
			if g := RelGap(res.Primal, res.Dual); g < 0 || g > 1e-10 {
				t.Errorf("relative gap %g", g)
			}
			for i, v := range res.U {
				if want := math.Max(p.b[i], 0); math.Abs(v-want) > 1e-4 {
					t.Errorf("u[%d] = %g, want %g", i, v, want)
				}
			}
		})
	}
}

// TestProjectedNewtonBoxDual: with the exact Hessian (the identity) one
// projected Newton step lands on u* from any start.
func TestProjectedNewtonBoxDual(t *testing.T) {
	const n = 40
	p := newBox(n)
	lower, upper := make([]float64, n), make([]float64, n)
	for i := range upper {
		upper[i] = math.Inf(1)
	}
	u := make([]float64, n)
	for i := range u {
		u[i] = 1
	}
	merit := func() float64 { pr, du := p.certificate(); return RelGap(pr, du) }
	np := NewtonProblem{
		Eval: p.eval,
		Hessian: func() (func(out, v []float64) error, func([]float64), float64, error) {
			return func(out, v []float64) error { copy(out, v); return nil }, func([]float64) {}, 0, nil
		},
		Merit: merit, Target: 1e-14,
		ActiveEps: func(int, float64) float64 { return 0 },
		MinStep:   1e-10,
	}
	if _, err := ProjectedNewton(context.Background(), np, u, lower, upper, PolishConfig{Steps: 5, CGIters: 2 * n}); err != nil {
		t.Fatal(err)
	}
	for i, v := range u {
		if want := math.Max(p.b[i], 0); math.Abs(v-want) > 1e-12 {
			t.Errorf("u[%d] = %g, want %g", i, v, want)
		}
	}
	if g := merit(); g > 1e-14 {
		t.Errorf("relative gap %g after Newton", g)
	}
}

// TestSolveCancelled: a cancelled context stops the driver with an error
// wrapping context.Canceled.
func TestSolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := newBox(10)
	lower, upper := make([]float64, 10), make([]float64, 10)
	for i := range upper {
		upper[i] = math.Inf(1)
	}
	_, err := Solve(ctx, engine.Default(), Problem{Lower: lower, Upper: upper, Eval: p.eval, Certificate: p.certificate},
		make([]float64, 10), Config{GapTol: 1e-10, MaxIter: 500, Memory: 5})
	if err == nil || !errorsIsCanceled(err) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func errorsIsCanceled(err error) bool { return errors.Is(err, context.Canceled) }
