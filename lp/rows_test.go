package lp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// marginRows builds the hinge master LP of PSDBoost over the triplet rows
// given (in that order): row 0 is 1ᵀw = 1, row 1+k is H_{rows[k]} w + ξ_k − ρ ≥ 0;
// columns are ρ, the terms w_j, then ξ_k.
func marginRows(h [][]float64, rows []int, c float64) Problem {
	p := Problem{RowLower: []float64{1}, RowUpper: []float64{1}}
	rho := Free(-1, nil, nil)
	for k := range rows {
		rho.Rows = append(rho.Rows, 1+k)
		rho.Vals = append(rho.Vals, -1)
		p.RowLower = append(p.RowLower, 0)
		p.RowUpper = append(p.RowUpper, inf)
	}
	p.Cols = append(p.Cols, rho)
	for _, hj := range h {
		col := NonNegative(0, []int{0}, []float64{1})
		for k, r := range rows {
			col.Rows = append(col.Rows, 1+k)
			col.Vals = append(col.Vals, hj[r])
		}
		p.Cols = append(p.Cols, col)
	}
	for k := range rows {
		p.Cols = append(p.Cols, NonNegative(c, []int{1 + k}, []float64{1}))
	}
	return p
}

// TestAddRows: rows added to a solved model (with one new column each, as in
// row generation on the PSDBoost master) give the optimum of the grown
// problem solved from scratch, with valid optimality conditions, on both
// implementations; the native re-solve starts from the old basis.
func TestAddRows(t *testing.T) {
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
	for _, s := range solvers() {
		t.Run(s.Name(), func(t *testing.T) {
			start := 12 // ≥ 1/C rows keep the LP bounded
			model, err := s.NewModel(marginRows(h, order[:start], c))
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			if _, err := model.Solve(context.Background()); err != nil {
				t.Fatal(err)
			}
			prev := math.Inf(-1)
			for n := start; n < m; n += 7 {
				end := min(n+7, m)
				for k := n; k < end; k++ {
					r := order[k]
					row := Row{Lower: 0, Upper: inf, Cols: []int{0}, Vals: []float64{-1}}
					for j := range h {
						row.Cols = append(row.Cols, 1+j)
						row.Vals = append(row.Vals, h[j][r])
					}
					if err := model.AddRows(row); err != nil {
						t.Fatal(err)
					}
					if err := model.AddColumns(NonNegative(c, []int{1 + k}, []float64{1})); err != nil {
						t.Fatal(err)
					}
				}
				warm, err := model.Solve(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				full := marginRows(h, order[:end], c)
				checkKKT(t, full, warm, 1e-8)
				cold, err := Solve(context.Background(), s, full)
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
	}
}

// TestAddRowsInvalid: malformed rows are rejected before reaching a solver.
func TestAddRowsInvalid(t *testing.T) {
	for _, s := range solvers() {
		model, err := s.NewModel(Problem{RowLower: []float64{0}, RowUpper: []float64{1}, Cols: []Column{NonNegative(1, []int{0}, []float64{1})}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []Row{
			{Lower: 1, Upper: 0},
			{Lower: 0, Upper: 1, Cols: []int{1}, Vals: []float64{1}},
			{Lower: 0, Upper: 1, Cols: []int{0, 0}, Vals: []float64{1, 1}},
			{Lower: 0, Upper: 1, Cols: []int{0}, Vals: []float64{math.NaN()}},
			{Lower: 0, Upper: 1, Cols: []int{0}},
		} {
			if err := model.AddRows(r); err == nil {
				t.Errorf("%s: row %+v accepted", s.Name(), r)
			}
		}
		model.Close()
		if err := model.AddRows(Row{Upper: 1}); err != ErrClosed {
			t.Errorf("%s: AddRows on a closed model: %v", s.Name(), err)
		}
	}
}
