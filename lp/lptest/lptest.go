// Package lptest is the conformance suite of linear-programming solvers, in
// the manner of gonum's testlapack: lp's CLP and pure-Go solvers run it, and
// so does every engine backend (through engine/enginetest). It checks known
// optima, primal feasibility and strong duality (the dual objective from the
// row duals equals the primal), warm re-solves after added columns against
// cold solves, and infeasibility reported as an error.
package lptest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lp"
)

// lpCase is a linear program with a known optimum.
type lpCase struct {
	name string
	p    engine.LPProblem
	obj  float64
}

func knownLPs() []lpCase {
	inf := math.Inf(1)
	return []lpCase{
		{
			// max 3x + 5y s.t. x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x,y ≥ 0: optimum 36 at (2, 6).
			name: "textbook",
			p: engine.LPProblem{
				RowLower: []float64{-inf, -inf, -inf},
				RowUpper: []float64{4, 12, 18},
				Cols: []engine.LPColumn{
					lp.NonNegative(-3, []int{0, 2}, []float64{1, 3}),
					lp.NonNegative(-5, []int{1, 2}, []float64{2, 2}),
				},
			},
			obj: -36,
		},
		{
			// min x + y s.t. x + y = 1 (equality), x − y ≥ −0.5, free y bounded below by −2.
			name: "equality-and-free",
			p: engine.LPProblem{
				RowLower: []float64{1, -0.5},
				RowUpper: []float64{1, inf},
				Cols: []engine.LPColumn{
					{Obj: 1, Lower: 0, Upper: inf, Rows: []int{0, 1}, Vals: []float64{1, 1}},
					{Obj: 1, Lower: -2, Upper: inf, Rows: []int{0, 1}, Vals: []float64{1, -1}},
				},
			},
			obj: 1,
		},
	}
}

// randomLP returns a feasible, bounded random LP: min cᵀx, Ax ≤ b, 0 ≤ x ≤ 10,
// with b = max(A x0, 0) + slack for a random x0 in the box, so that both x0
// and x = 0 are feasible for the problem and for any subset of its columns.
func randomLP(rng *rand.Rand, m, n int) engine.LPProblem {
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

// checkLPOptimality checks primal feasibility, the sign conditions of the
// duals and reduced costs, and strong duality (primal = dual objective).
func checkLPOptimality(t *testing.T, name string, p engine.LPProblem, sol engine.LPSolution) {
	t.Helper()
	const tol = 1e-7
	for i, act := range sol.RowActivity {
		if act < p.RowLower[i]-tol || act > p.RowUpper[i]+tol {
			t.Errorf("%s: row %d activity %v outside [%v, %v]", name, i, act, p.RowLower[i], p.RowUpper[i])
		}
	}
	for j, x := range sol.X {
		if x < p.Cols[j].Lower-tol || x > p.Cols[j].Upper+tol {
			t.Errorf("%s: x[%d] = %v outside its bounds", name, j, x)
		}
	}
	dual := lp.DualObjective(p, sol, 1e-9)
	if math.Abs(dual-sol.Objective) > 1e-7*(1+math.Abs(sol.Objective)) {
		t.Errorf("%s: primal objective %v, dual objective %v", name, sol.Objective, dual)
	}
}

// TestSolver runs the suite on s.
func TestSolver(t *testing.T, s engine.LPSolver) {
	ctx := context.Background()
	for _, c := range knownLPs() {
		sol, err := lp.Solve(ctx, s, c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(sol.Objective-c.obj) > 1e-9 {
			t.Errorf("%s: objective %v, want %v", c.name, sol.Objective, c.obj)
		}
		checkLPOptimality(t, c.name, c.p, sol)
	}
	// Warm re-solve after adding columns equals a cold solve.
	rng := rand.New(rand.NewPCG(31, 32))
	full := randomLP(rng, 40, 60)
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
	checkLPOptimality(t, "warm", full, warm)
	// An infeasible problem is an error, not a solution.
	inf := engine.LPProblem{RowLower: []float64{2}, RowUpper: []float64{math.Inf(1)}, Cols: []engine.LPColumn{{Obj: 1, Lower: 0, Upper: 1, Rows: []int{0}, Vals: []float64{1}}}}
	if _, err := lp.Solve(ctx, s, inf); !errors.Is(err, lp.ErrInfeasible) {
		t.Errorf("infeasible LP: error %v, want ErrInfeasible", err)
	}
}

// TestAgree checks that two solvers reach the same optima on random LPs.
func TestAgree(t *testing.T, a, b engine.LPSolver) {
	rng := rand.New(rand.NewPCG(41, 42))
	for k := 0; k < 3; k++ {
		p := randomLP(rng, 30+10*k, 50+10*k)
		sa, err := lp.Solve(context.Background(), a, p)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := lp.Solve(context.Background(), b, p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sa.Objective-sb.Objective) > 1e-8*(1+math.Abs(sa.Objective)) {
			t.Errorf("LP %d: %s objective %v, %s %v", k, a.Name(), sa.Objective, b.Name(), sb.Objective)
		}
	}
}
