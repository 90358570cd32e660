// Package lptest is the conformance suite of linear-programming solvers, in
// the manner of gonum's testlapack: lp's CLP and pure-Go solvers run it, and
// so does every engine backend (through engine/enginetest). It checks the
// optimality conditions of every solution (primal feasibility, the sign
// conditions and complementary slackness of the duals and reduced costs,
// strong duality), known optima with their primal and dual solutions,
// degenerate and cycling-prone problems, random problems with every kind of
// row and column, warm re-solves after added columns and rows against cold
// solves (and the pivots the warm starts save), deleted columns and rows
// and changed row bounds against cold solves, infeasibility and
// unboundedness reported as errors, and the invalid problems, out-of-range
// numbers, closed models and cancelled contexts refused.
package lptest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lp"
)

var inf = math.Inf(1)

// CheckKKT verifies that sol is an optimal solution of p: status, sizes,
// primal feasibility, RowActivity = A x, ReducedCosts = c − Aᵀy, the sign
// conditions of the duals and reduced costs with complementary slackness,
// Objective = cᵀx and strong duality (lp.DualObjective equals cᵀx), all to
// tol (relative to the magnitudes involved).
func CheckKKT(t *testing.T, p engine.LPProblem, sol engine.LPSolution, tol float64) {
	t.Helper()
	if sol.Status != lp.Optimal {
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
	if dual := lp.DualObjective(p, sol, tol); math.Abs(dual-obj) > tol*scale {
		t.Errorf("duality gap: primal %.15g, dual %.15g", obj, dual)
	}
}

// Textbook is max 3x + 5y s.t. x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x, y ≥ 0, as
// the minimisation of −3x − 5y: optimum −36 at (2, 6) with row duals
// (0, −3/2, −1).
func Textbook() engine.LPProblem {
	return engine.LPProblem{
		RowLower: []float64{-inf, -inf, -inf},
		RowUpper: []float64{4, 12, 18},
		Cols: []engine.LPColumn{
			lp.NonNegative(-3, []int{0, 2}, []float64{1, 3}),
			lp.NonNegative(-5, []int{1, 2}, []float64{2, 2}),
		},
	}
}

// knownLP is a linear program with a known optimum.
type knownLP struct {
	name  string
	p     engine.LPProblem
	obj   float64
	x     []float64 // nil: not unique
	duals []float64 // nil: not unique
	tol   float64   // on the objective: 1e-9 unless given
}

func knownLPs() []knownLP {
	return []knownLP{
		{"textbook", Textbook(), -36, []float64{2, 6}, []float64{0, -1.5, -1}, 0},
		{
			// min x + y s.t. x + y = 1 (equality), x − y ≥ −0.5, x ≥ 0 and
			// y ≥ −2: every feasible point is optimal.
			"equality and free", engine.LPProblem{
				RowLower: []float64{1, -0.5},
				RowUpper: []float64{1, inf},
				Cols: []engine.LPColumn{
					{Obj: 1, Lower: 0, Upper: inf, Rows: []int{0, 1}, Vals: []float64{1, 1}},
					{Obj: 1, Lower: -2, Upper: inf, Rows: []int{0, 1}, Vals: []float64{1, -1}},
				},
			}, 1, nil, nil, 0,
		},
		{
			// min x1 + 2 x2 − x3 s.t. x1 + x2 + x3 = 10 (eq), x1 − x2 ≥ −2, 1 ≤ x3 ≤ 4,
			// x1, x2 ≥ 0. x3 = 4 at its upper bound; then min x1 + 2x2 with x1 + x2 = 6: x1 = 6.
			"equality and boxed column", engine.LPProblem{
				RowLower: []float64{10, -2},
				RowUpper: []float64{10, inf},
				Cols: []engine.LPColumn{
					lp.NonNegative(1, []int{0, 1}, []float64{1, 1}),
					lp.NonNegative(2, []int{0, 1}, []float64{1, -1}),
					{Obj: -1, Lower: 1, Upper: 4, Rows: []int{0}, Vals: []float64{1}},
				},
			}, 6 - 4, []float64{6, 0, 4}, []float64{1, 0}, 0,
		},
		{
			// A free variable and a range row: min −t s.t. 0 ≤ t − x ≤ 3 (range), x + y ≤ 5,
			// t free, x, y ≥ 0, y ≤ 1 → t = x + 3, x = 5 − y, best y = 0: t = 8.
			"free column and range row", engine.LPProblem{
				RowLower: []float64{0, -inf},
				RowUpper: []float64{3, 5},
				Cols: []engine.LPColumn{
					lp.Free(-1, []int{0}, []float64{1}),
					lp.NonNegative(0, []int{0, 1}, []float64{-1, 1}),
					{Obj: 0, Lower: 0, Upper: 1, Rows: []int{1}, Vals: []float64{1}},
				},
			}, -8, []float64{8, 5, 0}, []float64{-1, -1}, 0,
		},
		{
			// Degenerate vertex: max x + y s.t. x + y ≤ 1, x ≤ 1, x + 2y ≤ 1 — three
			// rows active at (1, 0); the duals are not unique.
			"degenerate vertex", engine.LPProblem{
				RowLower: []float64{-inf, -inf, -inf},
				RowUpper: []float64{1, 1, 1},
				Cols: []engine.LPColumn{
					lp.NonNegative(-1, []int{0, 1, 2}, []float64{1, 1, 1}),
					lp.NonNegative(-1, []int{0, 2}, []float64{1, 2}),
				},
			}, -1, []float64{1, 0}, nil, 0,
		},
		{
			// Upper-bounded-only column and a ≥ row: min −2z + w s.t. z + w ≥ 1, z ≤ 3 (no lower
			// bound), w ≥ 0, −z + w ≥ −10 → z = 3, w = 0.
			"upper-bounded column", engine.LPProblem{
				RowLower: []float64{1, -10},
				RowUpper: []float64{inf, inf},
				Cols: []engine.LPColumn{
					{Obj: -2, Lower: math.Inf(-1), Upper: 3, Rows: []int{0, 1}, Vals: []float64{1, -1}},
					lp.NonNegative(1, []int{0, 1}, []float64{1, 1}),
				},
			}, -6, []float64{3, 0}, []float64{0, 0}, 0,
		},
		{
			// Beale's example, on which Dantzig's rule cycles without an
			// anti-cycling device: min −3/4 x1 + 150 x2 − 1/50 x3 + 6 x4 s.t.
			// 1/4 x1 − 60 x2 − 1/25 x3 + 9 x4 ≤ 0, 1/2 x1 − 90 x2 − 1/50 x3 + 3 x4 ≤ 0,
			// x3 ≤ 1, x ≥ 0; optimum −1/20 at x = (1/25, 0, 1, 0).
			"beale", engine.LPProblem{
				RowLower: []float64{-inf, -inf, -inf},
				RowUpper: []float64{0, 0, 1},
				Cols: []engine.LPColumn{
					lp.NonNegative(-0.75, []int{0, 1}, []float64{0.25, 0.5}),
					lp.NonNegative(150, []int{0, 1}, []float64{-60, -90}),
					lp.NonNegative(-0.02, []int{0, 1, 2}, []float64{-0.04, -0.02, 1}),
					lp.NonNegative(6, []int{0, 1}, []float64{9, 3}),
				},
			}, -0.05, nil, nil, 1e-12,
		},
	}
}

// BoxLP returns a feasible, bounded random LP: min cᵀx, Ax ≤ b, 0 ≤ x ≤ 10,
// with b = max(A x0, 0) + slack for a random x0 in the box, so that both x0
// and x = 0 are feasible for the problem and for any subset of its columns.
func BoxLP(rng *rand.Rand, m, n int) engine.LPProblem {
	p := engine.LPProblem{RowLower: make([]float64, m), RowUpper: make([]float64, m)}
	a := make([][]float64, m)
	x0 := make([]float64, n)
	for j := range x0 {
		x0[j] = 10 * rng.Float64()
	}
	for i := range a {
		a[i] = make([]float64, n)
		s := 0.0
		for j := range a[i] {
			if rng.Float64() < 0.5 {
				a[i][j] = rng.NormFloat64()
				s += a[i][j] * x0[j]
			}
		}
		p.RowLower[i] = math.Inf(-1)
		p.RowUpper[i] = math.Max(s, 0) + rng.Float64()
	}
	for j := 0; j < n; j++ {
		c := engine.LPColumn{Obj: rng.NormFloat64(), Lower: 0, Upper: 10}
		for i := 0; i < m; i++ {
			if a[i][j] != 0 {
				c.Rows = append(c.Rows, i)
				c.Vals = append(c.Vals, a[i][j])
			}
		}
		p.Cols = append(p.Cols, c)
	}
	return p
}

// MixedLP returns a feasible, bounded LP with m rows and n columns of mixed
// kinds (≥, ≤, range and equality rows; non-negative, boxed, upper-bounded and
// free columns).
func MixedLP(rng *rand.Rand, m, n int) engine.LPProblem {
	x0 := make([]float64, n)
	p := engine.LPProblem{RowLower: make([]float64, m), RowUpper: make([]float64, m), Cols: make([]engine.LPColumn, n)}
	for j := range p.Cols {
		var c engine.LPColumn
		switch j % 4 {
		case 0: // x ≥ 0, c ≥ 0
			c = engine.LPColumn{Obj: rng.Float64(), Lower: 0, Upper: inf}
			x0[j] = rng.Float64()
		case 1: // boxed, any cost
			c = engine.LPColumn{Obj: rng.NormFloat64(), Lower: -1, Upper: 1 + rng.Float64()}
			x0[j] = -1 + 2*rng.Float64()
		case 2: // x ≤ u, c ≤ 0
			c = engine.LPColumn{Obj: -rng.Float64(), Lower: math.Inf(-1), Upper: 2}
			x0[j] = 2 - rng.Float64()
		case 3: // boxed with zero lower bound
			c = engine.LPColumn{Obj: rng.NormFloat64(), Lower: 0, Upper: 3}
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

// randomLPs are the small random problems of every kind: twelve mixed LPs
// of 3 to 14 rows and 5 to 24 columns.
func randomLPs() []engine.LPProblem {
	rng := rand.New(rand.NewPCG(1, 2))
	var ps []engine.LPProblem
	for trial := 0; trial < 12; trial++ {
		m, n := 3+rng.IntN(12), 5+rng.IntN(20)
		ps = append(ps, MixedLP(rng, m, n))
	}
	return ps
}

// largerLPs are three mixed LPs of 120 rows and 250 columns.
func largerLPs() []engine.LPProblem {
	rng := rand.New(rand.NewPCG(9, 10))
	var ps []engine.LPProblem
	for trial := 0; trial < 3; trial++ {
		ps = append(ps, MixedLP(rng, 120, 250))
	}
	return ps
}

// degenerateLP has n free variables and m ≥ rows of which tight are active at
// x0, with the objective c = Σ_{tight} y_i a_i (y > 0): x0 is an optimal,
// highly degenerate vertex with value cᵀx0.
func degenerateLP(rng *rand.Rand, m, n, tight int) (engine.LPProblem, float64) {
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
	p := engine.LPProblem{RowLower: make([]float64, m), RowUpper: make([]float64, m), Cols: make([]engine.LPColumn, n)}
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
		col := lp.Free(c[j], nil, nil)
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

// marginLP is the restricted master LP of PSDBoost with random margins:
// rows H_r w + ξ_r − ρ ≥ 0 (r < m) and 1ᵀw = 1; columns ρ (free, cost −1),
// ξ_r (≥ 0, cost c), then the w_j (≥ 0) — feasible with any number of w columns.
func marginLP(rng *rand.Rand, m, terms int, c float64) (engine.LPProblem, []engine.LPColumn) {
	p := engine.LPProblem{RowLower: make([]float64, m+1), RowUpper: make([]float64, m+1)}
	rows := make([]int, m)
	neg := make([]float64, m)
	for r := 0; r < m; r++ {
		p.RowUpper[r] = inf
		rows[r], neg[r] = r, -1
	}
	p.RowLower[m], p.RowUpper[m] = 1, 1
	p.Cols = append(p.Cols, lp.Free(-1, rows, neg))
	for r := 0; r < m; r++ {
		p.Cols = append(p.Cols, lp.NonNegative(c, []int{r}, []float64{1}))
	}
	var ws []engine.LPColumn
	for j := 0; j < terms; j++ {
		col := lp.NonNegative(0, nil, nil)
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

// marginRows builds the hinge master LP of PSDBoost over the triplet rows
// given (in that order): row 0 is 1ᵀw = 1, row 1+k is H_{rows[k]} w + ξ_k − ρ ≥ 0;
// columns are ρ, the terms w_j, then ξ_k.
func marginRows(h [][]float64, rows []int, c float64) engine.LPProblem {
	p := engine.LPProblem{RowLower: []float64{1}, RowUpper: []float64{1}}
	rho := lp.Free(-1, nil, nil)
	for k := range rows {
		rho.Rows = append(rho.Rows, 1+k)
		rho.Vals = append(rho.Vals, -1)
		p.RowLower = append(p.RowLower, 0)
		p.RowUpper = append(p.RowUpper, inf)
	}
	p.Cols = append(p.Cols, rho)
	for _, hj := range h {
		col := lp.NonNegative(0, []int{0}, []float64{1})
		for k, r := range rows {
			col.Rows = append(col.Rows, 1+k)
			col.Vals = append(col.Vals, hj[r])
		}
		p.Cols = append(p.Cols, col)
	}
	for k := range rows {
		p.Cols = append(p.Cols, lp.NonNegative(c, []int{1 + k}, []float64{1}))
	}
	return p
}

// TestSolver runs the suite on s.
func TestSolver(t *testing.T, s engine.LPSolver) {
	ctx := context.Background()

	t.Run("known", func(t *testing.T) {
		for _, tc := range knownLPs() {
			t.Run(tc.name, func(t *testing.T) {
				sol, err := lp.Solve(ctx, s, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				CheckKKT(t, tc.p, sol, 1e-9)
				tol := tc.tol
				if tol == 0 {
					tol = 1e-9
				}
				if math.Abs(sol.Objective-tc.obj) > tol {
					t.Errorf("objective %.15g, want %g", sol.Objective, tc.obj)
				}
				for j, v := range tc.x {
					if math.Abs(sol.X[j]-v) > 1e-9 {
						t.Errorf("x[%d] = %g, want %g", j, sol.X[j], v)
					}
				}
				for i, v := range tc.duals {
					if math.Abs(sol.Duals[i]-v) > 1e-9 {
						t.Errorf("dual[%d] = %g, want %g", i, sol.Duals[i], v)
					}
				}
			})
		}
	})

	t.Run("infeasible-unbounded", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			p    engine.LPProblem
			want error
			st   engine.LPStatus
		}{
			{"infeasible rows", engine.LPProblem{
				RowLower: []float64{-inf, 2},
				RowUpper: []float64{1, inf},
				Cols:     []engine.LPColumn{lp.NonNegative(1, []int{0, 1}, []float64{1, 1})},
			}, lp.ErrInfeasible, lp.Infeasible},
			{"infeasible column bound", engine.LPProblem{
				RowLower: []float64{2},
				RowUpper: []float64{inf},
				Cols:     []engine.LPColumn{{Obj: 1, Lower: 0, Upper: 1, Rows: []int{0}, Vals: []float64{1}}},
			}, lp.ErrInfeasible, lp.Infeasible},
			{"unbounded", engine.LPProblem{
				RowLower: []float64{-inf},
				RowUpper: []float64{1},
				Cols: []engine.LPColumn{
					lp.NonNegative(-1, []int{0}, []float64{1}),
					lp.NonNegative(0, []int{0}, []float64{-1}),
				},
			}, lp.ErrUnbounded, lp.Unbounded},
		} {
			sol, err := lp.Solve(ctx, s, tc.p)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
			}
			if sol.Status != tc.st {
				t.Errorf("%s: status %v, want %v", tc.name, sol.Status, tc.st)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			p    engine.LPProblem
		}{
			{"row bounds length", engine.LPProblem{RowLower: []float64{0}, RowUpper: nil}},
			{"row lower > upper", engine.LPProblem{RowLower: []float64{1}, RowUpper: []float64{0}}},
			{"NaN row bound", engine.LPProblem{RowLower: []float64{math.NaN()}, RowUpper: []float64{1}}},
			{"row index", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(1, []int{1}, []float64{1})}}},
			{"negative row index", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(1, []int{-1}, []float64{1})}}},
			{"duplicate row", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(1, []int{0, 0}, []float64{1, 2})}}},
			{"NaN coefficient", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(1, []int{0}, []float64{math.NaN()})}}},
			{"Inf objective", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(inf, []int{0}, []float64{1})}}},
			{"column bounds", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{{Obj: 1, Lower: 2, Upper: 1}}}},
			{"lengths", engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{{Obj: 1, Upper: 1, Rows: []int{0}}}}},
		} {
			if m, err := s.NewModel(tc.p); !errors.Is(err, lp.ErrInvalidArgument) {
				if m != nil {
					m.Close()
				}
				t.Errorf("%s: error %v, want ErrInvalidArgument", tc.name, err)
			}
		}
		m, err := s.NewModel(Textbook())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AddColumns(lp.NonNegative(1, []int{3}, []float64{1})); !errors.Is(err, lp.ErrInvalidArgument) {
			t.Errorf("add bad column: error %v, want ErrInvalidArgument", err)
		}
		if m.NumCols() != 2 {
			t.Errorf("a rejected column was added: %d columns", m.NumCols())
		}
		m.Close()
	})

	t.Run("closed", func(t *testing.T) {
		m, err := s.NewModel(Textbook())
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := m.Solve(ctx); !errors.Is(err, lp.ErrClosed) {
			t.Errorf("Solve after Close: %v", err)
		}
		if err := m.AddColumns(lp.NonNegative(1, nil, nil)); !errors.Is(err, lp.ErrClosed) {
			t.Errorf("AddColumns after Close: %v", err)
		}
		if err := m.AddRows(engine.LPRow{Upper: 1}); err != lp.ErrClosed {
			t.Errorf("AddRows after Close: %v", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := lp.Solve(cctx, s, Textbook()); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})

	// An objective coefficient of 1e25 made CLP fail an
	// assertion and abort the process. Every out-of-range number is refused
	// before it reaches a solver, by NewModel and AddColumns alike, and
	// values at the limit lp.MaxValue still solve.
	t.Run("value-range", func(t *testing.T) {
		base := func() engine.LPProblem {
			return engine.LPProblem{
				RowLower: []float64{1},
				RowUpper: []float64{inf},
				Cols:     []engine.LPColumn{{Obj: 1, Lower: 0, Upper: 10, Rows: []int{0}, Vals: []float64{1}}},
			}
		}
		for _, tc := range []struct {
			name string
			edit func(p *engine.LPProblem)
		}{
			{"objective 1e25", func(p *engine.LPProblem) { p.Cols[0].Obj = 1e25 }},
			{"objective -1e25", func(p *engine.LPProblem) { p.Cols[0].Obj = -1e25 }},
			{"objective MaxFloat64", func(p *engine.LPProblem) { p.Cols[0].Obj = math.MaxFloat64 }},
			{"coefficient 1e25", func(p *engine.LPProblem) { p.Cols[0].Vals[0] = 1e25 }},
			{"coefficient -1e300", func(p *engine.LPProblem) { p.Cols[0].Vals[0] = -1e300 }},
			{"column upper 1e25", func(p *engine.LPProblem) { p.Cols[0].Upper = 1e25 }},
			{"column lower -1e30", func(p *engine.LPProblem) { p.Cols[0].Lower = -1e30 }},
			{"row lower 1e25", func(p *engine.LPProblem) { p.RowLower[0] = 1e25 }},
			{"row upper 1e300", func(p *engine.LPProblem) { p.RowUpper[0] = 1e300 }},
		} {
			p := base()
			tc.edit(&p)
			if m, err := s.NewModel(p); !errors.Is(err, lp.ErrInvalidArgument) {
				if m != nil {
					m.Close()
				}
				t.Errorf("NewModel with %s: error %v, want ErrInvalidArgument", tc.name, err)
			}
			// The same column added to a model built without it.
			q := base()
			m, err := s.NewModel(engine.LPProblem{RowLower: q.RowLower, RowUpper: q.RowUpper})
			if err != nil {
				t.Fatal(err)
			}
			if p.RowLower[0] == q.RowLower[0] && p.RowUpper[0] == q.RowUpper[0] { // a bad column, not bad rows
				if err := m.AddColumns(p.Cols[0]); !errors.Is(err, lp.ErrInvalidArgument) {
					t.Errorf("AddColumns with %s: error %v, want ErrInvalidArgument", tc.name, err)
				}
			}
			m.Close()
		}
		// At the limit: min 1e20·x s.t. x ≥ 1, x ≤ 10 has x = 1.
		p := base()
		p.Cols[0].Obj = lp.MaxValue
		sol, err := lp.Solve(ctx, s, p)
		if err != nil || sol.X[0] != 1 || sol.Objective != lp.MaxValue {
			t.Errorf("objective at MaxValue: x = %v, objective %g, err %v; want x = 1", sol.X, sol.Objective, err)
		}
	})

	t.Run("random", func(t *testing.T) {
		for k, p := range randomLPs() {
			t.Run(fmt.Sprintf("%d_%dx%d", k, len(p.RowLower), len(p.Cols)), func(t *testing.T) {
				sol, err := lp.Solve(ctx, s, p)
				if err != nil {
					t.Fatal(err)
				}
				CheckKKT(t, p, sol, 1e-8)
			})
		}
	})

	t.Run("degenerate", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for trial := 0; trial < 6; trial++ {
			n := 5 + rng.IntN(10)
			p, opt := degenerateLP(rng, 4*n, n, 2*n)
			t.Run(fmt.Sprint(trial), func(t *testing.T) {
				sol, err := lp.Solve(ctx, s, p)
				if err != nil {
					t.Fatal(err)
				}
				CheckKKT(t, p, sol, 1e-8)
				if math.Abs(sol.Objective-opt) > 1e-8*(1+math.Abs(opt)) {
					t.Errorf("objective %.15g, want %.15g", sol.Objective, opt)
				}
			})
		}
	})

	t.Run("larger", func(t *testing.T) {
		for k, p := range largerLPs() {
			sol, err := lp.Solve(ctx, s, p)
			if err != nil {
				t.Fatalf("LP %d: %v", k, err)
			}
			CheckKKT(t, p, sol, 1e-7)
			t.Logf("LP %d: objective %.12g in %d iterations", k, sol.Objective, sol.Iterations)
		}
	})

	// Warm re-solve after adding a batch of columns equals a cold solve.
	t.Run("warm-batch", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 32))
		full := BoxLP(rng, 40, 60)
		half := engine.LPProblem{RowLower: full.RowLower, RowUpper: full.RowUpper, Cols: full.Cols[:30]}
		m, err := s.NewModel(half)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if _, err := m.Solve(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.AddColumns(full.Cols[30:]...); err != nil {
			t.Fatal(err)
		}
		warm, err := m.Solve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cold, err := lp.Solve(ctx, s, full)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(warm.Objective-cold.Objective) > 1e-8*(1+math.Abs(cold.Objective)) {
			t.Errorf("warm re-solve objective %v, cold solve %v", warm.Objective, cold.Objective)
		}
		CheckKKT(t, full, warm, 1e-9)
	})

	// Columns added one at a time (as column generation does): each
	// re-solve against a cold solve of the same problem.
	t.Run("warm-one-at-a-time", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for trial := 0; trial < 2; trial++ {
			full := MixedLP(rng, 10, 24)
			start := 8
			m, err := s.NewModel(engine.LPProblem{RowLower: full.RowLower, RowUpper: full.RowUpper, Cols: full.Cols[:start]})
			if err != nil {
				t.Fatal(err)
			}
			prev := math.Inf(1)
			for n := start; n <= len(full.Cols); n++ {
				if n > start {
					if err := m.AddColumns(full.Cols[n-1]); err != nil {
						t.Fatal(err)
					}
				}
				sub := engine.LPProblem{RowLower: full.RowLower, RowUpper: full.RowUpper, Cols: full.Cols[:n]}
				warm, werr := m.Solve(ctx)
				cold, cerr := lp.Solve(ctx, s, sub)
				if (werr == nil) != (cerr == nil) {
					t.Fatalf("trial %d n=%d: warm error %v, cold error %v", trial, n, werr, cerr)
				}
				if werr != nil {
					// The first columns alone may not reach feasibility.
					if !errors.Is(werr, lp.ErrInfeasible) {
						t.Fatalf("trial %d n=%d: %v", trial, n, werr)
					}
					continue
				}
				CheckKKT(t, sub, warm, 1e-8)
				if math.Abs(warm.Objective-cold.Objective) > 1e-9*(1+math.Abs(cold.Objective)) {
					t.Errorf("trial %d n=%d: warm objective %.15g, cold %.15g", trial, n, warm.Objective, cold.Objective)
				}
				// Adding a column can only improve a minimisation.
				if warm.Objective > prev+1e-9*(1+math.Abs(prev)) {
					t.Errorf("trial %d n=%d: objective rose from %g to %g after adding a column", trial, n, prev, warm.Objective)
				}
				prev = warm.Objective
			}
			m.Close()
		}
	})

	// Adding columns to a solved model re-solves from the old basis, with
	// fewer pivots in total than solving each problem cold (column
	// generation on the PSDBoost master LP).
	t.Run("warm-saves-pivots", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(12, 13))
		const m = 80
		p, ws := marginLP(rng, m, 40, 1/(0.2*m))
		p.Cols = append(p.Cols, ws[0])
		model, err := s.NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		cur := engine.LPProblem{RowLower: p.RowLower, RowUpper: p.RowUpper, Cols: append([]engine.LPColumn(nil), p.Cols...)}
		warm, cold := 0, 0
		for k := 0; k < len(ws); k++ {
			if k > 0 {
				if err := model.AddColumns(ws[k]); err != nil {
					t.Fatal(err)
				}
				cur.Cols = append(cur.Cols, ws[k])
			}
			wsol, err := model.Solve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			csol, err := lp.Solve(ctx, s, cur)
			if err != nil {
				t.Fatal(err)
			}
			CheckKKT(t, cur, wsol, 1e-8)
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

	// Rows added to a solved model (with one new column each, as in row
	// generation on the PSDBoost master) give the optimum of the grown
	// problem solved from scratch, with valid optimality conditions.
	t.Run("add-rows", func(t *testing.T) {
		const m, terms = 40, 4
		c := 1 / (0.2 * m)
		rng := rand.New(rand.NewPCG(5, 6))
		h := make([][]float64, terms)
		for j := range h {
			h[j] = make([]float64, m)
			for r := range h[j] {
				h[j][r] = rng.NormFloat64() + 0.3
			}
		}
		order := rng.Perm(m)
		start := 12 // ≥ 1/C rows keep the LP bounded
		model, err := s.NewModel(marginRows(h, order[:start], c))
		if err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		if _, err := model.Solve(ctx); err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(-1)
		for n := start; n < m; n += 7 {
			end := min(n+7, m)
			for k := n; k < end; k++ {
				r := order[k]
				row := engine.LPRow{Lower: 0, Upper: inf, Cols: []int{0}, Vals: []float64{-1}}
				for j := range h {
					row.Cols = append(row.Cols, 1+j)
					row.Vals = append(row.Vals, h[j][r])
				}
				if err := model.AddRows(row); err != nil {
					t.Fatal(err)
				}
				if err := model.AddColumns(lp.NonNegative(c, []int{1 + k}, []float64{1})); err != nil {
					t.Fatal(err)
				}
			}
			warm, err := model.Solve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			full := marginRows(h, order[:end], c)
			CheckKKT(t, full, warm, 1e-8)
			cold, err := lp.Solve(ctx, s, full)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(warm.Objective-cold.Objective) > 1e-9*(1+math.Abs(cold.Objective)) {
				t.Errorf("%d rows: warm objective %.15g, cold %.15g", end, warm.Objective, cold.Objective)
			}
			// More rows can only raise a minimum.
			if warm.Objective < prev-1e-9*(1+math.Abs(prev)) {
				t.Errorf("%d rows: objective fell from %g to %g", end, prev, warm.Objective)
			}
			prev = warm.Objective
		}
	})

	testEdits(t, s)

	// Malformed rows are rejected before reaching a solver.
	t.Run("add-rows-invalid", func(t *testing.T) {
		model, err := s.NewModel(engine.LPProblem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []engine.LPColumn{lp.NonNegative(1, []int{0}, []float64{1})}})
		if err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		for _, r := range []engine.LPRow{
			{Lower: 1, Upper: 0},
			{Lower: 0, Upper: 1, Cols: []int{1}, Vals: []float64{1}},
			{Lower: 0, Upper: 1, Cols: []int{0, 0}, Vals: []float64{1, 1}},
			{Lower: 0, Upper: 1, Cols: []int{0}, Vals: []float64{math.NaN()}},
			{Lower: 0, Upper: 1, Cols: []int{0}},
		} {
			if err := model.AddRows(r); err == nil {
				t.Errorf("row %+v accepted", r)
			}
		}
	})
}

// TestAgree checks that two solvers reach the same optima (to 1e-8
// relative) on random LPs: box-constrained ones, small ones of every kind
// and larger ones.
func TestAgree(t *testing.T, a, b engine.LPSolver) {
	rng := rand.New(rand.NewPCG(41, 42))
	var ps []engine.LPProblem
	for k := 0; k < 3; k++ {
		ps = append(ps, BoxLP(rng, 30+10*k, 50+10*k))
	}
	ps = append(ps, randomLPs()...)
	ps = append(ps, largerLPs()...)
	for k, p := range ps {
		sa, err := lp.Solve(context.Background(), a, p)
		if err != nil {
			t.Fatalf("LP %d: %s: %v", k, a.Name(), err)
		}
		sb, err := lp.Solve(context.Background(), b, p)
		if err != nil {
			t.Fatalf("LP %d: %s: %v", k, b.Name(), err)
		}
		if math.Abs(sa.Objective-sb.Objective) > 1e-8*(1+math.Abs(sa.Objective)) {
			t.Errorf("LP %d (%d×%d): %s objective %.15g, %s %.15g", k, len(p.RowLower), len(p.Cols), a.Name(), sa.Objective, b.Name(), sb.Objective)
		}
	}
}
