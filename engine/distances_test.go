package engine

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestCheckDistances(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  []float64
		ok   bool
	}{
		{"ordinary", []float64{1, -2, 3}, true},
		{"1e150", []float64{1e150, 1e150, 1e150}, true},
		{"at the bound", []float64{MaxRowNorm, 0, 0}, true},
		{"just above", []float64{MaxRowNorm * (1 + 1e-12), 0, 0}, false},
		{"norm above by summing", []float64{MaxRowNorm, MaxRowNorm, 0}, false},
		{"6e307", []float64{6e307, 1, 1}, false},
		{"MaxFloat64", []float64{math.MaxFloat64, 0, 0}, false},
		{"NaN", []float64{math.NaN(), 0, 0}, false},
		{"-Inf", []float64{0, math.Inf(-1), 0}, false},
	} {
		x := mat.NewDense(2, 3, append([]float64{0, 0, 0}, tc.row...))
		err := CheckDistances("x", x)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrDistanceOverflow) {
			t.Errorf("%s: %v does not wrap ErrDistanceOverflow", tc.name, err)
		}
		if tc.ok {
			// The bound is what it promises: ‖a‖² + ‖b‖² + 2|a·b| is finite.
			n := mat.Norm(x.RowView(1), 2)
			if s := 4 * n * n; math.IsInf(s, 0) {
				t.Errorf("%s: accepted a row whose squared distances overflow", tc.name)
			}
		}
	}
}
