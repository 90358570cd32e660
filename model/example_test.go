package model_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/preprocess"
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

func ExampleModel_Distance() {
	// A model that standardises two raw features (means 10 and 0, scales 2
	// and 0.5) and then weights the first 4× and ignores the second.
	met, err := model.NewMetric(mat.NewSymDense(2, []float64{4, 0, 0, 0}))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := &model.Model{Kind: model.KindMetric, Metric: met, Preprocess: &preprocess.Pipeline{
		Std: &preprocess.Standardizer{Mean: []float64{10, 0}, Scale: []float64{2, 0.5}},
	}}
	// Raw rows 14 and 10 are 2 apart once standardised: distance 2·2 = 4.
	d, err := m.Distance([]float64{14, 7}, []float64{10, -3})
	fmt.Println(d, err)

	_, err = m.Distance([]float64{14, 7, 1}, []float64{10, -3, 1})
	fmt.Println(errors.Is(err, errs.ErrDimension), err)
	// Output:
	// 4 <nil>
	// true model: dimension mismatch: Distance: vectors of 3 and 3 features, the model expects 2
}

func ExampleModel_PairDistances() {
	met, err := model.NewMetric(mat.NewSymDense(2, []float64{1, 0, 0, 4}))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := &model.Model{Kind: model.KindMetric, Metric: met}
	x := mat.NewDense(3, 2, []float64{
		0, 0,
		3, 0,
		0, 2,
	})
	d, err := m.PairDistances(x, [][2]int{{0, 1}, {0, 2}, {1, 2}})
	fmt.Println(d, err)

	_, err = m.PairDistances(x, [][2]int{{0, 3}})
	fmt.Println(err)
	// Output:
	// [3 4 5] <nil>
	// model: invalid: PairDistances: pair 0 = (0, 3) outside [0, 3)
}

func ExampleModel_TransformRowTo() {
	// Standardise two raw features (means 10 and 0, scales 2 and 0.5),
	// then weight the first 4× and ignore the second.
	met, err := model.NewMetric(mat.NewSymDense(2, []float64{4, 0, 0, 0}))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := &model.Model{Kind: model.KindMetric, Metric: met, Preprocess: &preprocess.Pipeline{
		Std: &preprocess.Standardizer{Mean: []float64{10, 0}, Scale: []float64{2, 0.5}},
	}}
	// One buffer, reused for every row: no allocation per call.
	z := make([]float64, m.OutputDim())
	for _, row := range [][]float64{{14, 7}, {10, -3}} {
		if err := m.TransformRowTo(z, row); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(z)
	}
	err = m.TransformRowTo(z, []float64{math.NaN(), 1})
	fmt.Println(errors.Is(err, errs.ErrInvalid), err)
	// Output:
	// [4]
	// [0]
	// true model: invalid: TransformRowTo: feature 0 is NaN, want a finite number
}
