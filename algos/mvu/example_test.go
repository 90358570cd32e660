package mvu_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"gonum.org/v1/gonum/mat"
)

// Unfold points on a quarter circle, joined to their 2 nearest neighbours,
// onto a line: MVU puts all the variance in one dimension.
func ExampleEmbed() {
	const n = 40
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		a := math.Pi / 2 * float64(i) / (n - 1)
		x.Set(i, 0, 10*math.Cos(a))
		x.Set(i, 1, 10*math.Sin(a))
	}
	emb, err := mvu.Embed(context.Background(), x, mvu.Options{K: 2, Dims: 1})
	if err != nil {
		log.Fatal(err)
	}
	var tr float64
	for _, v := range emb.Eigenvalues {
		tr += v
	}
	fmt.Printf("variance in one dimension: %.3f\n", emb.Eigenvalues[0]/tr)
	fmt.Printf("σ chosen: %g\n", emb.Sigma) // the floor, for so few points
	// Output:
	// variance in one dimension: 1.000
	// σ chosen: 100000
}
