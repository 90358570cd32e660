package constraints_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
	"gonum.org/v1/gonum/mat"
)

func ExampleTriplets() {
	// Two classes on a line.
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 10, 11, 12})
	y := []int{0, 0, 0, 1, 1, 1}
	ts, err := constraints.Triplets(x, y, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ts.Len(), "triplets on", len(ts.Pairs), "distinct pairs")
	fmt.Println("point 0:", ts.Triplets[:4])
	// Output:
	// 24 triplets on 14 distinct pairs
	// point 0: [{0 1 3} {0 1 4} {0 2 3} {0 2 4}]
}

func ExampleXingPairs() {
	y := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}
	p, err := constraints.XingPairs(y, 0.7, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	ml, cl := p.Counts()
	fmt.Println(p.Components(), "components;", ml > 0, cl >= 0)
	// Output: 7 components; true true
}
