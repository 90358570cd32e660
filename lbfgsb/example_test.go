package lbfgsb_test

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/lbfgsb"
)

// rosenbrock is f(x, y) = (1 − x)² + 100(y − x²)² with its gradient.
func rosenbrock(x, g []float64) float64 {
	a, b := 1-x[0], x[1]-x[0]*x[0]
	g[0] = -2*a - 400*x[0]*b
	g[1] = 200 * b
	return a*a + 100*b*b
}

// Minimise the Rosenbrock function with an upper bound on x only (y is
// free): the bound is active at the solution (0.5, 0.25).
func Example() {
	solver := lbfgsb.Go
	if lbfgsb.HaveNative {
		solver = lbfgsb.Native // the Fortran code, when compiled in
	}
	p := lbfgsb.Problem{
		Func:  rosenbrock,
		Upper: []float64{0.5, math.Inf(1)},
	}
	res, err := solver.Minimize(context.Background(), p, []float64{-1.2, 1}, lbfgsb.Settings{Pgtol: 1e-8})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = (%.6f, %.6f)  f = %.6f  %v\n", res.X[0], res.X[1], res.F, res.Reason)
	// Output:
	// x = (0.500000, 0.250000)  f = 0.250000  converged (pgtol)
}

// A solve that stops early returns the best point found with a typed error.
func ExampleNotConvergedError() {
	p := lbfgsb.Problem{Func: rosenbrock}
	res, err := lbfgsb.Go.Minimize(context.Background(), p, []float64{-1.2, 1}, lbfgsb.Settings{MaxIter: 5})
	var nc *lbfgsb.NotConvergedError
	if errors.As(err, &nc) {
		fmt.Printf("stopped: %v after %d iterations; best f = %.4f\n", nc.Reason, res.Iterations, res.F)
	}
	// Output:
	// stopped: iteration limit after 5 iterations; best f = 4.0875
}
