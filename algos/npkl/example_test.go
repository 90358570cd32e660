package npkl_test

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/sparse"
)

// Learn a kernel on iris from random must-link / cannot-link pairs and
// cluster with kernel k-means on its low-rank factor.
func ExampleLearn() {
	ctx := context.Background()
	ds, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	lap, err := npkl.Laplacian(ds.X, 5, sparse.GraphOptions{}, nil) // 0/1 weights, union kNN graph
	if err != nil {
		panic(err)
	}
	pairs, err := constraints.XingPairs(ds.Y, 0.7, 1) // the paper's protocol
	if err != nil {
		panic(err)
	}
	res, err := npkl.Learn(ctx, lap, pairs, npkl.Options{Loss: npkl.Linear, B: 1, C: 0.5})
	if err != nil {
		panic(err)
	}
	km, err := eval.KMeans(ctx, res.Factor(), 3, eval.KMeansOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d constraints, rank %d (positive spectrum covered: %v)\n", pairs.Len(), res.Rank(), res.Covered)
	fmt.Printf("pairwise accuracy %.1f%%\n", 100*eval.PairwiseAccuracy(ds.Y, km.Assign))
	// Output:
	// 138 constraints, rank 7 (positive spectrum covered: true)
	// pairwise accuracy 97.4%
}
