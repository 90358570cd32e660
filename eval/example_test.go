package eval_test

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/eval"
)

func ExampleKNNError() {
	d, _ := datasets.Open("wine")
	parts, _ := data.Split(d, []float64{0.7, 0.3}, 1)
	raw, _ := eval.KNNError(nil, parts[0].X, parts[0].Y, parts[1].X, parts[1].Y, 3)
	pipe, _ := data.FitPipeline(nil, parts[0].X, true, 0)
	tr, _ := data.ApplyDataset(pipe, parts[0])
	te, _ := data.ApplyDataset(pipe, parts[1])
	std, _ := eval.KNNError(nil, tr.X, tr.Y, te.X, te.Y, 3)
	fmt.Printf("wine 3-NN test error: raw %.1f%%, standardised %.1f%%\n", 100*raw, 100*std)
	// Output: wine 3-NN test error: raw 26.4%, standardised 1.9%
}

func ExamplePairwiseAccuracy() {
	truth := []int{0, 0, 1, 1}
	fmt.Println(eval.PairwiseAccuracy(truth, []int{5, 5, 2, 2})) // cluster ids do not matter
	fmt.Println(eval.PairwiseAccuracy(truth, []int{0, 0, 0, 0})) // 2 of 6 pairs right
	// Output:
	// 1
	// 0.3333333333333333
}

func ExampleKMeans() {
	d, _ := datasets.Open("iris")
	pipe, _ := data.FitPipeline(nil, d.X, true, 0)
	x, _ := pipe.Apply(d.X)
	res, _ := eval.KMeans(context.Background(), x, 3, eval.KMeansOptions{Seed: 1})
	fmt.Printf("iris k-means pairwise accuracy %.3f\n", eval.PairwiseAccuracy(d.Y, res.Assign))
	// Output: iris k-means pairwise accuracy 0.832
}
