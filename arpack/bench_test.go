package arpack_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/arpack/arpacktest"
)

// BenchmarkEigsSparse times the 10 smallest eigenpairs (SA, NCV = 30,
// Tol = 1e-10) of n1×n2 grid Laplacians, N = n1·n2, with both solvers.
func BenchmarkEigsSparse(b *testing.B) {
	for _, sz := range [][2]int{{50, 67}, {100, 137}, {150, 187}} {
		op, _ := arpacktest.GridOp(b, sz[0], sz[1])
		for name, s := range solvers() {
			b.Run(fmt.Sprintf("backend=%s/N=%d", name, op.Dim()), func(b *testing.B) {
				var applies int
				for i := 0; i < b.N; i++ {
					res, err := s.Eigs(context.Background(), op, 10, arpack.SmallestAlgebraic, arpack.Options{NCV: 30, Tol: 1e-10, Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					applies = res.OpApplies
				}
				b.ReportMetric(float64(applies), "products/op")
			})
		}
	}
}
