package lbfgsb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
)

type namedSolver struct {
	name string
	s    Solver
}

// solvers returns the implementations compiled into this build.
func solvers() []namedSolver {
	out := []namedSolver{{"go", Go}}
	if HaveNative {
		out = append(out, namedSolver{"native", Native})
	}
	return out
}

// bound returns the bound of variable i, with ±Inf for a nil slice.
func bound(b []float64, i int, inf float64) float64 {
	if b == nil {
		return inf
	}
	return b[i]
}

// kktViolation evaluates the gradient afresh at x and returns the largest
// violation of the first-order optimality (KKT) conditions of
// min f s.t. l ≤ x ≤ u: a positive g_i is allowed only as far as x_i is
// within reach of its lower bound, a negative g_i only as far as x_i is
// within reach of its upper bound, i.e. |x_i − P(x_i − g_i)|. A point
// outside the box gives +Inf.
func kktViolation(p Problem, x []float64) float64 {
	g := make([]float64, len(x))
	xc := append([]float64(nil), x...)
	p.Func(xc, g)
	var worst float64
	for i, xi := range x {
		lo, hi := bound(p.Lower, i, math.Inf(-1)), bound(p.Upper, i, math.Inf(1))
		if !(xi >= lo && xi <= hi) {
			return math.Inf(1)
		}
		step := xi - g[i] // projected steepest-descent step of unit length
		if step < lo {
			step = lo
		}
		if step > hi {
			step = hi
		}
		worst = math.Max(worst, math.Abs(xi-step))
	}
	return worst
}

// acceptanceCase is one of the problems of the acceptance criteria, with
// settings under which convergence is on the projected gradient.
type acceptanceCase struct {
	testProblem
	check func(t *testing.T, res Result) // problem-specific checks (analytic answers)
}

func rosenbrockCases(ns []int) []acceptanceCase {
	var out []acceptanceCase
	for _, n := range ns {
		n := n
		set := Settings{Factr: -1, Pgtol: 1e-8}
		// Unbounded: minimum 0 at x = 1.
		out = append(out, acceptanceCase{
			testProblem{fmt.Sprintf("rosenbrock/n=%d/free", n), Problem{Func: rosenbrock}, rosenbrockStart(n), set},
			func(t *testing.T, res Result) {
				if res.F > 1e-12 {
					t.Errorf("f = %g, want ≈ 0", res.F)
				}
				for i, v := range res.X {
					if math.Abs(v-1) > 1e-5 {
						t.Errorf("x[%d] = %v, want 1", i, v)
						break
					}
				}
			}})
		// Upper bounds only, active: x_{2i} ≤ 0.5 gives (0.5, 0.25) per
		// pair and f = 0.25 per pair.
		up := make([]float64, n)
		for i := range up {
			up[i] = math.Inf(1)
			if i%2 == 0 {
				up[i] = 0.5
			}
		}
		out = append(out, acceptanceCase{
			testProblem{fmt.Sprintf("rosenbrock/n=%d/upper", n), Problem{Func: rosenbrock, Upper: up}, rosenbrockStart(n), set},
			func(t *testing.T, res Result) {
				want := 0.25 * float64(n/2)
				if math.Abs(res.F-want) > 1e-10*want {
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
			}})
		// Lower bounds only, active: x_{2i+1} ≥ 2.
		lo := make([]float64, n)
		for i := range lo {
			lo[i] = math.Inf(-1)
			if i%2 == 1 {
				lo[i] = 2
			}
		}
		out = append(out, acceptanceCase{
			testProblem{fmt.Sprintf("rosenbrock/n=%d/lower", n), Problem{Func: rosenbrock, Lower: lo}, rosenbrockStart(n), set},
			func(t *testing.T, res Result) {
				for i := 1; i < n; i += 2 {
					if res.X[i] != 2 {
						t.Errorf("x[%d] = %v, want the bound 2", i, res.X[i])
						break
					}
				}
			}})
		// Box on every variable: [-2, 0.8] gives (0.8, 0.64), f = 0.04 per pair.
		bl, bu := make([]float64, n), make([]float64, n)
		for i := range bl {
			bl[i], bu[i] = -2, 0.8
		}
		out = append(out, acceptanceCase{
			testProblem{fmt.Sprintf("rosenbrock/n=%d/box", n), Problem{Func: rosenbrock, Lower: bl, Upper: bu}, rosenbrockStart(n), set},
			func(t *testing.T, res Result) {
				want := 0.04 * float64(n/2)
				if math.Abs(res.F-want) > 1e-10*want {
					t.Errorf("f = %.15g, want %g", res.F, want)
				}
			}})
	}
	return out
}

// acceptanceCases are the problems of the acceptance criteria.
func acceptanceCases() []acceptanceCase {
	out := rosenbrockCases([]int{2, 100, 1000})
	d1 := driver1Problem(25)
	d1.s = Settings{M: 5, Factr: -1, Pgtol: 1e-7}
	out = append(out, acceptanceCase{d1, func(t *testing.T, res Result) {
		// The minimum is f = 0 at x = 1 (on the lower bounds of the odd variables).
		if res.F > 1e-12 {
			t.Errorf("f = %g, want ≈ 0", res.F)
		}
	}})
	q, _ := quadProblem(500, 1, 0.1, -1, 1)
	q.s = Settings{Factr: -1, Pgtol: 1e-6}
	out = append(out, acceptanceCase{q, func(t *testing.T, res Result) {
		active := 0
		for _, v := range res.X {
			if v == -1 || v == 1 {
				active++
			}
		}
		if active == 0 || active == len(res.X) {
			t.Errorf("%d of %d bounds active: the test wants a mix", active, len(res.X))
		}
	}})
	nn := nnlsProblem(2000, 300, 1)
	nn.s = Settings{Factr: -1, Pgtol: 1e-6}
	out = append(out, acceptanceCase{nn, func(t *testing.T, res Result) {
		// Complementarity (g_i = 0 where x_i > 0) and g ≥ 0 on the active set.
		g := make([]float64, len(res.X))
		nn.p.Func(append([]float64(nil), res.X...), g)
		zeros := 0
		for i, v := range res.X {
			if v == 0 {
				zeros++
				if g[i] < -1e-6 {
					t.Errorf("g[%d] = %g < 0 at an active bound", i, g[i])
				}
			} else if v > 1e-6 && math.Abs(g[i]) > 1e-6 {
				// Complementarity: a positive variable has zero gradient.
				t.Errorf("x[%d] = %g > 0 with g[%d] = %g", i, v, i, g[i])
			}
		}
		if zeros == 0 {
			t.Errorf("no active bounds: the test wants some")
		}
	}})
	return out
}

// TestAcceptance solves every acceptance problem with every solver and
// checks convergence on the projected gradient, KKT conditions evaluated
// independently, and the known answers.
func TestAcceptance(t *testing.T) {
	for _, c := range acceptanceCases() {
		for _, sv := range solvers() {
			t.Run(c.name+"/"+sv.name, func(t *testing.T) {
				res, err := sv.s.Minimize(context.Background(), c.p, c.x0, c.s)
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if res.Reason != ReasonPgtol {
					t.Errorf("reason = %v, want %v", res.Reason, ReasonPgtol)
				}
				if res.ProjGradNorm > c.s.Pgtol {
					t.Errorf("projected gradient %g > pgtol %g", res.ProjGradNorm, c.s.Pgtol)
				}
				if v := kktViolation(c.p, res.X); v > c.s.Pgtol {
					t.Errorf("KKT violation %g > %g", v, c.s.Pgtol)
				}
				gx := make([]float64, len(res.X))
				if f := c.p.Func(append([]float64(nil), res.X...), gx); f != res.F {
					t.Errorf("Result.F = %v but f(Result.X) = %v", res.F, f)
				}
				if res.Iterations <= 0 || res.Evaluations < res.Iterations {
					t.Errorf("iterations %d, evaluations %d", res.Iterations, res.Evaluations)
				}
				c.check(t, res)
			})
		}
	}
}

// TestNativeGoAgreement compares the two implementations on the acceptance
// problems: final objectives to 1e-8 (relative, with a floor of 1 for
// optima at 0) and iteration counts within 25%.
func TestNativeGoAgreement(t *testing.T) {
	if !HaveNative {
		t.Skip("native solver not compiled in")
	}
	for _, c := range acceptanceCases() {
		t.Run(c.name, func(t *testing.T) {
			rn, errN := Native.Minimize(context.Background(), c.p, c.x0, c.s)
			rg, errG := Go.Minimize(context.Background(), c.p, c.x0, c.s)
			if errN != nil || errG != nil {
				t.Fatalf("errors: native %v, go %v", errN, errG)
			}
			t.Logf("native: it=%d ev=%d f=%.16g | go: it=%d ev=%d f=%.16g",
				rn.Iterations, rn.Evaluations, rn.F, rg.Iterations, rg.Evaluations, rg.F)
			scale := math.Max(1, math.Max(math.Abs(rn.F), math.Abs(rg.F)))
			if d := math.Abs(rn.F - rg.F); d > 1e-8*scale {
				t.Errorf("objectives differ: native %.16g, go %.16g", rn.F, rg.F)
			}
			if d := math.Abs(float64(rn.Iterations - rg.Iterations)); d > 0.25*float64(max(rn.Iterations, rg.Iterations)) {
				t.Errorf("iterations differ by more than 25%%: native %d, go %d", rn.Iterations, rg.Iterations)
			}
		})
	}
}

// TestDriver1Distribution runs driver1 with the settings of the L-BFGS-B
// distribution (m = 5, factr = 1e7, pgtol = 1e-5).
func TestDriver1Distribution(t *testing.T) {
	pr := driver1Problem(25)
	for _, sv := range solvers() {
		t.Run(sv.name, func(t *testing.T) {
			res, err := sv.s.Minimize(context.Background(), pr.p, pr.x0, pr.s)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reason.Converged() {
				t.Errorf("reason %v", res.Reason)
			}
			// The factr test stops at a relative reduction of 1e7·ε ≈ 2e-9.
			if res.F > 1e-8 {
				t.Errorf("f = %g", res.F)
			}
			for i, v := range res.X {
				if v < pr.p.Lower[i] || v > pr.p.Upper[i] {
					t.Errorf("x[%d] = %v outside the bounds", i, v)
				}
			}
		})
	}
}

func TestBoundType(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		lo, hi float64
		want   int
	}{
		{-inf, inf, nbdFree},
		{0, inf, nbdLower},
		{-inf, 0, nbdUpper},
		{-1, 1, nbdBoth},
		{2, 2, nbdBoth},
		{-1e308, 1e308, nbdBoth},
	} {
		if got := boundType(c.lo, c.hi); got != c.want {
			t.Errorf("boundType(%v, %v) = %d, want %d", c.lo, c.hi, got, c.want)
		}
	}
	// prepare zeroes the unused bound entries, so no Inf reaches the solvers.
	st, err := prepare(Problem{Func: rosenbrock, Lower: []float64{-inf, 0, -inf, 1}, Upper: []float64{inf, inf, 3, 4}},
		make([]float64, 4), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	wantNbd := []int{nbdFree, nbdLower, nbdUpper, nbdBoth}
	for i := range wantNbd {
		if st.nbd[i] != wantNbd[i] || math.IsInf(st.l[i], 0) || math.IsInf(st.u[i], 0) {
			t.Errorf("variable %d: nbd %d l %v u %v", i, st.nbd[i], st.l[i], st.u[i])
		}
	}
}

// TestInfiniteBoundsAreUnbounded checks that ±Inf bounds behave exactly like
// missing bounds (same iterates, bit for bit): a +Inf upper bound must not
// make a variable "boxed", which would change the first step.
func TestInfiniteBoundsAreUnbounded(t *testing.T) {
	n := 100
	inf := math.Inf(1)
	lInf, uInf, lZero := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range lInf {
		lInf[i], uInf[i], lZero[i] = -inf, inf, -5
	}
	s := Settings{Factr: -1, Pgtol: 1e-8}
	for _, sv := range solvers() {
		t.Run(sv.name, func(t *testing.T) {
			for _, c := range []struct {
				name string
				a, b Problem
			}{
				{"free", Problem{Func: rosenbrock}, Problem{Func: rosenbrock, Lower: lInf, Upper: uInf}},
				{"upper=+Inf", Problem{Func: rosenbrock, Lower: lZero}, Problem{Func: rosenbrock, Lower: lZero, Upper: uInf}},
				{"lower=-Inf", Problem{Func: rosenbrock, Upper: lZero}, Problem{Func: rosenbrock, Lower: lInf, Upper: lZero}},
			} {
				ra, errA := sv.s.Minimize(context.Background(), c.a, rosenbrockStart(n), s)
				rb, errB := sv.s.Minimize(context.Background(), c.b, rosenbrockStart(n), s)
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
		})
	}
	// An unbounded variable can travel far: min (x − 1e6)² from 0 with
	// only a lower bound at 0 and an infinite upper bound.
	far := Problem{
		Func:  func(x, g []float64) float64 { g[0] = 2 * (x[0] - 1e6); return (x[0] - 1e6) * (x[0] - 1e6) },
		Lower: []float64{0}, Upper: []float64{inf},
	}
	for _, sv := range solvers() {
		res, err := sv.s.Minimize(context.Background(), far, []float64{0}, Settings{})
		if err != nil || math.Abs(res.X[0]-1e6) > 1e-3 {
			t.Errorf("%s: x = %v, err %v; want 1e6", sv.name, res.X, err)
		}
	}
}

// TestOneSidedBounds solves a separable quadratic ½Σ(x_i − c_i)² whose
// solution is c clamped to the bounds, with lower-only, upper-only, two-sided,
// fixed and free variables, from an infeasible start.
func TestOneSidedBounds(t *testing.T) {
	inf := math.Inf(1)
	c := []float64{-3, 2, 5, -1, 0.5, 4, -2, 7}
	lo := []float64{-1, -inf, 0, -inf, -inf, 4, -2, 1}
	hi := []float64{inf, 1, 3, inf, inf, 4, inf, 2}
	want := []float64{-1, 1, 3, -1, 0.5, 4, -2, 2}
	x0 := []float64{-10, 10, 10, 0, 0, 0, -3, 0}
	p := Problem{Func: func(x, g []float64) float64 {
		var f float64
		for i := range x {
			d := x[i] - c[i]
			g[i] = d
			f += 0.5 * d * d
		}
		return f
	}, Lower: lo, Upper: hi}
	for _, sv := range solvers() {
		res, err := sv.s.Minimize(context.Background(), p, x0, Settings{Pgtol: 1e-10})
		if err != nil {
			t.Fatalf("%s: %v", sv.name, err)
		}
		for i := range want {
			if math.Abs(res.X[i]-want[i]) > 1e-9 {
				t.Errorf("%s: x[%d] = %v, want %v", sv.name, i, res.X[i], want[i])
			}
		}
		if v := kktViolation(p, res.X); v > 1e-10 {
			t.Errorf("%s: KKT violation %g", sv.name, v)
		}
	}
}

// TestStopReasons checks every non-convergence reason: a typed error, the
// best point, and consistent counters.
func TestStopReasons(t *testing.T) {
	rb := Problem{Func: rosenbrock}
	x0 := rosenbrockStart(10)
	for _, sv := range solvers() {
		t.Run(sv.name, func(t *testing.T) {
			t.Run("MaxIter", func(t *testing.T) {
				var bestF float64 = math.Inf(1)
				s := Settings{MaxIter: 5, Callback: func(it Iteration) bool { bestF = math.Min(bestF, it.F); return true }}
				res, err := sv.s.Minimize(context.Background(), rb, x0, s)
				assertNotConverged(t, err, ReasonMaxIter)
				if res.Reason != ReasonMaxIter || res.Iterations != 5 {
					t.Errorf("reason %v after %d iterations", res.Reason, res.Iterations)
				}
				if res.F != bestF {
					t.Errorf("F = %v, best iterate had %v", res.F, bestF)
				}
				checkPoint(t, rb, res)
			})
			t.Run("MaxEval", func(t *testing.T) {
				res, err := sv.s.Minimize(context.Background(), rb, x0, Settings{MaxEval: 7})
				assertNotConverged(t, err, ReasonMaxEval)
				if res.Evaluations != 7 {
					t.Errorf("%d evaluations, limit 7", res.Evaluations)
				}
				checkPoint(t, rb, res)
			})
			t.Run("Callback", func(t *testing.T) {
				res, err := sv.s.Minimize(context.Background(), rb, x0,
					Settings{Callback: func(it Iteration) bool { return it.Iter < 3 }})
				assertNotConverged(t, err, ReasonCallback)
				if res.Iterations != 3 {
					t.Errorf("stopped after %d iterations, want 3", res.Iterations)
				}
				checkPoint(t, rb, res)
			})
			t.Run("Cancelled", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				res, err := sv.s.Minimize(ctx, rb, x0, Settings{Callback: func(it Iteration) bool {
					if it.Iter == 4 {
						cancel()
					}
					return true
				}})
				assertNotConverged(t, err, ReasonCancelled)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error %v does not wrap context.Canceled", err)
				}
				if res.Iterations != 4 {
					t.Errorf("stopped after %d iterations, want 4", res.Iterations)
				}
				checkPoint(t, rb, res)
			})
			t.Run("CancelledBeforeStart", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				res, err := sv.s.Minimize(ctx, rb, x0, Settings{})
				assertNotConverged(t, err, ReasonCancelled)
				if res.Evaluations != 0 || len(res.X) != len(x0) || !math.IsNaN(res.F) {
					t.Errorf("result %+v", res)
				}
			})
			t.Run("NonFinite", func(t *testing.T) {
				// −log(1 − x) − 10x is NaN beyond its domain x < 1; the
				// line search steps outside it.
				bar := Problem{Func: func(x, g []float64) float64 {
					if x[0] >= 1 {
						return math.NaN()
					}
					g[0] = 1/(1-x[0]) - 10
					return -math.Log(1-x[0]) - 10*x[0]
				}}
				res, err := sv.s.Minimize(context.Background(), bar, []float64{-5}, Settings{})
				assertNotConverged(t, err, ReasonError)
				if math.IsNaN(res.F) || res.X[0] >= 1 {
					t.Errorf("best point %v, f = %v", res.X, res.F)
				}
				checkPoint(t, bar, res)
				inf := Problem{Func: func(x, g []float64) float64 { g[0] = math.Inf(1); return 0 }}
				_, err = sv.s.Minimize(context.Background(), inf, []float64{1}, Settings{})
				assertNotConverged(t, err, ReasonError)
			})
			t.Run("Abnormal", func(t *testing.T) {
				// With the pgtol test disabled, a stationary start leaves
				// no descent direction: the line search is impossible.
				sq := Problem{Func: func(x, g []float64) float64 { g[0] = 2 * x[0]; return x[0] * x[0] }}
				res, err := sv.s.Minimize(context.Background(), sq, []float64{0}, Settings{Pgtol: -1})
				assertNotConverged(t, err, ReasonAbnormal)
				if res.X[0] != 0 || res.F != 0 {
					t.Errorf("result %+v", res)
				}
			})
		})
	}
}

func assertNotConverged(t *testing.T, err error, want Reason) {
	t.Helper()
	var nc *NotConvergedError
	if !errors.As(err, &nc) {
		t.Fatalf("error %v is not a *NotConvergedError", err)
	}
	if nc.Reason != want {
		t.Errorf("reason %v, want %v", nc.Reason, want)
	}
}

// checkPoint verifies that Result.X is feasible and Result.F is f(Result.X).
func checkPoint(t *testing.T, p Problem, res Result) {
	t.Helper()
	g := make([]float64, len(res.X))
	if f := p.Func(append([]float64(nil), res.X...), g); f != res.F {
		t.Errorf("F = %v but f(X) = %v", res.F, f)
	}
	if v := kktViolation(p, res.X); math.IsInf(v, 1) {
		t.Errorf("X is infeasible")
	}
}

// TestConvergenceBeatsLimits: when the iteration limit is reached at the
// iterate that converges, the solve reports convergence.
func TestConvergenceBeatsLimits(t *testing.T) {
	rb := Problem{Func: rosenbrock}
	x0 := rosenbrockStart(10)
	s := Settings{Factr: -1, Pgtol: 1e-8}
	for _, sv := range solvers() {
		full, err := sv.s.Minimize(context.Background(), rb, x0, s)
		if err != nil {
			t.Fatal(err)
		}
		s2 := s
		s2.MaxIter = full.Iterations
		res, err := sv.s.Minimize(context.Background(), rb, x0, s2)
		if err != nil || res.Reason != ReasonPgtol || res.Iterations != full.Iterations {
			t.Errorf("%s: MaxIter = %d: %v, %v after %d iterations", sv.name, s2.MaxIter, err, res.Reason, res.Iterations)
		}
		s2.MaxIter = full.Iterations - 1
		res, err = sv.s.Minimize(context.Background(), rb, x0, s2)
		assertNotConverged(t, err, ReasonMaxIter)
	}
}

// TestCallback checks the progress reports: consecutive iteration numbers,
// a non-increasing objective, and X matching F.
func TestCallback(t *testing.T) {
	rb := Problem{Func: rosenbrock}
	for _, sv := range solvers() {
		var its []Iteration
		res, err := sv.s.Minimize(context.Background(), rb, rosenbrockStart(20), Settings{Callback: func(it Iteration) bool {
			g := make([]float64, len(it.X))
			if f := rosenbrock(append([]float64(nil), it.X...), g); f != it.F {
				t.Errorf("%s: iteration %d: F = %v, f(X) = %v", sv.name, it.Iter, it.F, f)
			}
			it.X = nil
			its = append(its, it)
			return true
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(its) != res.Iterations {
			t.Errorf("%s: %d callbacks for %d iterations", sv.name, len(its), res.Iterations)
		}
		for i, it := range its {
			if it.Iter != i+1 {
				t.Errorf("%s: callback %d reports iteration %d", sv.name, i, it.Iter)
			}
			if i > 0 && (it.F > its[i-1].F || it.Evals <= its[i-1].Evals) {
				t.Errorf("%s: iteration %d: f %v after %v, evals %d after %d", sv.name, it.Iter, it.F, its[i-1].F, it.Evals, its[i-1].Evals)
			}
		}
	}
}

// TestDeterministic: repeated solves give bit-identical results.
func TestDeterministic(t *testing.T) {
	q, _ := quadProblem(120, 3, 0.05, -0.5, 0.5)
	for _, sv := range solvers() {
		a, _ := sv.s.Minimize(context.Background(), q.p, q.x0, q.s)
		b, _ := sv.s.Minimize(context.Background(), q.p, q.x0, q.s)
		if a.F != b.F || a.Iterations != b.Iterations || a.Evaluations != b.Evaluations {
			t.Errorf("%s: runs differ: %+v vs %+v", sv.name, a, b)
		}
		for i := range a.X {
			if a.X[i] != b.X[i] {
				t.Errorf("%s: x[%d] differs", sv.name, i)
				break
			}
		}
	}
}

// TestFixedVariables: l = u fixes a variable; x0 outside is projected.
func TestFixedVariables(t *testing.T) {
	p := Problem{Func: rosenbrock, Lower: []float64{0.3, -5, -5, -5}, Upper: []float64{0.3, 5, 5, 5}}
	for _, sv := range solvers() {
		res, err := sv.s.Minimize(context.Background(), p, []float64{2, 2, -1.2, 1}, Settings{Pgtol: 1e-9, Factr: -1})
		if err != nil {
			t.Fatalf("%s: %v", sv.name, err)
		}
		if res.X[0] != 0.3 || math.Abs(res.X[1]-0.09) > 1e-8 || math.Abs(res.X[2]-1) > 1e-6 {
			t.Errorf("%s: x = %v", sv.name, res.X)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	inf := math.Inf(1)
	ok := Problem{Func: rosenbrock}
	for _, c := range []struct {
		name string
		p    Problem
		x0   []float64
		s    Settings
	}{
		{"nil func", Problem{}, []float64{1, 2}, Settings{}},
		{"empty x0", ok, nil, Settings{}},
		{"x0 NaN", ok, []float64{math.NaN(), 1}, Settings{}},
		{"x0 Inf", ok, []float64{inf, 1}, Settings{}},
		{"len Lower", Problem{Func: rosenbrock, Lower: []float64{0}}, []float64{1, 2}, Settings{}},
		{"len Upper", Problem{Func: rosenbrock, Upper: []float64{0, 1, 2}}, []float64{1, 2}, Settings{}},
		{"l > u", Problem{Func: rosenbrock, Lower: []float64{0, 2}, Upper: []float64{1, 1}}, []float64{1, 2}, Settings{}},
		{"lower +Inf", Problem{Func: rosenbrock, Lower: []float64{inf, 0}}, []float64{1, 2}, Settings{}},
		{"upper -Inf", Problem{Func: rosenbrock, Upper: []float64{-inf, 0}}, []float64{1, 2}, Settings{}},
		{"NaN bound", Problem{Func: rosenbrock, Lower: []float64{math.NaN(), 0}}, []float64{1, 2}, Settings{}},
		{"M < 0", ok, []float64{1, 2}, Settings{M: -1}},
		{"MaxIter < 0", ok, []float64{1, 2}, Settings{MaxIter: -1}},
		{"MaxEval < 0", ok, []float64{1, 2}, Settings{MaxEval: -1}},
		{"Factr NaN", ok, []float64{1, 2}, Settings{Factr: math.NaN()}},
		{"Pgtol +Inf", ok, []float64{1, 2}, Settings{Pgtol: inf}},
	} {
		for _, sv := range solvers() {
			_, err := sv.s.Minimize(context.Background(), c.p, c.x0, c.s)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s/%s: error %v, want ErrInvalidArgument", c.name, sv.name, err)
			}
		}
	}
}

// TestFuncCannotCorruptState: the point handed to Func is a copy, so a
// function that scribbles on it does not change the solve.
func TestFuncCannotCorruptState(t *testing.T) {
	clean := Problem{Func: rosenbrock}
	dirty := Problem{Func: func(x, g []float64) float64 {
		f := rosenbrock(x, g)
		for i := range x {
			x[i] = 1e300
		}
		return f
	}}
	for _, sv := range solvers() {
		a, _ := sv.s.Minimize(context.Background(), clean, rosenbrockStart(6), Settings{})
		b, _ := sv.s.Minimize(context.Background(), dirty, rosenbrockStart(6), Settings{})
		if a.F != b.F || a.Iterations != b.Iterations {
			t.Errorf("%s: %+v vs %+v", sv.name, a, b)
		}
	}
}
