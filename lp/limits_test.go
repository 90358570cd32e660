package lp

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestValueRange runs issue 21 item 1's reproducer at the lp level: an
// objective coefficient of 1e25 made CLP fail an assertion and abort the
// process. Every out-of-range number is now refused before the C call, by
// both implementations alike, and values at the limit still solve.
func TestValueRange(t *testing.T) {
	base := func() Problem {
		return Problem{
			RowLower: []float64{1},
			RowUpper: []float64{math.Inf(1)},
			Cols: []Column{
				{Obj: 1, Lower: 0, Upper: 10, Rows: []int{0}, Vals: []float64{1}},
			},
		}
	}
	bad := []struct {
		name string
		edit func(p *Problem)
	}{
		{"objective 1e25", func(p *Problem) { p.Cols[0].Obj = 1e25 }},
		{"objective -1e25", func(p *Problem) { p.Cols[0].Obj = -1e25 }},
		{"objective MaxFloat64", func(p *Problem) { p.Cols[0].Obj = math.MaxFloat64 }},
		{"coefficient 1e25", func(p *Problem) { p.Cols[0].Vals[0] = 1e25 }},
		{"coefficient -1e300", func(p *Problem) { p.Cols[0].Vals[0] = -1e300 }},
		{"column upper 1e25", func(p *Problem) { p.Cols[0].Upper = 1e25 }},
		{"column lower -1e30", func(p *Problem) { p.Cols[0].Lower = -1e30 }},
		{"row lower 1e25", func(p *Problem) { p.RowLower[0] = 1e25 }},
		{"row upper 1e300", func(p *Problem) { p.RowUpper[0] = 1e300 }},
	}
	for _, s := range solvers() {
		for _, tc := range bad {
			p := base()
			tc.edit(&p)
			if m, err := s.NewModel(p); !errors.Is(err, ErrInvalidArgument) {
				if m != nil {
					m.Close()
				}
				t.Errorf("%s: NewModel with %s: error %v, want ErrInvalidArgument", s.Name(), tc.name, err)
			}
			// The same column added to a model built without it.
			q := base()
			m, err := s.NewModel(Problem{RowLower: q.RowLower, RowUpper: q.RowUpper})
			if err != nil {
				t.Fatal(err)
			}
			if p.RowLower[0] == q.RowLower[0] && p.RowUpper[0] == q.RowUpper[0] { // a bad column, not bad rows
				if err := m.AddColumns(p.Cols[0]); !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("%s: AddColumns with %s: error %v, want ErrInvalidArgument", s.Name(), tc.name, err)
				}
			}
			m.Close()
		}
		// At the limit: min 1e20·x s.t. x ≥ 1, x ≤ 10 has x = 1.
		p := base()
		p.Cols[0].Obj = MaxValue
		sol, err := Solve(context.Background(), s, p)
		if err != nil || sol.X[0] != 1 || sol.Objective != MaxValue {
			t.Errorf("%s: objective at MaxValue: x = %v, objective %g, err %v; want x = 1", s.Name(), sol.X, sol.Objective, err)
		}
	}
}
