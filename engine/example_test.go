package engine_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Example forms Â(u) = Σ_r u_r A_r for two triplets through the weighted Gram
// Xᵀ L_W X, without forming any A_r, and takes its leading eigenpair.
func Example() {
	b, err := engine.Get("go")
	if err != nil {
		panic(err)
	}
	// Four points in the plane.
	x := mat.NewDense(4, 2, []float64{
		0, 0,
		1, 0,
		0, 2,
		3, 1,
	})
	// Triplets (i, j, k) = (0, 1, 2) and (0, 1, 3) with weights u = 1 and 0.5:
	// impostor pairs (0,2), (0,3) weigh +u, the target pair (0,1) weighs −u.
	g, err := sparse.NewPairGraph(4, []sparse.Pair{{A: 0, B: 2}, {A: 0, B: 3}, {A: 0, B: 1}})
	if err != nil {
		panic(err)
	}
	if err := g.SetWeights([]float64{1, 0.5, -1.5}); err != nil {
		panic(err)
	}
	a := mat.NewSymDense(2, nil)
	if err := b.WeightedGram(a, x, g); err != nil {
		panic(err)
	}
	fmt.Printf("Â =\n%v\n", mat.Formatted(a, mat.Squeeze()))
	top, err := b.SymEig(a, lapack.TopK(2, 1), false)
	if err != nil {
		panic(err)
	}
	fmt.Printf("leading eigenvalue %.4f\n", top.Values[0])
	// Output:
	// Â =
	// ⎡  3  1.5⎤
	// ⎣1.5  4.5⎦
	// leading eigenvalue 5.4271
}
