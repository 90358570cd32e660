package lbfgsb

import (
	"math"
	"math/rand/v2"
)

// testProblem is a bound-constrained test problem with a starting point.
type testProblem struct {
	name string
	p    Problem
	x0   []float64
	s    Settings
}

// rosenbrock is the extended Rosenbrock function of Moré, Garbow and
// Hillstrom: Σ_pairs 100(x_{2i+1} − x_{2i}²)² + (1 − x_{2i})², n even.
func rosenbrock(x, g []float64) float64 {
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

func rosenbrockStart(n int) []float64 {
	x := make([]float64, n)
	for i := 0; i+1 < n; i += 2 {
		x[i], x[i+1] = -1.2, 1
	}
	return x
}

// driver1 is the problem of driver1.f in the L-BFGS-B 3.0 distribution:
// a chained Rosenbrock-like function with bounds on every variable.
func driver1Problem(n int) testProblem {
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
	return testProblem{name: "driver1", p: Problem{Func: fn, Lower: l, Upper: u}, x0: x0,
		s: Settings{M: 5, Factr: 1e7, Pgtol: 1e-5}}
}

// quadProblem is a random strictly convex quadratic ½xᵀAx + bᵀx with
// A = BᵀB/n + μI, on the box [lo, hi]ⁿ (either side may be infinite).
func quadProblem(n int, seed uint64, mu, lo, hi float64) (testProblem, []float64) {
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
			row := a[i*n : i*n+n]
			var s float64
			for j, v := range row {
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
	return testProblem{name: "quadratic", p: Problem{Func: fn, Lower: l, Upper: u}, x0: make([]float64, n),
		s: Settings{Factr: 10, Pgtol: 1e-8}}, a
}

// nnlsProblem is non-negative least squares ½‖Ax − b‖², x ≥ 0, for a random
// rows×cols A with N(0, 1/rows) entries and b = A·x_true + noise, where x_true
// has negative entries so that bounds are active at the solution.
func nnlsProblem(rows, cols int, seed uint64) testProblem {
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
			row := a[i*cols : i*cols+cols]
			s := -b[i]
			for j, v := range row {
				s += v * x[j]
			}
			res[i] = s
			f += 0.5 * s * s
		}
		for j := range g {
			g[j] = 0
		}
		for i := 0; i < rows; i++ {
			row := a[i*cols : i*cols+cols]
			ri := res[i]
			for j, v := range row {
				g[j] += v * ri
			}
		}
		return f
	}
	l := make([]float64, cols)
	return testProblem{name: "nnls", p: Problem{Func: fn, Lower: l}, x0: make([]float64, cols),
		s: Settings{Factr: 10, Pgtol: 1e-10}}
}
