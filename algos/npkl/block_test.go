package npkl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestOperatorApplyBlock: the block product equals the column products.
func TestOperatorApplyBlock(t *testing.T) {
	lap, cons, _ := problem(t, 60, 5)
	w := make([]float64, cons.Len())
	for c := range w {
		w[c] = 0.1 + float64(c%7)
	}
	op, err := NewOperator(lap, cons, w)
	if err != nil {
		t.Fatal(err)
	}
	n := op.Dim()
	x := mat.NewDense(n, 4, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 4; j++ {
			x.Set(i, j, math.Sin(float64(3*i+j)))
		}
	}
	got := mat.NewDense(n, 4, nil)
	op.ApplyBlock(got, x)
	col, want := make([]float64, n), make([]float64, n)
	for j := 0; j < 4; j++ {
		mat.Col(col, j, x)
		op.Apply(want, col)
		for i := range want {
			if d := math.Abs(got.At(i, j) - want[i]); d > 1e-14 {
				t.Fatalf("(%d,%d): block %v, column %v", i, j, got.At(i, j), want[i])
			}
		}
	}
}
