package grid_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/grid"
)

// A list of C values whose validation optimum sits strictly at its top
// edge is extended by a factor of ten; once the optimum is inside, the
// search is complete.
func ExampleExtend() {
	list := []float64{0.1, 1, 10, 100}
	tried := []grid.Point{{C: 0.1, Err: 0.30}, {C: 1, Err: 0.20}, {C: 10, Err: 0.15}, {C: 100, Err: 0.10}}
	c, ok := grid.Extend(list, tried, 0, grid.DefaultMaxExtend)
	fmt.Println(c, ok)
	tried = append(tried, grid.Point{C: c, Err: 0.12})
	_, ok = grid.Extend(list, tried, 0, grid.DefaultMaxExtend)
	fmt.Println(ok)
	// Output:
	// 1000 true
	// false
}

// The factor that moves a Frobenius-regularised learner's C from
// standardised units to the data's own: 1 when every feature has the same
// deviation, large when the scales spread.
func ExampleFrobeniusScale() {
	same, _ := grid.FrobeniusScale([]float64{1, 1, 1})
	spread, _ := grid.FrobeniusScale([]float64{0.1, 1, 10})
	fmt.Printf("%g %.4g\n", same, spread)
	// Output:
	// 1 3334
}
