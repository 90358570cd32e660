package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// solvers returns the implementations compiled into this build.
func solvers() []Solver {
	s := []Solver{Go}
	if HaveNative {
		s = append(s, Native)
	}
	return s
}

var inf = math.Inf(1)

// checkKKT verifies primal feasibility, dual sign conditions, complementary
// slackness and strong duality of an optimal solution of p.
func checkKKT(t *testing.T, p Problem, sol Solution, tol float64) {
	t.Helper()
	if sol.Status != Optimal {
		t.Fatalf("status %v, want optimal", sol.Status)
	}
	m, n := len(p.RowLower), len(p.Cols)
	if len(sol.X) != n || len(sol.Duals) != m || len(sol.ReducedCosts) != n || len(sol.RowActivity) != m {
		t.Fatalf("solution sizes x=%d y=%d d=%d act=%d for %d×%d", len(sol.X), len(sol.Duals), len(sol.ReducedCosts), len(sol.RowActivity), m, n)
	}
	act := make([]float64, m)
	var obj float64
	scale := 1.0
	for j, c := range p.Cols {
		x := sol.X[j]
		obj += c.Obj * x
		scale = math.Max(scale, math.Abs(c.Obj*x))
		d := c.Obj
		for k, r := range c.Rows {
			act[r] += c.Vals[k] * x
			d -= c.Vals[k] * sol.Duals[r]
		}
		if x < c.Lower-tol*(1+math.Abs(c.Lower)) || x > c.Upper+tol*(1+math.Abs(c.Upper)) {
			t.Errorf("x[%d] = %g outside [%g, %g]", j, x, c.Lower, c.Upper)
		}
		if math.Abs(d-sol.ReducedCosts[j]) > tol*(1+math.Abs(d)) {
			t.Errorf("reduced cost %d = %g, c − Aᵀy = %g", j, sol.ReducedCosts[j], d)
		}
		switch {
		case d > tol && math.Abs(x-c.Lower) > tol*(1+math.Abs(x)):
			t.Errorf("column %d: reduced cost %g > 0 but x = %g is not at its lower bound %g", j, d, x, c.Lower)
		case d < -tol && math.Abs(x-c.Upper) > tol*(1+math.Abs(x)):
			t.Errorf("column %d: reduced cost %g < 0 but x = %g is not at its upper bound %g", j, d, x, c.Upper)
		}
	}
	for i := range act {
		if math.Abs(act[i]-sol.RowActivity[i]) > tol*(1+math.Abs(act[i])) {
			t.Errorf("row activity %d = %g, A x = %g", i, sol.RowActivity[i], act[i])
		}
		lo, hi, y := p.RowLower[i], p.RowUpper[i], sol.Duals[i]
		if act[i] < lo-tol*(1+math.Abs(lo)) || act[i] > hi+tol*(1+math.Abs(hi)) {
			t.Errorf("row %d activity %g outside [%g, %g]", i, act[i], lo, hi)
		}
		switch {
		case y > tol && math.Abs(act[i]-lo) > tol*(1+math.Abs(lo)):
			t.Errorf("row %d: dual %g > 0 but activity %g is not at its lower bound %g", i, y, act[i], lo)
		case y < -tol && math.Abs(act[i]-hi) > tol*(1+math.Abs(hi)):
			t.Errorf("row %d: dual %g < 0 but activity %g is not at its upper bound %g", i, y, act[i], hi)
		}
	}
	if math.Abs(obj-sol.Objective) > tol*scale {
		t.Errorf("objective %g, cᵀx = %g", sol.Objective, obj)
	}
	if dual := DualObjective(p, sol, tol); math.Abs(dual-obj) > tol*scale {
		t.Errorf("duality gap: primal %.15g, dual %.15g", obj, dual)
	}
}

// textbook: max 3x + 5y s.t. x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x, y ≥ 0 (optimum 36 at (2, 6),
// duals of the min form (0, −3/2, −1)).
func textbook() Problem {
	return Problem{
		RowLower: []float64{-inf, -inf, -inf},
		RowUpper: []float64{4, 12, 18},
		Cols: []Column{
			NonNegative(-3, []int{0, 2}, []float64{1, 3}),
			NonNegative(-5, []int{1, 2}, []float64{2, 2}),
		},
	}
}

func TestKnownLPs(t *testing.T) {
	type want struct {
		obj   float64
		x     []float64
		duals []float64 // nil: not unique
	}
	tests := []struct {
		name string
		p    Problem
		want want
	}{
		{"textbook", textbook(), want{-36, []float64{2, 6}, []float64{0, -1.5, -1}}},
		{
			// min x1 + 2 x2 − x3 s.t. x1 + x2 + x3 = 10 (eq), x1 − x2 ≥ −2, 1 ≤ x3 ≤ 4,
			// x1, x2 ≥ 0. x3 = 4 at its upper bound; then min x1 + 2x2 with x1 + x2 = 6: x1 = 6.
			"equality and boxed column",
			Problem{
				RowLower: []float64{10, -2},
				RowUpper: []float64{10, inf},
				Cols: []Column{
					NonNegative(1, []int{0, 1}, []float64{1, 1}),
					NonNegative(2, []int{0, 1}, []float64{1, -1}),
					{Obj: -1, Lower: 1, Upper: 4, Rows: []int{0}, Vals: []float64{1}},
				},
			},
			want{6 - 4, []float64{6, 0, 4}, []float64{1, 0}},
		},
		{
			// A free variable and a range row: min −t s.t. 0 ≤ t − x ≤ 3 (range), x + y ≤ 5,
			// t free, x, y ≥ 0, y ≤ 1 → t = x + 3, x = 5 − y, best y = 0: t = 8.
			"free column and range row",
			Problem{
				RowLower: []float64{0, -inf},
				RowUpper: []float64{3, 5},
				Cols: []Column{
					Free(-1, []int{0}, []float64{1}),
					NonNegative(0, []int{0, 1}, []float64{-1, 1}),
					{Obj: 0, Lower: 0, Upper: 1, Rows: []int{1}, Vals: []float64{1}},
				},
			},
			want{-8, []float64{8, 5, 0}, []float64{-1, -1}},
		},
		{
			// Degenerate vertex: max x + y s.t. x + y ≤ 1, x ≤ 1, x + 2y ≤ 1 — three
			// rows active at (1, 0); the duals are not unique.
			"degenerate vertex",
			Problem{
				RowLower: []float64{-inf, -inf, -inf},
				RowUpper: []float64{1, 1, 1},
				Cols: []Column{
					NonNegative(-1, []int{0, 1, 2}, []float64{1, 1, 1}),
					NonNegative(-1, []int{0, 2}, []float64{1, 2}),
				},
			},
			want{-1, []float64{1, 0}, nil},
		},
		{
			// Upper-bounded-only column and a ≥ row: min −2z + w s.t. z + w ≥ 1, z ≤ 3 (no lower
			// bound), w ≥ 0, −z + w ≥ −10 → z = 3, w = 0.
			"upper-bounded column",
			Problem{
				RowLower: []float64{1, -10},
				RowUpper: []float64{inf, inf},
				Cols: []Column{
					{Obj: -2, Lower: math.Inf(-1), Upper: 3, Rows: []int{0, 1}, Vals: []float64{1, -1}},
					NonNegative(1, []int{0, 1}, []float64{1, 1}),
				},
			},
			want{-6, []float64{3, 0}, []float64{0, 0}},
		},
	}
	for _, s := range solvers() {
		for _, tc := range tests {
			t.Run(s.Name()+"/"+tc.name, func(t *testing.T) {
				sol, err := Solve(context.Background(), s, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				checkKKT(t, tc.p, sol, 1e-9)
				if math.Abs(sol.Objective-tc.want.obj) > 1e-9 {
					t.Errorf("objective %g, want %g", sol.Objective, tc.want.obj)
				}
				for j, v := range tc.want.x {
					if math.Abs(sol.X[j]-v) > 1e-9 {
						t.Errorf("x[%d] = %g, want %g", j, sol.X[j], v)
					}
				}
				for i, v := range tc.want.duals {
					if math.Abs(sol.Duals[i]-v) > 1e-9 {
						t.Errorf("dual[%d] = %g, want %g", i, sol.Duals[i], v)
					}
				}
			})
		}
	}
}

func TestInfeasibleUnbounded(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want error
		st   Status
	}{
		{"infeasible", Problem{
			RowLower: []float64{-inf, 2},
			RowUpper: []float64{1, inf},
			Cols:     []Column{NonNegative(1, []int{0, 1}, []float64{1, 1})},
		}, ErrInfeasible, Infeasible},
		{"unbounded", Problem{
			RowLower: []float64{-inf},
			RowUpper: []float64{1},
			Cols: []Column{
				NonNegative(-1, []int{0}, []float64{1}),
				NonNegative(0, []int{0}, []float64{-1}),
			},
		}, ErrUnbounded, Unbounded},
	}
	for _, s := range solvers() {
		for _, tc := range tests {
			t.Run(s.Name()+"/"+tc.name, func(t *testing.T) {
				sol, err := Solve(context.Background(), s, tc.p)
				if !errors.Is(err, tc.want) {
					t.Fatalf("error %v, want %v", err, tc.want)
				}
				if sol.Status != tc.st {
					t.Errorf("status %v, want %v", sol.Status, tc.st)
				}
			})
		}
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
	}{
		{"row bounds length", Problem{RowLower: []float64{0}, RowUpper: nil}},
		{"row lower > upper", Problem{RowLower: []float64{1}, RowUpper: []float64{0}}},
		{"NaN row bound", Problem{RowLower: []float64{math.NaN()}, RowUpper: []float64{1}}},
		{"row index", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(1, []int{1}, []float64{1})}}},
		{"negative row index", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(1, []int{-1}, []float64{1})}}},
		{"duplicate row", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(1, []int{0, 0}, []float64{1, 2})}}},
		{"NaN coefficient", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(1, []int{0}, []float64{math.NaN()})}}},
		{"Inf objective", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(inf, []int{0}, []float64{1})}}},
		{"column bounds", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{{Obj: 1, Lower: 2, Upper: 1}}}},
		{"lengths", Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{{Obj: 1, Upper: 1, Rows: []int{0}}}}},
	}
	for _, s := range solvers() {
		for _, tc := range tests {
			t.Run(s.Name()+"/"+tc.name, func(t *testing.T) {
				_, err := s.NewModel(tc.p)
				if !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("error %v, want ErrInvalidArgument", err)
				}
			})
		}
		t.Run(s.Name()+"/add bad column", func(t *testing.T) {
			m, err := s.NewModel(textbook())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.AddColumns(NonNegative(1, []int{3}, []float64{1})); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("error %v, want ErrInvalidArgument", err)
			}
			if m.NumCols() != 2 {
				t.Errorf("a rejected column was added: %d columns", m.NumCols())
			}
		})
		t.Run(s.Name()+"/closed", func(t *testing.T) {
			m, err := s.NewModel(textbook())
			if err != nil {
				t.Fatal(err)
			}
			m.Close()
			if err := m.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := m.Solve(context.Background()); !errors.Is(err, ErrClosed) {
				t.Errorf("Solve after Close: %v", err)
			}
			if err := m.AddColumns(NonNegative(1, nil, nil)); !errors.Is(err, ErrClosed) {
				t.Errorf("AddColumns after Close: %v", err)
			}
		})
		t.Run(s.Name()+"/cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := Solve(ctx, s, textbook()); !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
		})
	}
}

// randomLP returns a feasible, bounded LP with m rows and n columns of mixed
// kinds (≥, ≤, range and equality rows; non-negative, boxed, upper-bounded and
// free columns).
func randomLP(rng *rand.Rand, m, n int) Problem {
	x0 := make([]float64, n)
	p := Problem{RowLower: make([]float64, m), RowUpper: make([]float64, m), Cols: make([]Column, n)}
	for j := range p.Cols {
		var c Column
		switch j % 4 {
		case 0: // x ≥ 0, c ≥ 0
			c = Column{Obj: rng.Float64(), Lower: 0, Upper: inf}
			x0[j] = rng.Float64()
		case 1: // boxed, any cost
			c = Column{Obj: rng.NormFloat64(), Lower: -1, Upper: 1 + rng.Float64()}
			x0[j] = -1 + 2*rng.Float64()
		case 2: // x ≤ u, c ≤ 0
			c = Column{Obj: -rng.Float64(), Lower: math.Inf(-1), Upper: 2}
			x0[j] = 2 - rng.Float64()
		case 3: // boxed with zero lower bound
			c = Column{Obj: rng.NormFloat64(), Lower: 0, Upper: 3}
			x0[j] = 3 * rng.Float64()
		}
		for i := 0; i < m; i++ {
			if rng.Float64() < 0.6 {
				c.Rows = append(c.Rows, i)
				c.Vals = append(c.Vals, rng.NormFloat64())
			}
		}
		p.Cols[j] = c
	}
	act := make([]float64, m)
	for j, c := range p.Cols {
		for k, r := range c.Rows {
			act[r] += c.Vals[k] * x0[j]
		}
	}
	for i := 0; i < m; i++ {
		switch i % 4 {
		case 0:
			p.RowLower[i], p.RowUpper[i] = act[i]-rng.Float64(), inf
		case 1:
			p.RowLower[i], p.RowUpper[i] = math.Inf(-1), act[i]+rng.Float64()
		case 2:
			p.RowLower[i], p.RowUpper[i] = act[i]-rng.Float64(), act[i]+rng.Float64()
		case 3:
			p.RowLower[i], p.RowUpper[i] = act[i], act[i]
		}
	}
	return p
}

func TestRandomStrongDuality(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 12; trial++ {
		m, n := 3+rng.IntN(12), 5+rng.IntN(20)
		p := randomLP(rng, m, n)
		var sols []Solution
		for _, s := range solvers() {
			t.Run(fmt.Sprintf("%s/%d_%dx%d", s.Name(), trial, m, n), func(t *testing.T) {
				sol, err := Solve(context.Background(), s, p)
				if err != nil {
					t.Fatal(err)
				}
				checkKKT(t, p, sol, 1e-8)
				sols = append(sols, sol)
			})
		}
		if len(sols) == 2 && math.Abs(sols[0].Objective-sols[1].Objective) > 1e-8*(1+math.Abs(sols[0].Objective)) {
			t.Errorf("trial %d: go objective %.15g, native %.15g", trial, sols[0].Objective, sols[1].Objective)
		}
	}
}

// TestWarmResolve adds columns one at a time (as column generation does) and
// checks each re-solve against a cold solve of the same problem.
func TestWarmResolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range solvers() {
		t.Run(s.Name(), func(t *testing.T) {
			full := randomLP(rng, 10, 24)
			start := 8
			m, err := s.NewModel(Problem{RowLower: full.RowLower, RowUpper: full.RowUpper, Cols: full.Cols[:start]})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			prev := math.Inf(1)
			for n := start; n <= len(full.Cols); n++ {
				if n > start {
					if err := m.AddColumns(full.Cols[n-1]); err != nil {
						t.Fatal(err)
					}
				}
				sub := Problem{RowLower: full.RowLower, RowUpper: full.RowUpper, Cols: full.Cols[:n]}
				warm, werr := m.Solve(context.Background())
				cold, cerr := Solve(context.Background(), s, sub)
				if (werr == nil) != (cerr == nil) {
					t.Fatalf("n=%d: warm error %v, cold error %v", n, werr, cerr)
				}
				if werr != nil {
					// The first columns alone may not reach feasibility.
					if !errors.Is(werr, ErrInfeasible) {
						t.Fatalf("n=%d: %v", n, werr)
					}
					continue
				}
				checkKKT(t, sub, warm, 1e-8)
				if math.Abs(warm.Objective-cold.Objective) > 1e-9*(1+math.Abs(cold.Objective)) {
					t.Errorf("n=%d: warm objective %.15g, cold %.15g", n, warm.Objective, cold.Objective)
				}
				// Adding a column can only improve a minimisation.
				if warm.Objective > prev+1e-9*(1+math.Abs(prev)) {
					t.Errorf("n=%d: objective rose from %g to %g after adding a column", n, prev, warm.Objective)
				}
				prev = warm.Objective
			}
		})
	}
}

func ExampleSolve() {
	// maximise 3x + 5y subject to x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x, y ≥ 0,
	// written as the minimisation of −3x − 5y.
	p := Problem{
		RowLower: []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
		RowUpper: []float64{4, 12, 18},
		Cols: []Column{
			NonNegative(-3, []int{0, 2}, []float64{1, 3}),
			NonNegative(-5, []int{1, 2}, []float64{2, 2}),
		},
	}
	sol, err := Solve(context.Background(), Go, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("objective %.4g at x = %.4g, y = %.4g; row duals %.4g\n", sol.Objective, sol.X[0], sol.X[1], sol.Duals)
	// Output: objective -36 at x = 2, y = 6; row duals [0 -1.5 -1]
}

// TestBeale solves Beale's example, on which Dantzig's rule cycles without
// an anti-cycling device: min −3/4 x1 + 150 x2 − 1/50 x3 + 6 x4 s.t.
// 1/4 x1 − 60 x2 − 1/25 x3 + 9 x4 ≤ 0, 1/2 x1 − 90 x2 − 1/50 x3 + 3 x4 ≤ 0,
// x3 ≤ 1, x ≥ 0; optimum −1/20 at x = (1/25, 0, 1, 0).
func TestBeale(t *testing.T) {
	p := Problem{
		RowLower: []float64{-inf, -inf, -inf},
		RowUpper: []float64{0, 0, 1},
		Cols: []Column{
			NonNegative(-0.75, []int{0, 1}, []float64{0.25, 0.5}),
			NonNegative(150, []int{0, 1}, []float64{-60, -90}),
			NonNegative(-0.02, []int{0, 1, 2}, []float64{-0.04, -0.02, 1}),
			NonNegative(6, []int{0, 1}, []float64{9, 3}),
		},
	}
	for _, s := range solvers() {
		t.Run(s.Name(), func(t *testing.T) {
			sol, err := Solve(context.Background(), s, p)
			if err != nil {
				t.Fatal(err)
			}
			checkKKT(t, p, sol, 1e-9)
			if math.Abs(sol.Objective+0.05) > 1e-12 {
				t.Errorf("objective %.15g, want −0.05", sol.Objective)
			}
		})
	}
}

// degenerateLP has n free variables and m ≥ rows of which tight are active at
// x0, with the objective c = Σ_{tight} y_i a_i (y > 0): x0 is an optimal,
// highly degenerate vertex with value cᵀx0.
func degenerateLP(rng *rand.Rand, m, n, tight int) (Problem, float64) {
	x0 := make([]float64, n)
	for j := range x0 {
		x0[j] = rng.NormFloat64()
	}
	a := make([][]float64, m)
	for i := range a {
		a[i] = make([]float64, n)
		for j := range a[i] {
			a[i][j] = float64(rng.IntN(5) - 2) // small integers: exact ties
		}
	}
	p := Problem{RowLower: make([]float64, m), RowUpper: make([]float64, m), Cols: make([]Column, n)}
	c := make([]float64, n)
	for i := 0; i < m; i++ {
		var act float64
		for j := range x0 {
			act += a[i][j] * x0[j]
		}
		p.RowUpper[i] = inf
		p.RowLower[i] = act
		if i >= tight {
			p.RowLower[i] = act - 1 - rng.Float64()
			continue
		}
		y := 0.5 + rng.Float64()
		for j := range c {
			c[j] += y * a[i][j]
		}
	}
	var opt float64
	for j := range p.Cols {
		col := Free(c[j], nil, nil)
		for i := 0; i < m; i++ {
			if a[i][j] != 0 {
				col.Rows = append(col.Rows, i)
				col.Vals = append(col.Vals, a[i][j])
			}
		}
		p.Cols[j] = col
		opt += c[j] * x0[j]
	}
	return p, opt
}

func TestDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 6; trial++ {
		n := 5 + rng.IntN(10)
		p, opt := degenerateLP(rng, 4*n, n, 2*n)
		for _, s := range solvers() {
			t.Run(fmt.Sprintf("%s/%d", s.Name(), trial), func(t *testing.T) {
				sol, err := Solve(context.Background(), s, p)
				if err != nil {
					t.Fatal(err)
				}
				checkKKT(t, p, sol, 1e-8)
				if math.Abs(sol.Objective-opt) > 1e-8*(1+math.Abs(opt)) {
					t.Errorf("objective %.15g, want %.15g", sol.Objective, opt)
				}
			})
		}
	}
}

// TestLarger compares the two solvers on random LPs of a few hundred rows.
func TestLarger(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 3; trial++ {
		p := randomLP(rng, 120, 250)
		var objs []float64
		for _, s := range solvers() {
			sol, err := Solve(context.Background(), s, p)
			if err != nil {
				t.Fatalf("%s: %v", s.Name(), err)
			}
			checkKKT(t, p, sol, 1e-7)
			objs = append(objs, sol.Objective)
			t.Logf("trial %d %s: objective %.12g in %d iterations", trial, s.Name(), sol.Objective, sol.Iterations)
		}
		if len(objs) == 2 && math.Abs(objs[0]-objs[1]) > 1e-8*(1+math.Abs(objs[0])) {
			t.Errorf("trial %d: go %.15g, native %.15g", trial, objs[0], objs[1])
		}
	}
}

// marginLP is the restricted master LP of PSDBoost with random margins:
// rows H_r w + ξ_r − ρ ≥ 0 (r < m) and 1ᵀw = 1; columns ρ (free, cost −1),
// ξ_r (≥ 0, cost c), then the w_j (≥ 0) — feasible with any number of w columns.
func marginLP(rng *rand.Rand, m, terms int, c float64) (Problem, []Column) {
	p := Problem{RowLower: make([]float64, m+1), RowUpper: make([]float64, m+1)}
	rows := make([]int, m)
	neg := make([]float64, m)
	for r := 0; r < m; r++ {
		p.RowUpper[r] = inf
		rows[r], neg[r] = r, -1
	}
	p.RowLower[m], p.RowUpper[m] = 1, 1
	p.Cols = append(p.Cols, Free(-1, rows, neg))
	for r := 0; r < m; r++ {
		p.Cols = append(p.Cols, NonNegative(c, []int{r}, []float64{1}))
	}
	var ws []Column
	for j := 0; j < terms; j++ {
		col := NonNegative(0, nil, nil)
		for r := 0; r < m; r++ {
			col.Rows = append(col.Rows, r)
			col.Vals = append(col.Vals, rng.NormFloat64()+0.3)
		}
		col.Rows = append(col.Rows, m)
		col.Vals = append(col.Vals, 1)
		ws = append(ws, col)
	}
	return p, ws
}

// TestWarmStartSavesPivots: adding columns to a solved model re-solves from
// the old basis, with fewer pivots in total than solving each problem cold
// (column generation on the PSDBoost master LP).
func TestWarmStartSavesPivots(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	const m = 80
	p, ws := marginLP(rng, m, 40, 1/(0.2*m))
	p.Cols = append(p.Cols, ws[0])
	for _, s := range solvers() {
		t.Run(s.Name(), func(t *testing.T) {
			model, err := s.NewModel(p)
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			cur := Problem{RowLower: p.RowLower, RowUpper: p.RowUpper, Cols: append([]Column(nil), p.Cols...)}
			warm, cold := 0, 0
			for k := 0; k < len(ws); k++ {
				if k > 0 {
					if err := model.AddColumns(ws[k]); err != nil {
						t.Fatal(err)
					}
					cur.Cols = append(cur.Cols, ws[k])
				}
				wsol, err := model.Solve(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				csol, err := Solve(context.Background(), s, cur)
				if err != nil {
					t.Fatal(err)
				}
				checkKKT(t, cur, wsol, 1e-8)
				if math.Abs(wsol.Objective-csol.Objective) > 1e-9*(1+math.Abs(csol.Objective)) {
					t.Errorf("%d columns: warm %.15g, cold %.15g", len(cur.Cols), wsol.Objective, csol.Objective)
				}
				if k > 0 {
					warm += wsol.Iterations
					cold += csol.Iterations
				}
			}
			t.Logf("pivots over %d added columns: warm %d, cold %d", len(ws)-1, warm, cold)
			if warm >= cold {
				t.Errorf("warm starts took %d pivots, cold solves %d", warm, cold)
			}
		})
	}
}

// TestGoTooLarge: the Go solver refuses, with ErrTooLarge and before any
// dense allocation, a problem whose basis matrices would not fit.
func TestGoTooLarge(t *testing.T) {
	m := GoMaxRows + 1
	p := Problem{RowLower: make([]float64, m), RowUpper: make([]float64, m)}
	for i := range p.RowUpper {
		p.RowUpper[i] = 1
	}
	if _, err := Go.NewModel(p); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("NewModel with %d rows: got %v, want ErrTooLarge", m, err)
	}
	p.RowLower, p.RowUpper = p.RowLower[:GoMaxRows], p.RowUpper[:GoMaxRows]
	if _, err := Go.NewModel(p); err != nil {
		t.Fatalf("NewModel with %d rows: %v", GoMaxRows, err)
	}
}

// cancelAfter is a context whose Err reports context.Canceled from its
// (n+1)-th call on: a cancellation at a deterministic point of a solve.
type cancelAfter struct {
	context.Context
	n, calls int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// TestCancelMidSolve: a Go solve whose context is cancelled after it started
// stops before the next pivot, returns NotSolved with the pivots made and an
// error wrapping context.Canceled, and the same model then solves to the
// optimum of a fresh model. (A CLP call cannot be interrupted: the native
// solver checks ctx only before and after it.)
func TestCancelMidSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	p := randomLP(rng, 200, 400)
	fresh, err := Solve(context.Background(), Go, p)
	if err != nil {
		t.Fatal(err)
	}
	model, err := Go.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	// Err is checked before the solve and before every pivot: the solve
	// stops after a few pivots.
	ctx := &cancelAfter{Context: context.Background(), n: 20}
	sol, err := model.Solve(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if sol.Status != NotSolved || sol.Iterations <= 0 || sol.Iterations >= fresh.Iterations {
		t.Fatalf("cancelled solve: status %v after %d pivots (a whole solve takes %d)", sol.Status, sol.Iterations, fresh.Iterations)
	}
	again, err := model.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkKKT(t, p, again, 1e-7)
	if math.Abs(again.Objective-fresh.Objective) > 1e-9*(1+math.Abs(fresh.Objective)) {
		t.Errorf("after the cancelled solve %.15g, fresh %.15g", again.Objective, fresh.Objective)
	}
}
