package lp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/lp"
)

func ExampleSolve() {
	// maximise 3x + 5y subject to x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x, y ≥ 0,
	// written as the minimisation of −3x − 5y.
	p := lp.Problem{
		RowLower: []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
		RowUpper: []float64{4, 12, 18},
		Cols: []lp.Column{
			lp.NonNegative(-3, []int{0, 2}, []float64{1, 3}),
			lp.NonNegative(-5, []int{1, 2}, []float64{2, 2}),
		},
	}
	sol, err := lp.Solve(context.Background(), lp.Go, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("objective %.4g at x = %.4g, y = %.4g; row duals %.4g\n", sol.Objective, sol.X[0], sol.X[1], sol.Duals)
	// Output: objective -36 at x = 2, y = 6; row duals [0 -1.5 -1]
}
