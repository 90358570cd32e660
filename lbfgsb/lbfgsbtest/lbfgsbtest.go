// Package lbfgsbtest is the conformance suite of bound-constrained
// minimisers, in the manner of gonum's testlapack: lbfgsb's Fortran and
// pure-Go solvers run it, and so does every engine backend (through
// engine/enginetest). It checks the KKT conditions (projected gradient
// below pgtol, evaluated afresh) and the known answers of extended
// Rosenbrock (free, with active lower, upper and two-sided bounds, n up to
// 1000), the driver1 problem of the L-BFGS-B distribution, a box-constrained
// quadratic and non-negative least squares; ±Inf bounds against missing
// ones, one-sided and fixed variables; every stop reason (limits, callback,
// cancellation, non-finite values, abnormal line search) with a typed error
// and the best point; convergence winning over a limit reached at the same
// iterate; the progress callback; bitwise determinism, also under
// concurrent use; an objective that scribbles on its argument; and the
// invalid arguments.
package lbfgsbtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/lbfgsb"
)

// minCase is a bound-constrained test problem with a starting point and
// settings, and the analytic answers it has, if any.
type minCase struct {
	name  string
	p     engine.Problem
	x0    []float64
	s     engine.MinimizeSettings
	check func(t *testing.T, res engine.MinimizeResult)
}

// Rosenbrock is the extended Rosenbrock function of Moré, Garbow and
// Hillstrom: Σ_pairs (1 − x_{2i})² + 100(x_{2i+1} − x_{2i}²)², n even.
func Rosenbrock(x, g []float64) float64 {
	var f float64
	for i := 0; i+1 < len(x); i += 2 {
		t1 := 1 - x[i]
		t2 := 10 * (x[i+1] - x[i]*x[i])
		g[i+1] = 20 * t2
		g[i] = -2 * (x[i]*g[i+1] + t1)
		f += t1*t1 + t2*t2
	}
	return f
}

// RosenbrockStart is the standard starting point (−1.2, 1, −1.2, 1, …).
func RosenbrockStart(n int) []float64 {
	x := make([]float64, n)
	for i := 0; i+1 < n; i += 2 {
		x[i], x[i+1] = -1.2, 1
	}
	return x
}

// driver1 is the problem of driver1.f in the L-BFGS-B 3.0 distribution: a
// chained Rosenbrock-like function with bounds on every variable, minimum 0
// at x = 1 (on the lower bounds of the odd variables), with the
// distribution's settings (m = 5, factr = 1e7, pgtol = 1e-5).
func driver1(n int) minCase {
	l, u, x0 := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			l[i], u[i] = 1, 100
		} else {
			l[i], u[i] = -100, 100
		}
		x0[i] = 3
	}
	fn := func(x, g []float64) float64 {
		f := 0.25 * (x[0] - 1) * (x[0] - 1)
		for i := 1; i < n; i++ {
			t := x[i] - x[i-1]*x[i-1]
			f += t * t
		}
		f *= 4
		t1 := x[1] - x[0]*x[0]
		g[0] = 2*(x[0]-1) - 16*x[0]*t1
		for i := 1; i < n-1; i++ {
			t2 := t1
			t1 = x[i+1] - x[i]*x[i]
			g[i] = 8*t2 - 16*x[i]*t1
		}
		g[n-1] = 8 * t1
		return f
	}
	return minCase{name: "driver1", p: engine.Problem{Func: fn, Lower: l, Upper: u}, x0: x0,
		s: engine.MinimizeSettings{M: 5, Factr: 1e7, Pgtol: 1e-5}}
}

// quadratic is a random strictly convex quadratic ½xᵀAx + bᵀx with
// A = BᵀB/n + μI, on the box [lo, hi]ⁿ (either side may be infinite).
func quadratic(n int, seed uint64, mu, lo, hi float64) minCase {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bm := make([]float64, n*n)
	for i := range bm {
		bm[i] = rng.NormFloat64()
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += bm[k*n+i] * bm[k*n+j]
			}
			s /= float64(n)
			if i == j {
				s += mu
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = 2 * rng.NormFloat64()
	}
	fn := func(x, g []float64) float64 {
		var f float64
		for i := 0; i < n; i++ {
			var s float64
			for j, v := range a[i*n : i*n+n] {
				s += v * x[j]
			}
			g[i] = s + b[i]
			f += x[i] * (0.5*s + b[i])
		}
		return f
	}
	l, u := make([]float64, n), make([]float64, n)
	for i := range l {
		l[i], u[i] = lo, hi
	}
	return minCase{name: "quadratic", p: engine.Problem{Func: fn, Lower: l, Upper: u}, x0: make([]float64, n),
		s: engine.MinimizeSettings{Factr: 10, Pgtol: 1e-8}}
}

// nnls is non-negative least squares ½‖Ax − b‖², x ≥ 0, for a random
// rows×cols A with N(0, 1/rows) entries and b = A·x_true + noise, where x_true
// has negative entries so that bounds are active at the solution. Its
// objective keeps a scratch buffer: one instance serves one solve at a time.
func nnls(rows, cols int, seed uint64) minCase {
	rng := rand.New(rand.NewPCG(seed, 0x243f6a8885a308d3))
	a := make([]float64, rows*cols)
	sc := 1 / math.Sqrt(float64(rows))
	for i := range a {
		a[i] = sc * rng.NormFloat64()
	}
	xt := make([]float64, cols)
	for i := range xt {
		xt[i] = rng.NormFloat64()
	}
	b := make([]float64, rows)
	for i := 0; i < rows; i++ {
		var s float64
		for j := 0; j < cols; j++ {
			s += a[i*cols+j] * xt[j]
		}
		b[i] = s + 0.1*rng.NormFloat64()
	}
	res := make([]float64, rows)
	fn := func(x, g []float64) float64 {
		var f float64
		for i := 0; i < rows; i++ {
			s := -b[i]
			for j, v := range a[i*cols : i*cols+cols] {
				s += v * x[j]
			}
			res[i] = s
			f += 0.5 * s * s
		}
		for j := range g {
			g[j] = 0
		}
		for i := 0; i < rows; i++ {
			ri := res[i]
			for j, v := range a[i*cols : i*cols+cols] {
				g[j] += v * ri
			}
		}
		return f
	}
	return minCase{name: "nnls", p: engine.Problem{Func: fn, Lower: make([]float64, cols)}, x0: make([]float64, cols),
		s: engine.MinimizeSettings{Factr: 10, Pgtol: 1e-10}}
}

// rosenbrockCases are extended Rosenbrock of size n, free and with active
// upper, lower and two-sided bounds, converging on the projected gradient.
func rosenbrockCases(n int) []minCase {
	set := engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}
	inf := math.Inf(1)
	up, lo, bl, bu := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range up {
		up[i], lo[i] = inf, -inf
		if i%2 == 0 {
			up[i] = 0.5
		} else {
			lo[i] = 2
		}
		bl[i], bu[i] = -2, 0.8
	}
	name := func(s string) string { return fmt.Sprintf("rosenbrock/n=%d/%s", n, s) }
	return []minCase{
		{name("free"), engine.Problem{Func: Rosenbrock}, RosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// Minimum 0 at x = 1.
				if res.F > 1e-12 {
					t.Errorf("f = %g, want ≈ 0", res.F)
				}
				for i, v := range res.X {
					if math.Abs(v-1) > 1e-5 {
						t.Errorf("x[%d] = %v, want 1", i, v)
						break
					}
				}
			}},
		{name("upper"), engine.Problem{Func: Rosenbrock, Upper: up}, RosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// x_{2i} ≤ 0.5 gives (0.5, 0.25) per pair and f = 0.25 per pair.
				if want := 0.25 * float64(n/2); math.Abs(res.F-want) > 1e-10*want {
					t.Errorf("f = %.15g, want %g", res.F, want)
				}
				for i := 0; i < n; i += 2 {
					// Active at its bound: exactly 0.5 in the Go port; the
					// Fortran code, whose dot products go through the
					// machine's BLAS kernels, can stop a few ulps inside
					// (0.49999999999999845 with OpenBLAS 0.3.21 on one
					// AMD EPYC kind), never outside.
					if res.X[i] > 0.5 || 0.5-res.X[i] > 1e-14 || math.Abs(res.X[i+1]-0.25) > 1e-8 {
						t.Errorf("pair %d = (%v, %v), want (0.5, 0.25)", i/2, res.X[i], res.X[i+1])
						break
					}
				}
			}},
		{name("lower"), engine.Problem{Func: Rosenbrock, Lower: lo}, RosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// x_{2i+1} ≥ 2 is active.
				for i := 1; i < n; i += 2 {
					if res.X[i] != 2 {
						t.Errorf("x[%d] = %v, want the bound 2", i, res.X[i])
						break
					}
				}
			}},
		{name("box"), engine.Problem{Func: Rosenbrock, Lower: bl, Upper: bu}, RosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// [−2, 0.8] gives (0.8, 0.64) per pair, f = 0.04 per pair.
				if want := 0.04 * float64(n/2); math.Abs(res.F-want) > 1e-10*want {
					t.Errorf("f = %.15g, want %g", res.F, want)
				}
			}},
	}
}

// minCases returns the acceptance problems, with settings under which the
// solve converges on the projected gradient: extended Rosenbrock for n = 2,
// 100 and 1000, driver1, a random box-constrained quadratic with a mix of
// active bounds and a random non-negative least-squares problem.
func minCases() []minCase {
	var cases []minCase
	for _, n := range []int{2, 100, 1000} {
		cases = append(cases, rosenbrockCases(n)...)
	}
	d1 := driver1(25)
	d1.s = engine.MinimizeSettings{M: 5, Factr: -1, Pgtol: 1e-7}
	d1.check = func(t *testing.T, res engine.MinimizeResult) {
		if res.F > 1e-12 {
			t.Errorf("f = %g, want ≈ 0", res.F)
		}
	}
	q := quadratic(500, 1, 0.1, -1, 1)
	q.s = engine.MinimizeSettings{Factr: -1, Pgtol: 1e-6}
	q.check = func(t *testing.T, res engine.MinimizeResult) {
		active := 0
		for _, v := range res.X {
			if v == -1 || v == 1 {
				active++
			}
		}
		if active == 0 || active == len(res.X) {
			t.Errorf("%d of %d bounds active: the problem should mix", active, len(res.X))
		}
	}
	nn := nnls(2000, 300, 1)
	nn.s = engine.MinimizeSettings{Factr: -1, Pgtol: 1e-6}
	nn.check = func(t *testing.T, res engine.MinimizeResult) {
		// g ≥ 0 on the active set; complementarity: a positive variable
		// has zero gradient.
		g := make([]float64, len(res.X))
		nn.p.Func(append([]float64(nil), res.X...), g)
		zeros := 0
		for j, v := range res.X {
			switch {
			case v < 0:
				t.Errorf("x[%d] = %g < 0", j, v)
			case v == 0:
				zeros++
				if g[j] < -1e-6 {
					t.Errorf("g[%d] = %g < 0 at an active bound", j, g[j])
				}
			case v > 1e-6 && math.Abs(g[j]) > 1e-6:
				t.Errorf("x[%d] = %g > 0 with g[%d] = %g", j, v, j, g[j])
			}
		}
		if zeros == 0 {
			t.Errorf("no active bounds: the problem should have some")
		}
	}
	return append(cases, d1, q, nn)
}

// KKTViolation evaluates the gradient afresh at x and returns the largest
// violation of the first-order optimality conditions of min f s.t.
// l ≤ x ≤ u, |x_i − P(x_i − g_i)| (P the projection onto the box): zero
// exactly at a KKT point; +Inf if x is outside the box.
func KKTViolation(p engine.Problem, x []float64) float64 {
	g := make([]float64, len(x))
	p.Func(append([]float64(nil), x...), g)
	var worst float64
	for i, xi := range x {
		lo, hi := math.Inf(-1), math.Inf(1)
		if p.Lower != nil {
			lo = p.Lower[i]
		}
		if p.Upper != nil {
			hi = p.Upper[i]
		}
		if !(xi >= lo && xi <= hi) {
			return math.Inf(1)
		}
		worst = math.Max(worst, math.Abs(xi-math.Min(hi, math.Max(lo, xi-g[i]))))
	}
	return worst
}

// assertNotConverged checks that err is a *NotConvergedError with reason want.
func assertNotConverged(t *testing.T, err error, want engine.MinimizeReason) {
	t.Helper()
	var nc *lbfgsb.NotConvergedError
	if !errors.As(err, &nc) {
		t.Fatalf("error %v is not a *NotConvergedError", err)
	}
	if nc.Reason != want {
		t.Errorf("reason %v, want %v", nc.Reason, want)
	}
}

// checkPoint verifies that Result.X is feasible and Result.F is f(Result.X).
func checkPoint(t *testing.T, p engine.Problem, res engine.MinimizeResult) {
	t.Helper()
	g := make([]float64, len(res.X))
	if f := p.Func(append([]float64(nil), res.X...), g); f != res.F {
		t.Errorf("F = %v but f(X) = %v", res.F, f)
	}
	if v := KKTViolation(p, res.X); math.IsInf(v, 1) {
		t.Errorf("X is infeasible")
	}
}

// sameResult reports whether two results are identical, bit for bit.
func sameResult(a, b engine.MinimizeResult) error {
	if a.F != b.F || a.Iterations != b.Iterations || a.Evaluations != b.Evaluations ||
		a.Reason != b.Reason || a.ProjGradNorm != b.ProjGradNorm || len(a.X) != len(b.X) {
		return fmt.Errorf("f %v/%v it %d/%d ev %d/%d reason %v/%v", a.F, b.F, a.Iterations, b.Iterations,
			a.Evaluations, b.Evaluations, a.Reason, b.Reason)
	}
	for i := range a.X {
		if a.X[i] != b.X[i] {
			return fmt.Errorf("x[%d] %v/%v", i, a.X[i], b.X[i])
		}
	}
	return nil
}

// TestMinimizer runs the suite on m.
func TestMinimizer(t *testing.T, m engine.Minimizer) {
	ctx := context.Background()
	for _, c := range minCases() {
		t.Run(c.name, func(t *testing.T) {
			res, err := m.Minimize(ctx, c.p, c.x0, c.s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != lbfgsb.ReasonPgtol || res.ProjGradNorm > c.s.Pgtol {
				t.Errorf("reason %v, projected gradient %g (pgtol %g)", res.Reason, res.ProjGradNorm, c.s.Pgtol)
			}
			if v := KKTViolation(c.p, res.X); v > c.s.Pgtol {
				t.Errorf("KKT violation %g > %g", v, c.s.Pgtol)
			}
			g := make([]float64, len(res.X))
			if f := c.p.Func(append([]float64(nil), res.X...), g); f != res.F {
				t.Errorf("F = %v, f(X) = %v", res.F, f)
			}
			if res.Iterations <= 0 || res.Evaluations < res.Iterations {
				t.Errorf("iterations %d, evaluations %d", res.Iterations, res.Evaluations)
			}
			c.check(t, res)
		})
	}

	t.Run("driver1-distribution", func(t *testing.T) {
		// The settings of the L-BFGS-B distribution: the factr test stops
		// at a relative reduction of 1e7·ε ≈ 2e-9.
		c := driver1(25)
		res, err := m.Minimize(ctx, c.p, c.x0, c.s)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Reason.Converged() {
			t.Errorf("reason %v", res.Reason)
		}
		if res.F > 1e-8 {
			t.Errorf("f = %g", res.F)
		}
		for i, v := range res.X {
			if v < c.p.Lower[i] || v > c.p.Upper[i] {
				t.Errorf("x[%d] = %v outside the bounds", i, v)
			}
		}
	})

	t.Run("infinite-bounds", func(t *testing.T) {
		// ±Inf bounds behave exactly like missing bounds (same iterates,
		// bit for bit): a +Inf upper bound must not make a variable
		// "boxed", which would change the first step.
		n := 100
		inf := math.Inf(1)
		lInf, uInf, lFive := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range lInf {
			lInf[i], uInf[i], lFive[i] = -inf, inf, -5
		}
		s := engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}
		for _, c := range []struct {
			name string
			a, b engine.Problem
		}{
			{"free", engine.Problem{Func: Rosenbrock}, engine.Problem{Func: Rosenbrock, Lower: lInf, Upper: uInf}},
			{"upper=+Inf", engine.Problem{Func: Rosenbrock, Lower: lFive}, engine.Problem{Func: Rosenbrock, Lower: lFive, Upper: uInf}},
			{"lower=-Inf", engine.Problem{Func: Rosenbrock, Upper: lFive}, engine.Problem{Func: Rosenbrock, Lower: lInf, Upper: lFive}},
		} {
			ra, errA := m.Minimize(ctx, c.a, RosenbrockStart(n), s)
			rb, errB := m.Minimize(ctx, c.b, RosenbrockStart(n), s)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("%s: errors %v, %v", c.name, errA, errB)
			}
			if ra.F != rb.F || ra.Iterations != rb.Iterations || ra.Evaluations != rb.Evaluations {
				t.Errorf("%s: nil bounds f=%v it=%d ev=%d, infinite bounds f=%v it=%d ev=%d",
					c.name, ra.F, ra.Iterations, ra.Evaluations, rb.F, rb.Iterations, rb.Evaluations)
			}
			for i := range ra.X {
				if ra.X[i] != rb.X[i] {
					t.Errorf("%s: x[%d] differs: %v vs %v", c.name, i, ra.X[i], rb.X[i])
					break
				}
			}
		}
		// An unbounded variable can travel far: min (x − 1e6)² from 0 with
		// only a lower bound at 0 and an infinite upper bound.
		far := engine.Problem{
			Func:  func(x, g []float64) float64 { g[0] = 2 * (x[0] - 1e6); return (x[0] - 1e6) * (x[0] - 1e6) },
			Lower: []float64{0}, Upper: []float64{inf},
		}
		res, err := m.Minimize(ctx, far, []float64{0}, engine.MinimizeSettings{})
		if err != nil || math.Abs(res.X[0]-1e6) > 1e-3 {
			t.Errorf("far: x = %v, err %v; want 1e6", res.X, err)
		}
	})

	t.Run("one-sided", func(t *testing.T) {
		// ½Σ(x_i − c_i)²: the solution is c clamped to the bounds, with
		// lower-only, upper-only, two-sided, fixed and free variables, from
		// an infeasible start.
		inf := math.Inf(1)
		c := []float64{-3, 2, 5, -1, 0.5, 4, -2, 7}
		lo := []float64{-1, -inf, 0, -inf, -inf, 4, -2, 1}
		hi := []float64{inf, 1, 3, inf, inf, 4, inf, 2}
		want := []float64{-1, 1, 3, -1, 0.5, 4, -2, 2}
		x0 := []float64{-10, 10, 10, 0, 0, 0, -3, 0}
		p := engine.Problem{Func: func(x, g []float64) float64 {
			var f float64
			for i := range x {
				g[i] = x[i] - c[i]
				f += 0.5 * g[i] * g[i]
			}
			return f
		}, Lower: lo, Upper: hi}
		res, err := m.Minimize(ctx, p, x0, engine.MinimizeSettings{Pgtol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(res.X[i]-want[i]) > 1e-9 {
				t.Errorf("x[%d] = %v, want %v", i, res.X[i], want[i])
			}
		}
		if v := KKTViolation(p, res.X); v > 1e-10 {
			t.Errorf("KKT violation %g", v)
		}
	})

	t.Run("fixed-variables", func(t *testing.T) {
		// l = u fixes a variable; x0 outside is projected.
		p := engine.Problem{Func: Rosenbrock, Lower: []float64{0.3, -5, -5, -5}, Upper: []float64{0.3, 5, 5, 5}}
		res, err := m.Minimize(ctx, p, []float64{2, 2, -1.2, 1}, engine.MinimizeSettings{Pgtol: 1e-9, Factr: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.X[0] != 0.3 || math.Abs(res.X[1]-0.09) > 1e-8 || math.Abs(res.X[2]-1) > 1e-6 {
			t.Errorf("x = %v", res.X)
		}
	})

	// Every non-convergence reason: a typed error, the best point, and
	// consistent counters.
	t.Run("stops", func(t *testing.T) {
		rb := engine.Problem{Func: Rosenbrock}
		x0 := RosenbrockStart(10)
		t.Run("MaxIter", func(t *testing.T) {
			bestF := math.Inf(1)
			s := engine.MinimizeSettings{MaxIter: 5, Callback: func(it engine.MinimizeIteration) bool { bestF = math.Min(bestF, it.F); return true }}
			res, err := m.Minimize(ctx, rb, x0, s)
			assertNotConverged(t, err, lbfgsb.ReasonMaxIter)
			if res.Reason != lbfgsb.ReasonMaxIter || res.Iterations != 5 || len(res.X) != len(x0) {
				t.Errorf("reason %v after %d iterations", res.Reason, res.Iterations)
			}
			if res.F != bestF {
				t.Errorf("F = %v, best iterate had %v", res.F, bestF)
			}
			checkPoint(t, rb, res)
		})
		t.Run("MaxEval", func(t *testing.T) {
			res, err := m.Minimize(ctx, rb, x0, engine.MinimizeSettings{MaxEval: 7})
			assertNotConverged(t, err, lbfgsb.ReasonMaxEval)
			if res.Evaluations != 7 {
				t.Errorf("%d evaluations, limit 7", res.Evaluations)
			}
			checkPoint(t, rb, res)
		})
		t.Run("Callback", func(t *testing.T) {
			res, err := m.Minimize(ctx, rb, x0,
				engine.MinimizeSettings{Callback: func(it engine.MinimizeIteration) bool { return it.Iter < 3 }})
			assertNotConverged(t, err, lbfgsb.ReasonCallback)
			if res.Iterations != 3 {
				t.Errorf("stopped after %d iterations, want 3", res.Iterations)
			}
			checkPoint(t, rb, res)
		})
		t.Run("Cancelled", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			res, err := m.Minimize(cctx, rb, x0, engine.MinimizeSettings{Callback: func(it engine.MinimizeIteration) bool {
				if it.Iter == 4 {
					cancel()
				}
				return true
			}})
			assertNotConverged(t, err, lbfgsb.ReasonCancelled)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not wrap context.Canceled", err)
			}
			if res.Iterations != 4 {
				t.Errorf("stopped after %d iterations, want 4", res.Iterations)
			}
			checkPoint(t, rb, res)
		})
		t.Run("CancelledBeforeStart", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			res, err := m.Minimize(cctx, rb, x0, engine.MinimizeSettings{})
			assertNotConverged(t, err, lbfgsb.ReasonCancelled)
			if res.Evaluations != 0 || len(res.X) != len(x0) || !math.IsNaN(res.F) {
				t.Errorf("result %+v", res)
			}
		})
		t.Run("NonFinite", func(t *testing.T) {
			// −log(1 − x) − 10x is NaN beyond its domain x < 1; the line
			// search steps outside it.
			bar := engine.Problem{Func: func(x, g []float64) float64 {
				if x[0] >= 1 {
					return math.NaN()
				}
				g[0] = 1/(1-x[0]) - 10
				return -math.Log(1-x[0]) - 10*x[0]
			}}
			res, err := m.Minimize(ctx, bar, []float64{-5}, engine.MinimizeSettings{})
			assertNotConverged(t, err, lbfgsb.ReasonError)
			if math.IsNaN(res.F) || res.X[0] >= 1 {
				t.Errorf("best point %v, f = %v", res.X, res.F)
			}
			checkPoint(t, bar, res)
			inf := engine.Problem{Func: func(x, g []float64) float64 { g[0] = math.Inf(1); return 0 }}
			_, err = m.Minimize(ctx, inf, []float64{1}, engine.MinimizeSettings{})
			assertNotConverged(t, err, lbfgsb.ReasonError)
		})
		t.Run("Abnormal", func(t *testing.T) {
			// With the pgtol test disabled, a stationary start leaves no
			// descent direction: the line search is impossible.
			sq := engine.Problem{Func: func(x, g []float64) float64 { g[0] = 2 * x[0]; return x[0] * x[0] }}
			res, err := m.Minimize(ctx, sq, []float64{0}, engine.MinimizeSettings{Pgtol: -1})
			assertNotConverged(t, err, lbfgsb.ReasonAbnormal)
			if res.X[0] != 0 || res.F != 0 {
				t.Errorf("result %+v", res)
			}
		})
	})

	t.Run("convergence-beats-limits", func(t *testing.T) {
		// When the iteration limit is reached at the iterate that
		// converges, the solve reports convergence.
		rb := engine.Problem{Func: Rosenbrock}
		x0 := RosenbrockStart(10)
		s := engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}
		full, err := m.Minimize(ctx, rb, x0, s)
		if err != nil {
			t.Fatal(err)
		}
		s.MaxIter = full.Iterations
		res, err := m.Minimize(ctx, rb, x0, s)
		if err != nil || res.Reason != lbfgsb.ReasonPgtol || res.Iterations != full.Iterations {
			t.Errorf("MaxIter = %d: %v, %v after %d iterations", s.MaxIter, err, res.Reason, res.Iterations)
		}
		s.MaxIter = full.Iterations - 1
		_, err = m.Minimize(ctx, rb, x0, s)
		assertNotConverged(t, err, lbfgsb.ReasonMaxIter)
	})

	t.Run("callback", func(t *testing.T) {
		// Consecutive iteration numbers, a non-increasing objective, more
		// evaluations each time, and X matching F.
		var its []engine.MinimizeIteration
		res, err := m.Minimize(ctx, engine.Problem{Func: Rosenbrock}, RosenbrockStart(20), engine.MinimizeSettings{Callback: func(it engine.MinimizeIteration) bool {
			g := make([]float64, len(it.X))
			if f := Rosenbrock(append([]float64(nil), it.X...), g); f != it.F {
				t.Errorf("iteration %d: F = %v, f(X) = %v", it.Iter, it.F, f)
			}
			it.X = nil
			its = append(its, it)
			return true
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(its) != res.Iterations {
			t.Errorf("%d callbacks for %d iterations", len(its), res.Iterations)
		}
		for i, it := range its {
			if it.Iter != i+1 {
				t.Errorf("callback %d reports iteration %d", i, it.Iter)
			}
			if i > 0 && (it.F > its[i-1].F || it.Evals <= its[i-1].Evals) {
				t.Errorf("iteration %d: f %v after %v, evals %d after %d", it.Iter, it.F, its[i-1].F, it.Evals, its[i-1].Evals)
			}
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		// Repeated solves give bit-identical results.
		q := quadratic(120, 3, 0.05, -0.5, 0.5)
		a, errA := m.Minimize(ctx, q.p, q.x0, q.s)
		b, errB := m.Minimize(ctx, q.p, q.x0, q.s)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if err := sameResult(a, b); err != nil {
			t.Errorf("runs differ: %v", err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		// No hidden state (the Fortran code's included): 8 goroutines
		// solving different problems concurrently, twice each, get bit for
		// bit the results of sequential solves. Run it with -race too.
		mk := func() []minCase {
			var ps []minCase
			for i := 0; i < 3; i++ {
				ps = append(ps, quadratic(120+20*i, uint64(10+i), 0.1, -0.5, 0.5))
			}
			ps = append(ps, nnls(300, 60, 7), nnls(250, 40, 8), driver1(25))
			for _, n := range []int{200, 1000} {
				up := make([]float64, n)
				for i := range up {
					up[i] = 0.7
				}
				ps = append(ps, minCase{name: "rosenbrock", p: engine.Problem{Func: Rosenbrock, Upper: up}, x0: RosenbrockStart(n),
					s: engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}})
			}
			return ps
		}
		// The sequential solves may stop without convergence where the
		// tolerances are at rounding level (nnls's factr 10: which test
		// fires first depends on the BLAS's rounding); the concurrent
		// ones must stop the same way, with the same bits.
		seq := mk()
		want := make([]engine.MinimizeResult, len(seq))
		wantErr := make([]error, len(seq))
		for i, c := range seq {
			want[i], wantErr[i] = m.Minimize(ctx, c.p, c.x0, c.s)
			if err := wantErr[i]; err != nil && !errors.Is(err, errs.ErrNotConverged) {
				t.Fatalf("problem %d (%s): %v", i, c.name, err)
			}
		}
		par := mk() // fresh instances: the objectives have scratch buffers
		got := make([][2]engine.MinimizeResult, len(par))
		gotErr := make([][2]error, len(par))
		var wg sync.WaitGroup
		for i, c := range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < 2; k++ {
					got[i][k], gotErr[i][k] = m.Minimize(ctx, c.p, c.x0, c.s)
				}
			}()
		}
		wg.Wait()
		for i := range par {
			for k := 0; k < 2; k++ {
				if fmt.Sprint(gotErr[i][k]) != fmt.Sprint(wantErr[i]) {
					t.Errorf("problem %d (%s), concurrent run %d: error %v, sequential %v", i, par[i].name, k, gotErr[i][k], wantErr[i])
				}
				if err := sameResult(want[i], got[i][k]); err != nil {
					t.Errorf("problem %d (%s), concurrent run %d: %v", i, par[i].name, k, err)
				}
			}
		}
	})

	t.Run("func-cannot-corrupt-state", func(t *testing.T) {
		// The point handed to Func is a copy, so a function that scribbles
		// on it does not change the solve.
		dirty := engine.Problem{Func: func(x, g []float64) float64 {
			f := Rosenbrock(x, g)
			for i := range x {
				x[i] = 1e300
			}
			return f
		}}
		a, _ := m.Minimize(ctx, engine.Problem{Func: Rosenbrock}, RosenbrockStart(6), engine.MinimizeSettings{})
		b, _ := m.Minimize(ctx, dirty, RosenbrockStart(6), engine.MinimizeSettings{})
		if a.F != b.F || a.Iterations != b.Iterations {
			t.Errorf("%+v vs %+v", a, b)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		inf := math.Inf(1)
		ok := engine.Problem{Func: Rosenbrock}
		for _, c := range []struct {
			name string
			p    engine.Problem
			x0   []float64
			s    engine.MinimizeSettings
		}{
			{"nil func", engine.Problem{}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"empty x0", ok, nil, engine.MinimizeSettings{}},
			{"x0 NaN", ok, []float64{math.NaN(), 1}, engine.MinimizeSettings{}},
			{"x0 Inf", ok, []float64{inf, 1}, engine.MinimizeSettings{}},
			{"len Lower", engine.Problem{Func: Rosenbrock, Lower: []float64{0}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"len Upper", engine.Problem{Func: Rosenbrock, Upper: []float64{0, 1, 2}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"l > u", engine.Problem{Func: Rosenbrock, Lower: []float64{0, 2}, Upper: []float64{1, 1}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"lower +Inf", engine.Problem{Func: Rosenbrock, Lower: []float64{inf, 0}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"upper -Inf", engine.Problem{Func: Rosenbrock, Upper: []float64{-inf, 0}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"NaN bound", engine.Problem{Func: Rosenbrock, Lower: []float64{math.NaN(), 0}}, []float64{1, 2}, engine.MinimizeSettings{}},
			{"M < 0", ok, []float64{1, 2}, engine.MinimizeSettings{M: -1}},
			{"MaxIter < 0", ok, []float64{1, 2}, engine.MinimizeSettings{MaxIter: -1}},
			{"MaxEval < 0", ok, []float64{1, 2}, engine.MinimizeSettings{MaxEval: -1}},
			{"Factr NaN", ok, []float64{1, 2}, engine.MinimizeSettings{Factr: math.NaN()}},
			{"Pgtol +Inf", ok, []float64{1, 2}, engine.MinimizeSettings{Pgtol: inf}},
		} {
			if _, err := m.Minimize(ctx, c.p, c.x0, c.s); !errors.Is(err, lbfgsb.ErrInvalidArgument) {
				t.Errorf("%s: error %v, want ErrInvalidArgument", c.name, err)
			}
		}
	})
}

// TestAgree checks that two minimisers reach the same objectives in
// similar iteration counts on the acceptance problems.
func TestAgree(t *testing.T, a, b engine.Minimizer) {
	ctx := context.Background()
	for _, c := range minCases() {
		t.Run(c.name, func(t *testing.T) {
			ra, errA := a.Minimize(ctx, c.p, c.x0, c.s)
			rb, errB := b.Minimize(ctx, c.p, c.x0, c.s)
			if errA != nil || errB != nil {
				t.Fatalf("first: %v; second: %v", errA, errB)
			}
			t.Logf("first: it=%d ev=%d f=%.16g | second: it=%d ev=%d f=%.16g",
				ra.Iterations, ra.Evaluations, ra.F, rb.Iterations, rb.Evaluations, rb.F)
			if err := minAgree(ra, rb); err != nil {
				t.Error(err)
			}
		})
	}
}

// minAgree requires final objectives equal to 1e-8 relative (with a floor
// of 1 for optima at zero) and iteration counts within 25%.
func minAgree(ra, rb engine.MinimizeResult) error {
	scale := math.Max(1, math.Max(math.Abs(ra.F), math.Abs(rb.F)))
	if math.Abs(ra.F-rb.F) > 1e-8*scale {
		return fmt.Errorf("objectives %.16g and %.16g", ra.F, rb.F)
	}
	if d := math.Abs(float64(ra.Iterations - rb.Iterations)); d > 0.25*float64(max(ra.Iterations, rb.Iterations)) {
		return fmt.Errorf("iterations %d and %d differ by more than 25%%", ra.Iterations, rb.Iterations)
	}
	return nil
}
