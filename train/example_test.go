package train_test

import (
	"context"
	"fmt"

	_ "github.com/psdlearn/psdlearn/algos/boost" // registers "boostmetric" and "psdboost"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/train"
)

// ExampleRunExperiment learns a BoostMetric metric on the bundled vehicle data
// with the experimental protocol: a seeded 70/15/15 split, standardisation
// fitted on the training rows, 3×3 LMNN triplets per point and 3-NN
// evaluation. It works the same on either backend (engine.Default()).
func ExampleRunExperiment() {
	d, err := datasets.Open("vehicle")
	if err != nil {
		panic(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		panic(err)
	}
	rep, err := train.RunExperiment(context.Background(), train.Experiment{
		Algo: "boostmetric", Train: parts[0], Val: parts[1], Test: parts[2],
		Standardize: true, Seed: 1, Options: train.Options{Loss: "exp", Mode: "stagewise"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d training points, %d triplets, a %d×%d metric\n", rep.NTrain, rep.Triplets, rep.Dim, rep.Dim)
	fmt.Printf("3-NN test error %.1f%% (Euclidean %.1f%%)\n", 100*rep.TestError, 100*rep.EuclideanTestErr)
	// Output:
	// 592 training points, 5328 triplets, a 18×18 metric
	// 3-NN test error 31.5% (Euclidean 38.6%)
}
