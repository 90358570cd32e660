package datasets_test

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
)

func ExampleOpen() {
	d, err := datasets.Open("iris")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Len(), d.Dim(), d.Classes, d.ClassCounts())
	// Output: iris 150 4 [0 1 2] [50 50 50]
}

// The fixed letters split of the protocol, standardised on its training part.
func Example_letters() {
	d, _ := data.Load("builtin:letters", data.LoadOptions{})
	parts, _ := data.SplitRows(d, []int{10500, 4500, 5000})
	pipe, _ := data.FitPipeline(nil, parts[0].X, true, 0)
	train, _ := data.ApplyDataset(pipe, parts[0])
	test, _ := data.ApplyDataset(pipe, parts[2])
	fmt.Println(train.Len(), test.Len(), len(train.Classes))
	// Output: 10500 5000 26
}

// The toy set of the BoostMetric paper's Figures 1 and 2: class c on the
// circle of radius c + 1 in the first two coordinates, noise in the rest.
func ExampleConcentricCircles() {
	x, y, err := datasets.ConcentricCircles(8, 10, datasets.CirclesNoise, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := x.Dims()
	fmt.Println(r, c)
	for i := 0; i < 4; i++ {
		fmt.Printf("class %d at radius %.3f\n", y[i], math.Hypot(x.At(i, 0), x.At(i, 1)))
	}
	// Output:
	// 8 10
	// class 0 at radius 1.000
	// class 1 at radius 2.000
	// class 2 at radius 3.000
	// class 3 at radius 4.000
}

// Deep-feature-like data: ten classes in a 16-dimensional subspace of
// R^2048, buried in isotropic noise; also the data spec subspace:N:D[:SEED].
func ExampleSubspace() {
	x, y, err := datasets.Subspace(1000, 2048, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := x.Dims()
	fmt.Println(r, c, y[:12])
	d, _ := data.Load("subspace:1000:2048:1", data.LoadOptions{})
	fmt.Println(d.Len(), d.Dim(), d.Classes)
	// Output:
	// 1000 2048 [0 1 2 3 4 5 6 7 8 9 0 1]
	// 1000 2048 [0 1 2 3 4 5 6 7 8 9]
}
