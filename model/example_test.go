package model_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

func ExampleNewMetric() {
	// M weights the first feature 4× and ignores the second.
	m, err := model.NewMetric(mat.NewSymDense(2, []float64{4, 0, 0, 0}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rank", m.Rank(), "distance", m.Distance([]float64{1, 5}, []float64{0, -3}))

	_, err = model.NewMetric(mat.NewSymDense(2, []float64{1, 2, 2, 1}))
	fmt.Println(err)
	// Output:
	// rank 1 distance 2
	// model: invalid: metric is not positive semidefinite: smallest eigenvalue -1, largest 3 (tolerance 1e-08 relative)
}
