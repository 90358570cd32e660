package arpack_test

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/arpack"
)

// pathLaplacian is the Laplacian of the path graph on n vertices as a
// matrix-free operator: (Lx)_i = 2x_i − x_{i−1} − x_{i+1}, with 1 at the ends.
type pathLaplacian int

func (p pathLaplacian) Dim() int { return int(p) }

func (p pathLaplacian) Apply(dst, x []float64) {
	n := int(p)
	for i := range dst {
		var s float64
		if i > 0 {
			s += x[i] - x[i-1]
		}
		if i < n-1 {
			s += x[i] - x[i+1]
		}
		dst[i] = s
	}
}

// The three largest eigenvalues of the path Laplacian on 1000 vertices are
// 2 − 2cos(πa/1000) for a = 997, 998, 999.
func Example() {
	op := pathLaplacian(1000)
	res, err := arpack.Go.Eigs(context.Background(), op, 3, arpack.LargestAlgebraic, arpack.Options{NCV: 40, Tol: 1e-12})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, v := range res.Values {
		exact := 2 - 2*math.Cos(math.Pi*float64(997+i)/1000)
		fmt.Printf("λ = %.9f (exact %.9f)\n", v, exact)
	}
	// Output:
	// λ = 3.999911174 (exact 3.999911174)
	// λ = 3.999960522 (exact 3.999960522)
	// λ = 3.999990130 (exact 3.999990130)
}
