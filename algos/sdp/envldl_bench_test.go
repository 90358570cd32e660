package sdp

import (
	"fmt"
	"testing"
)

// BenchmarkEnvLDL factors a shifted 2-D grid Laplacian (the pattern of a
// manifold's neighbourhood graph, as MVU's) in reverse Cuthill–McKee order
// and solves with the factor, at the sizes of MVU's swiss rolls.
func BenchmarkEnvLDL(b *testing.B) {
	for _, side := range []int{45, 141} {
		n := side * side
		var indptr, ind []int
		var data []float64
		indptr = append(indptr, 0)
		for i := 0; i < side; i++ {
			for j := 0; j < side; j++ {
				v := i*side + j
				deg := 0.0
				add := func(w int) { ind = append(ind, w); data = append(data, -1); deg++ }
				if i > 0 {
					add(v - side)
				}
				if j > 0 {
					add(v - 1)
				}
				ind = append(ind, v)
				data = append(data, 0)
				diag := len(data) - 1
				if j+1 < side {
					add(v + 1)
				}
				if i+1 < side {
					add(v + side)
				}
				data[diag] = deg
				indptr = append(indptr, len(ind))
			}
		}
		c := newEnvLDL(n, indptr, ind)
		c.data = make([]float64, c.start[n])
		x, rhs := make([]float64, n), make([]float64, n)
		for i := range rhs {
			rhs[i] = float64(i%11) - 5
		}
		b.Run(fmt.Sprintf("factor/n=%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := c.factor(indptr, ind, data, 0.01); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("solve/n=%d", n), func(b *testing.B) {
			for range b.N {
				c.solve(x, rhs)
			}
		})
	}
}
