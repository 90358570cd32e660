package lptest

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lp"
)

// testEdits checks DeleteColumns, DeleteRows and SetRowBounds: each
// re-solve after an edit equals a cold solve of the edited problem and
// satisfies its optimality conditions; folding non-basic columns at their
// bounds into the row bounds, and deleting rows that do not bind (as
// PSDBoost's master does), keep the optimum without a pivot on the native
// solver; and malformed edits are refused.
func testEdits(t *testing.T, s engine.LPSolver) {
	ctx := context.Background()

	// Delete a mix of columns (basic and non-basic) or of rows (binding
	// and not), re-solving after each edit.
	for _, tc := range []struct {
		name    string
		seed    uint64
		problem func(*rand.Rand) engine.LPProblem
		count   func(engine.LPProblem) int // columns or rows of a problem
		size    func(engine.LPModel) int   // and of the model
		delete  func(engine.LPModel, []int) error
		without func(engine.LPProblem, []int) engine.LPProblem
	}{
		{"delete-columns", 51, func(r *rand.Rand) engine.LPProblem { return BoxLP(r, 30, 50) },
			func(p engine.LPProblem) int { return len(p.Cols) }, engine.LPModel.NumCols,
			engine.LPModel.DeleteColumns, withoutColumns},
		{"delete-rows", 57, func(r *rand.Rand) engine.LPProblem { return MixedLP(r, 16, 20) },
			func(p engine.LPProblem) int { return len(p.RowLower) }, engine.LPModel.NumRows,
			engine.LPModel.DeleteRows, withoutRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, tc.seed+1))
			for trial := 0; trial < 3; trial++ {
				cur := tc.problem(rng)
				model, err := s.NewModel(cur)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := model.Solve(ctx); err != nil {
					t.Fatal(err)
				}
				for round := 0; round < 3; round++ {
					var del []int
					for k := tc.count(cur) - 1; k >= 0; k-- {
						if rng.Float64() < 0.2 {
							del = append(del, k) // descending: any order is allowed
						}
					}
					if err := tc.delete(model, del); err != nil {
						t.Fatal(err)
					}
					cur = tc.without(cur, del)
					if got, want := tc.size(model), tc.count(cur); got != want {
						t.Fatalf("trial %d round %d: %d after deleting, want %d", trial, round, got, want)
					}
					compareCold(t, s, model, cur)
				}
				model.Close()
			}
		})
	}

	// Rows strictly inside their bounds at the optimum (their logicals
	// basic) leave without moving it: the re-solve is optimal as it stands.
	t.Run("delete-slack-rows", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(59, 60))
		cur := BoxLP(rng, 40, 30)
		model, err := s.NewModel(cur)
		if err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		sol, err := model.Solve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var del []int
		for i, a := range sol.RowActivity {
			lo, hi := cur.RowLower[i], cur.RowUpper[i]
			above := math.IsInf(lo, -1) || a > lo+1e-7*(1+math.Abs(lo))
			below := math.IsInf(hi, 1) || a < hi-1e-7*(1+math.Abs(hi))
			if above && below {
				del = append(del, i)
			}
		}
		if len(del) == 0 {
			t.Fatal("no row strictly inside its bounds to delete")
		}
		if err := model.DeleteRows(del); err != nil {
			t.Fatal(err)
		}
		cur = withoutRows(cur, del)
		again := compareCold(t, s, model, cur)
		if math.Abs(again.Objective-sol.Objective) > 1e-9*(1+math.Abs(sol.Objective)) {
			t.Errorf("objective %.15g after deleting %d slack rows, %.15g before", again.Objective, len(del), sol.Objective)
		}
		if s.Name() == "native" && again.Iterations != 0 {
			t.Errorf("the re-solve without %d slack rows took %d pivots from an optimal basis", len(del), again.Iterations)
		}
	})

	t.Run("row-bounds", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(53, 54))
		for trial := 0; trial < 3; trial++ {
			cur := MixedLP(rng, 12, 20)
			model, err := s.NewModel(cur)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := model.Solve(ctx); err != nil {
				t.Fatal(err)
			}
			cur.RowLower = append([]float64(nil), cur.RowLower...)
			cur.RowUpper = append([]float64(nil), cur.RowUpper...)
			for round := 0; round < 3; round++ {
				// Widen every chosen row by a random margin: the problem
				// stays feasible (it contains the previous one).
				var rows []int
				var lo, hi []float64
				for i := range cur.RowLower {
					if rng.Float64() < 0.4 {
						l, u := cur.RowLower[i]-rng.Float64(), cur.RowUpper[i]+rng.Float64()
						rows, lo, hi = append(rows, i), append(lo, l), append(hi, u)
						cur.RowLower[i], cur.RowUpper[i] = l, u
					}
				}
				if err := model.SetRowBounds(rows, lo, hi); err != nil {
					t.Fatal(err)
				}
				compareCold(t, s, model, cur)
			}
			model.Close()
		}
	})

	// The dual form of PSDBoost's master: min π, Σ_r u_r h_jr − π ≤ 0,
	// Σ u = 1, 0 ≤ u ≤ C. Columns non-basic at C move into the row bounds
	// and those at 0 leave; the re-solve keeps the optimum.
	t.Run("fold-bounds", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(55, 56))
		const m, terms = 60, 6
		c := 1 / (0.3 * m)
		p := engine.LPProblem{RowLower: []float64{1}, RowUpper: []float64{1}}
		p.Cols = append(p.Cols, lp.Free(1, nil, nil))
		for j := 0; j < terms; j++ {
			p.RowLower = append(p.RowLower, math.Inf(-1))
			p.RowUpper = append(p.RowUpper, 0)
			p.Cols[0].Rows = append(p.Cols[0].Rows, 1+j)
			p.Cols[0].Vals = append(p.Cols[0].Vals, -1)
		}
		for r := 0; r < m; r++ {
			col := engine.LPColumn{Lower: 0, Upper: c, Rows: []int{0}, Vals: []float64{1}}
			for j := 0; j < terms; j++ {
				col.Rows = append(col.Rows, 1+j)
				col.Vals = append(col.Vals, rng.NormFloat64()+0.3)
			}
			p.Cols = append(p.Cols, col)
		}
		model, err := s.NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		defer model.Close()
		sol, err := model.Solve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lo := append([]float64(nil), p.RowLower...)
		hi := append([]float64(nil), p.RowUpper...)
		var del []int
		for j := 1; j < len(p.Cols); j++ {
			d := sol.ReducedCosts[j]
			switch {
			case d < -1e-7 && sol.X[j] > c-1e-9: // at its upper bound
				for k, i := range p.Cols[j].Rows {
					lo[i] -= c * p.Cols[j].Vals[k]
					hi[i] -= c * p.Cols[j].Vals[k]
				}
				del = append(del, j)
			case d > 1e-7 && sol.X[j] < 1e-9: // at zero
				del = append(del, j)
			}
		}
		if len(del) == 0 {
			t.Fatal("no column at a bound to fold")
		}
		rows := make([]int, len(lo))
		for i := range rows {
			rows[i] = i
		}
		if err := model.DeleteColumns(del); err != nil {
			t.Fatal(err)
		}
		if err := model.SetRowBounds(rows, lo, hi); err != nil {
			t.Fatal(err)
		}
		cur := withoutColumns(p, del)
		cur.RowLower, cur.RowUpper = lo, hi
		folded := compareCold(t, s, model, cur)
		if math.Abs(folded.Objective-sol.Objective) > 1e-9*(1+math.Abs(sol.Objective)) {
			t.Errorf("objective %.15g after folding %d of %d columns, %.15g before", folded.Objective, len(del), m, sol.Objective)
		}
		if s.Name() == "native" && folded.Iterations != 0 {
			t.Errorf("the re-solve of the folded LP took %d pivots from an optimal basis", folded.Iterations)
		}
	})

	t.Run("edit-invalid", func(t *testing.T) {
		p := engine.LPProblem{RowLower: []float64{0, 0}, RowUpper: []float64{1, 1},
			Cols: []engine.LPColumn{lp.NonNegative(1, []int{0}, []float64{1}), lp.NonNegative(1, []int{1}, []float64{1})}}
		model, err := s.NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, del := range [][]int{{2}, {-1}, {0, 0}} {
			if err := model.DeleteColumns(del); err == nil {
				t.Errorf("DeleteColumns(%v) accepted", del)
			}
			if err := model.DeleteRows(del); err == nil {
				t.Errorf("DeleteRows(%v) accepted", del)
			}
		}
		for _, tc := range []struct {
			rows   []int
			lo, hi []float64
		}{
			{[]int{2}, []float64{0}, []float64{1}},
			{[]int{-1}, []float64{0}, []float64{1}},
			{[]int{0}, []float64{1}, []float64{0}},
			{[]int{0}, []float64{math.NaN()}, []float64{1}},
			{[]int{0}, []float64{0}, []float64{math.Inf(-1)}},
			{[]int{0}, []float64{0}, []float64{2 * engine.LPMaxValue}},
			{[]int{0, 1}, []float64{0}, []float64{1, 1}},
		} {
			if err := model.SetRowBounds(tc.rows, tc.lo, tc.hi); err == nil {
				t.Errorf("SetRowBounds(%v, %v, %v) accepted", tc.rows, tc.lo, tc.hi)
			}
		}
		if model.NumCols() != 2 || model.NumRows() != 2 {
			t.Errorf("refused edits changed the model: %d rows, %d columns", model.NumRows(), model.NumCols())
		}
		model.Close()
		if err := model.DeleteColumns([]int{0}); err == nil {
			t.Error("DeleteColumns on a closed model accepted")
		}
		if err := model.DeleteRows([]int{0}); err == nil {
			t.Error("DeleteRows on a closed model accepted")
		}
		if err := model.SetRowBounds([]int{0}, []float64{0}, []float64{1}); err == nil {
			t.Error("SetRowBounds on a closed model accepted")
		}
	})
}

// withoutColumns returns p less the columns in del.
func withoutColumns(p engine.LPProblem, del []int) engine.LPProblem {
	gone := make(map[int]bool, len(del))
	for _, j := range del {
		gone[j] = true
	}
	q := engine.LPProblem{RowLower: p.RowLower, RowUpper: p.RowUpper}
	for j, c := range p.Cols {
		if !gone[j] {
			q.Cols = append(q.Cols, c)
		}
	}
	return q
}

// withoutRows returns p less the rows in del, the others renumbered.
func withoutRows(p engine.LPProblem, del []int) engine.LPProblem {
	gone := make(map[int]bool, len(del))
	for _, i := range del {
		gone[i] = true
	}
	newIndex := make([]int, len(p.RowLower))
	var q engine.LPProblem
	for i := range p.RowLower {
		if gone[i] {
			newIndex[i] = -1
			continue
		}
		newIndex[i] = len(q.RowLower)
		q.RowLower = append(q.RowLower, p.RowLower[i])
		q.RowUpper = append(q.RowUpper, p.RowUpper[i])
	}
	for _, c := range p.Cols {
		d := c
		d.Rows, d.Vals = nil, nil
		for k, i := range c.Rows {
			if newIndex[i] >= 0 {
				d.Rows = append(d.Rows, newIndex[i])
				d.Vals = append(d.Vals, c.Vals[k])
			}
		}
		q.Cols = append(q.Cols, d)
	}
	return q
}

// compareCold re-solves model, checks its optimality conditions for p and
// its objective against a cold solve of p, and returns the re-solve.
func compareCold(t *testing.T, s engine.LPSolver, model engine.LPModel, p engine.LPProblem) engine.LPSolution {
	t.Helper()
	warm, err := model.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	CheckKKT(t, p, warm, 1e-8)
	cold, err := lp.Solve(context.Background(), s, p)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(warm.Objective-cold.Objective) > 1e-9*(1+math.Abs(cold.Objective)) {
		t.Errorf("re-solve objective %.15g, cold solve %.15g", warm.Objective, cold.Objective)
	}
	return warm
}
