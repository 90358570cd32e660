// Package lbfgsbtest is the conformance suite of bound-constrained
// minimisers, in the manner of gonum's testlapack: lbfgsb's Fortran and
// pure-Go solvers run it, and so does every engine backend (through
// engine/enginetest). It checks the KKT conditions (projected gradient
// below pgtol) on Rosenbrock, the Fortran driver1 problem, quadratics and
// non-negative least squares; nil bounds against infinite ones; the
// iteration limit, cancellation through the callback, and invalid bounds.
package lbfgsbtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lbfgsb"
)

// minCase is a bound-constrained test problem for Backend.Minimize, with
// settings under which the solve converges on the projected gradient.
type minCase struct {
	name  string
	p     engine.Problem
	x0    []float64
	s     engine.MinimizeSettings
	check func(t *testing.T, res engine.MinimizeResult) // analytic answers, if any
}

// minRosenbrock is the extended Rosenbrock function Σ_pairs
// (1 − x_{2i})² + 100(x_{2i+1} − x_{2i}²)².
func minRosenbrock(x, g []float64) float64 {
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

func minRosenbrockStart(n int) []float64 {
	x := make([]float64, n)
	for i := 0; i+1 < n; i += 2 {
		x[i], x[i+1] = -1.2, 1
	}
	return x
}

// minCases returns the conformance problems: extended Rosenbrock without
// and with active (one- and two-sided) bounds, the driver1 problem of the
// L-BFGS-B distribution, a random strictly convex box-constrained quadratic
// and a random non-negative least-squares problem.
func minCases() []minCase {
	const n = 100
	set := engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}
	inf := math.Inf(1)
	up, bl, bu := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range up {
		up[i] = inf
		if i%2 == 0 {
			up[i] = 0.5
		}
		bl[i], bu[i] = -2, 0.8
	}
	cases := []minCase{
		{"rosenbrock/free", engine.Problem{Func: minRosenbrock}, minRosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				if res.F > 1e-12 {
					t.Errorf("f = %g, want ≈ 0", res.F)
				}
			}},
		{"rosenbrock/upper", engine.Problem{Func: minRosenbrock, Upper: up}, minRosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// (0.5, 0.25) per pair, f = 0.25 per pair.
				if want := 0.25 * n / 2; math.Abs(res.F-want) > 1e-10*want {
					t.Errorf("f = %.15g, want %g", res.F, want)
				}
			}},
		{"rosenbrock/box", engine.Problem{Func: minRosenbrock, Lower: bl, Upper: bu}, minRosenbrockStart(n), set,
			func(t *testing.T, res engine.MinimizeResult) {
				// (0.8, 0.64) per pair, f = 0.04 per pair.
				if want := 0.04 * n / 2; math.Abs(res.F-want) > 1e-10*want {
					t.Errorf("f = %.15g, want %g", res.F, want)
				}
			}},
		minDriver1(25),
		minQuadratic(200, 1),
		minNNLS(600, 100, 1),
	}
	return cases
}

// minDriver1 is driver1.f of L-BFGS-B 3.0: bounds on every variable,
// minimum 0 at x = 1 (on the lower bounds of the odd variables).
func minDriver1(n int) minCase {
	l, u, x0 := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range l {
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
	return minCase{"driver1", engine.Problem{Func: fn, Lower: l, Upper: u}, x0,
		engine.MinimizeSettings{M: 5, Factr: -1, Pgtol: 1e-7},
		func(t *testing.T, res engine.MinimizeResult) {
			if res.F > 1e-12 {
				t.Errorf("f = %g, want ≈ 0", res.F)
			}
		}}
}

// minQuadratic is ½xᵀAx + bᵀx on [−1, 1]ⁿ with A = BᵀB/n + 0.1·I.
func minQuadratic(n int, seed uint64) minCase {
	rng := rand.New(rand.NewPCG(seed, 0x51ed270b))
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
				s += 0.1
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	b := make([]float64, n)
	l, u := make([]float64, n), make([]float64, n)
	for i := range b {
		b[i] = 2 * rng.NormFloat64()
		l[i], u[i] = -1, 1
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
	return minCase{"quadratic", engine.Problem{Func: fn, Lower: l, Upper: u}, make([]float64, n),
		engine.MinimizeSettings{Factr: -1, Pgtol: 1e-6},
		func(t *testing.T, res engine.MinimizeResult) {
			active := 0
			for _, v := range res.X {
				if v == -1 || v == 1 {
					active++
				}
			}
			if active == 0 || active == n {
				t.Errorf("%d of %d bounds active: the problem should mix", active, n)
			}
		}}
}

// minNNLS is ½‖Ax − b‖² subject to x ≥ 0 with A having N(0, 1/rows) entries
// and b = A·x_true + noise for an x_true with negative entries.
func minNNLS(rows, cols int, seed uint64) minCase {
	rng := rand.New(rand.NewPCG(seed, 0x2545f491))
	a := make([]float64, rows*cols)
	sc := 1 / math.Sqrt(float64(rows))
	for i := range a {
		a[i] = sc * rng.NormFloat64()
	}
	b := make([]float64, rows)
	xt := make([]float64, cols)
	for j := range xt {
		xt[j] = rng.NormFloat64()
	}
	for i := range b {
		var s float64
		for j, v := range a[i*cols : i*cols+cols] {
			s += v * xt[j]
		}
		b[i] = s + 0.1*rng.NormFloat64()
	}
	fn := func(x, g []float64) float64 {
		var f float64
		for j := range g {
			g[j] = 0
		}
		for i := 0; i < rows; i++ {
			row := a[i*cols : i*cols+cols]
			r := -b[i]
			for j, v := range row {
				r += v * x[j]
			}
			f += 0.5 * r * r
			for j, v := range row {
				g[j] += v * r
			}
		}
		return f
	}
	p := engine.Problem{Func: fn, Lower: make([]float64, cols)}
	return minCase{"nnls", p, make([]float64, cols), engine.MinimizeSettings{Factr: -1, Pgtol: 1e-6},
		func(t *testing.T, res engine.MinimizeResult) {
			g := make([]float64, cols)
			fn(append([]float64(nil), res.X...), g)
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
					// Complementarity: a positive variable has zero gradient.
					t.Errorf("x[%d] = %g > 0 with g[%d] = %g", j, v, j, g[j])
				}
			}
			if zeros == 0 {
				t.Errorf("no active bounds: the problem should have some")
			}
		}}
}

// minKKT evaluates the gradient afresh at x and returns the largest
// |x_i − P(x_i − g_i)| (P the projection onto the box): zero exactly at a
// KKT point; +Inf if x is outside the box.
func minKKT(p engine.Problem, x []float64) float64 {
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
			if v := minKKT(c.p, res.X); v > c.s.Pgtol {
				t.Errorf("KKT violation %g > %g", v, c.s.Pgtol)
			}
			g := make([]float64, len(res.X))
			if f := c.p.Func(append([]float64(nil), res.X...), g); f != res.F {
				t.Errorf("F = %v, f(X) = %v", res.F, f)
			}
			c.check(t, res)
		})
	}

	t.Run("one-sided", func(t *testing.T) {
		// ½Σ(x_i − c_i)²: the solution is c clamped to the bounds.
		inf := math.Inf(1)
		c := []float64{-3, 2, 5, -1, 0.5, 4}
		lo := []float64{-1, -inf, 0, -inf, -inf, 4}
		hi := []float64{inf, 1, 3, inf, inf, 4}
		want := []float64{-1, 1, 3, -1, 0.5, 4}
		p := engine.Problem{Func: func(x, g []float64) float64 {
			var f float64
			for i := range x {
				g[i] = x[i] - c[i]
				f += 0.5 * g[i] * g[i]
			}
			return f
		}, Lower: lo, Upper: hi}
		res, err := m.Minimize(ctx, p, []float64{-9, 9, 9, 0, 0, 0}, engine.MinimizeSettings{Pgtol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(res.X[i]-want[i]) > 1e-9 {
				t.Errorf("x[%d] = %v, want %v", i, res.X[i], want[i])
			}
		}
	})

	t.Run("infinite-bounds", func(t *testing.T) {
		// ±Inf bounds are no bounds: identical iterates to nil bounds.
		n := 20
		lInf, uInf := make([]float64, n), make([]float64, n)
		for i := range lInf {
			lInf[i], uInf[i] = math.Inf(-1), math.Inf(1)
		}
		s := engine.MinimizeSettings{Factr: -1, Pgtol: 1e-8}
		ra, errA := m.Minimize(ctx, engine.Problem{Func: minRosenbrock}, minRosenbrockStart(n), s)
		rb, errB := m.Minimize(ctx, engine.Problem{Func: minRosenbrock, Lower: lInf, Upper: uInf}, minRosenbrockStart(n), s)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if ra.F != rb.F || ra.Iterations != rb.Iterations || ra.Evaluations != rb.Evaluations {
			t.Errorf("nil bounds: f=%v it=%d; infinite bounds: f=%v it=%d", ra.F, ra.Iterations, rb.F, rb.Iterations)
		}
	})

	t.Run("stops", func(t *testing.T) {
		p := engine.Problem{Func: minRosenbrock}
		x0 := minRosenbrockStart(10)
		res, err := m.Minimize(ctx, p, x0, engine.MinimizeSettings{MaxIter: 4})
		var nc *lbfgsb.NotConvergedError
		if !errors.As(err, &nc) || nc.Reason != lbfgsb.ReasonMaxIter || res.Iterations != 4 || len(res.X) != 10 {
			t.Errorf("iteration limit: err %v, %d iterations", err, res.Iterations)
		}
		cctx, cancel := context.WithCancel(ctx)
		res, err = m.Minimize(cctx, p, x0, engine.MinimizeSettings{Callback: func(it lbfgsb.Iteration) bool {
			if it.Iter == 2 {
				cancel()
			}
			return true
		}})
		if !errors.Is(err, context.Canceled) || !errors.As(err, &nc) || res.Iterations != 2 {
			t.Errorf("cancel: err %v after %d iterations", err, res.Iterations)
		}
		_, err = m.Minimize(ctx, engine.Problem{Func: minRosenbrock, Lower: []float64{1, 1}, Upper: []float64{0, 2}},
			[]float64{0, 0}, engine.MinimizeSettings{})
		if !errors.Is(err, lbfgsb.ErrInvalidArgument) {
			t.Errorf("lower > upper: err %v", err)
		}
	})
}

// TestAgree checks that two minimisers reach the same objectives in
// similar iteration counts.
func TestAgree(t *testing.T, a, b engine.Minimizer) {
	ctx := context.Background()
	for _, c := range minCases() {
		t.Run(c.name, func(t *testing.T) {
			ra, errA := a.Minimize(ctx, c.p, c.x0, c.s)
			rb, errB := b.Minimize(ctx, c.p, c.x0, c.s)
			if errA != nil || errB != nil {
				t.Fatalf("first: %v; second: %v", errA, errB)
			}
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
