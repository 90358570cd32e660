package lbfgsb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/lbfgsb/lbfgsbtest"
)

// BenchmarkMinimize times whole solves of the extended Rosenbrock function
// from the standard start, unbounded ("free") and with the upper bound
// x_{2i} ≤ 0.5 active at the solution ("bounded", which runs the Cauchy
// point and subspace minimisation every iteration), for each n and solver.
// The objective costs O(n), so the times measure the solvers themselves.
func BenchmarkMinimize(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		up := make([]float64, n)
		for i := range up {
			up[i] = 1e300
			if i%2 == 0 {
				up[i] = 0.5
			}
		}
		for _, variant := range []struct {
			name string
			p    lbfgsb.Problem
		}{
			{"free", lbfgsb.Problem{Func: lbfgsbtest.Rosenbrock}},
			{"bounded", lbfgsb.Problem{Func: lbfgsbtest.Rosenbrock, Upper: up}},
		} {
			for name, s := range solvers() {
				b.Run(fmt.Sprintf("%s/n=%d/%s", variant.name, n, name), func(b *testing.B) {
					x0 := lbfgsbtest.RosenbrockStart(n)
					set := lbfgsb.Settings{Factr: -1, Pgtol: 1e-8}
					var it int
					for i := 0; i < b.N; i++ {
						res, err := s.Minimize(context.Background(), variant.p, x0, set)
						if err != nil {
							b.Fatal(err)
						}
						it = res.Iterations
					}
					b.ReportMetric(float64(it), "iters")
				})
			}
		}
	}
}
