package eval_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

func ExamplePairAUC() {
	// Distances of four pairs: similar (+1) ones should be the closer.
	dist := []float64{0.5, 1.0, 1.0, 2.0}
	y := []int{1, 1, -1, -1}
	auc, _ := eval.PairAUC(dist, y) // 3 orderings right, 1 tie counted ½
	t, acc, _ := eval.CalibrateThreshold(dist, y)
	fmt.Println(auc, t, acc)
	// Output: 0.875 0.75 0.75
}

func ExamplePrecisionAtK() {
	// Three reference points of class 0 near 0, three of class 1 near 10.
	ref := col(0, 1, 2, 10, 11, 12)
	refY := []int{0, 0, 0, 1, 1, 1}
	p, _ := eval.PrecisionAtK(nil, ref, refY, col(1.5, 9), []int{0, 1}, 3)
	fmt.Printf("%.3f\n", p) // 3 of 3 for the first query, 3 of 3 for the second
	// Output: 1.000
}

// col returns a one-feature matrix.
func col(v ...float64) *mat.Dense { return mat.NewDense(len(v), 1, v) }
