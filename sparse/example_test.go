package sparse_test

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The leading eigenpair of Xᵀ L_W X — the pricing step of BoostMetric and
// PSDBoost — computed matrix-free, without forming the D×D matrix.
func ExampleGramOperator() {
	// Four points in the plane; pair (0,1) pulls together (weight −1),
	// pair (2,3) pushes apart (weight +2).
	x := mat.NewDense(4, 2, []float64{
		0, 0,
		1, 0,
		0, 0,
		0, 3,
	})
	g, err := sparse.NewPairGraph(4, []sparse.Pair{{A: 0, B: 1}, {A: 2, B: 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := g.SetWeights([]float64{-1, 2}); err != nil {
		fmt.Println(err)
		return
	}
	// Xᵀ L_W X = −1·(1,0)(1,0)ᵀ + 2·(0,−3)(0,−3)ᵀ = diag(−1, 18).
	op, err := sparse.NewGramOperator(x, g, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := arpack.Go.Eigs(context.Background(), op, 1, arpack.LargestAlgebraic, arpack.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	v := mat.Col(nil, 0, res.Vectors)
	fmt.Printf("λ = %.6f, v = (%.6f, %.6f)\n", res.Values[0], math.Abs(v[0]), math.Abs(v[1]))
	// Output:
	// λ = 18.000000, v = (0.000000, 1.000000)
}
