package npkl

import (
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// materialise forms the dense matrix of op column by column, symmetrised
// (tests only): an independent reference for the sparse eigensolver.
func materialise(op engine.Operator) *mat.SymDense {
	n := op.Dim()
	m := mat.NewDense(n, n, nil)
	x, y := make([]float64, n), make([]float64, n)
	for j := 0; j < n; j++ {
		x[j] = 1
		op.Apply(y, x)
		x[j] = 0
		m.SetCol(j, y)
	}
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i)))
		}
	}
	return a
}
