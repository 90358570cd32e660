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

// nonNegative returns the bounds 0 ≤ u < ∞ of n variables.
func nonNegative(n int) (lower, upper []float64) {
	lower, upper = make([]float64, n), make([]float64, n)
	for i := range upper {
		upper[i] = math.Inf(1)
	}
	return lower, upper
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
			lower, upper := nonNegative(n)
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
	lower, upper := nonNegative(n)
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

// inexactBox is boxDual evaluated with an error: at accuracy level ℓ the
// objective is f(u) − 100ℓ·(1 + ‖u‖²) (with its gradient), an underestimate
// that makes the reported dual, and so the gap, look better than it is, as
// a loose eigensolver tolerance can.
type inexactBox struct {
	*boxDual
	level  float64
	levels []float64 // the level of every evaluation
	cached float64   // the level of the cached evaluation
}

func (p *inexactBox) eval(u, grad []float64) (float64, error) {
	f, _ := p.boxDual.eval(u, grad)
	var s float64
	for i, v := range u {
		s += v * v
		grad[i] -= 200 * p.level * v
	}
	p.levels = append(p.levels, p.level)
	p.cached = p.level
	return f - 100*p.level*(1+s), nil
}

func (p *inexactBox) certificate() (primal, dual float64) {
	primal, dual = p.boxDual.certificate()
	var s float64
	for _, v := range p.cache {
		s += v * v
	}
	return primal, dual + 100*p.cached*(1+s)
}

// accuracy is the schedule of the sdp evaluator: 1% of the cached point's
// gap, at most 1e-2, never loosened; the final level is exact (0).
func (p *inexactBox) accuracy() *Accuracy {
	want := func() float64 {
		if p.cache == nil {
			return 1e-2
		}
		pr, du := p.certificate()
		return math.Min(1e-2, 0.01*math.Abs(RelGap(pr, du)))
	}
	return &Accuracy{
		Set: func(final bool) bool {
			w := 0.0
			if !final {
				w = want()
			}
			if w < p.level {
				p.level = w
				return true
			}
			return false
		},
		Stale: func() bool { return want() < p.level/10 },
		Final: func() bool { return p.level == 0 },
	}
}

// TestSolveInexactBoxDual: with inexact evaluations the driver certifies
// only at the final accuracy (the loose underestimate passes the gap test
// early and must not be trusted), reaches the exact solution, raises the
// accuracy monotonically, and hands back the tight certificate.
func TestSolveInexactBoxDual(t *testing.T) {
	const n = 50
	for _, be := range enginetest.Backends(t) {
		t.Run(be.Name(), func(t *testing.T) {
			p := &inexactBox{boxDual: newBox(n), level: math.Inf(1)}
			lower, upper := nonNegative(n)
			// Near u*: the first, loose evaluations pass the gap test.
			u0 := make([]float64, n)
			for i := range u0 {
				u0[i] = math.Max(p.b[i], 0) + 0.1
			}
			res, err := Solve(context.Background(), be, Problem{Lower: lower, Upper: upper, Eval: p.eval, Certificate: p.certificate, Accuracy: p.accuracy()},
				u0, Config{GapTol: 1e-10, MaxIter: 500, Memory: 5, Restarts: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Certified {
				t.Fatalf("not certified: %s, gap %g", res.Reason, RelGap(res.Primal, res.Dual))
			}
			if p.cached != 0 {
				t.Errorf("the returned certificate was computed at level %g, want the exact one", p.cached)
			}
			pr, du := p.boxDual.certificate()
			if pr != res.Primal || du != res.Dual {
				t.Errorf("reported certificate (%g, %g), exact (%g, %g)", res.Primal, res.Dual, pr, du)
			}
			for i, v := range res.U {
				if want := math.Max(p.b[i], 0); math.Abs(v-want) > 1e-4 {
					t.Errorf("u[%d] = %g, want %g", i, v, want)
				}
			}
			loose := 0
			for i, l := range p.levels {
				if l > 0 {
					loose++
				}
				if i > 0 && l > p.levels[i-1] {
					t.Fatalf("evaluation %d at level %g after %g: the accuracy was loosened", i, l, p.levels[i-1])
				}
			}
			if loose == 0 || loose == len(p.levels) {
				t.Errorf("%d of %d evaluations inexact: want some, not all", loose, len(p.levels))
			}
			t.Logf("%d evaluations, %d inexact, %s", len(p.levels), loose, res.Reason)
		})
	}
}

// TestSolveJump: a problem that offers the optimum u* = max(b, 0) through
// Jump after its third evaluation must end certified there, in a round that
// starts at u*, without spending a restart.
func TestSolveJump(t *testing.T) {
	const n = 50
	for _, be := range enginetest.Backends(t) {
		t.Run(be.Name(), func(t *testing.T) {
			p := newBox(n)
			lower, upper := nonNegative(n)
			opt := make([]float64, n)
			for i, v := range p.b {
				opt[i] = math.Max(v, 0)
			}
			evals, jumps := 0, 0
			eval := func(u, grad []float64) (float64, error) {
				evals++
				return p.eval(u, grad)
			}
			jump := func() []float64 {
				if evals != 3 {
					return nil
				}
				jumps++
				return opt
			}
			res, err := Solve(context.Background(), be, Problem{Lower: lower, Upper: upper, Eval: eval, Certificate: p.certificate, Jump: jump},
				make([]float64, n), Config{GapTol: 1e-12, MaxIter: 500, Memory: 5, Restarts: 0})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Certified || jumps != 1 {
				t.Fatalf("certified %v after %d jumps (%s)", res.Certified, jumps, res.Reason)
			}
			if res.Evaluations != 4 {
				t.Errorf("%d evaluations, want 4 (three, then the jump point)", res.Evaluations)
			}
			for i, v := range res.U {
				if v != opt[i] {
					t.Fatalf("u[%d] = %g, want the jump point's %g", i, v, opt[i])
				}
			}
		})
	}
}

// TestProjectedNewtonCancelledInCG: a Hessian product costs about an
// evaluation and CG may take hundreds, so a cancellation during CG stops
// the polish at the next product, not at the next Newton step.
func TestProjectedNewtonCancelledInCG(t *testing.T) {
	const n = 40
	p := newBox(n)
	lower, upper := nonNegative(n)
	u := make([]float64, n)
	for i := range u {
		u[i] = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	products, after := 0, 0
	np := NewtonProblem{
		Eval: p.eval,
		Hessian: func() (func(out, v []float64) error, func([]float64), float64, error) {
			// An ill-conditioned diagonal: CG needs about n products.
			return func(out, v []float64) error {
				products++
				if ctx.Err() != nil {
					after++
				}
				if products == 3 {
					cancel()
				}
				for i := range v {
					out[i] = math.Pow(10, float64(i%8)) * v[i]
				}
				return nil
			}, func([]float64) {}, 0, nil
		},
		Merit:     func() float64 { pr, du := p.certificate(); return RelGap(pr, du) },
		Target:    1e-14,
		ActiveEps: func(int, float64) float64 { return 0 },
		MinStep:   1e-10,
	}
	_, err := ProjectedNewton(ctx, np, u, lower, upper, PolishConfig{Steps: 5, CGIters: 2 * n})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	if after != 0 || products != 3 {
		t.Errorf("%d Hessian products, %d of them after the cancellation; want 3 and 0", products, after)
	}
}
