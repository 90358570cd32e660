package itml

import (
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// standardized returns a built-in data set, standardised.
func standardized(t *testing.T, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	b := engine.Default()
	pipe, err := data.FitPipeline(b, d.X, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := pipe.ApplyBLAS(b.BLAS(), d.X)
	if err != nil {
		t.Fatal(err)
	}
	return &data.Dataset{Name: name, X: x, Y: d.Y}
}

// alternate splits d into its even rows and its odd rows.
func alternate(d *data.Dataset) (even, odd *data.Dataset) {
	var e, o []int
	for i := 0; i < d.Len(); i++ {
		if i%2 == 0 {
			e = append(e, i)
		} else {
			o = append(o, i)
		}
	}
	return d.Subset(e), d.Subset(o)
}

// knnError is the k-NN error on test of the metric m learned on tr.
func knnError(t *testing.T, m *mat.SymDense, tr, test *data.Dataset, k int) float64 {
	t.Helper()
	met, err := model.NewMetric(m)
	if err != nil {
		t.Fatal(err)
	}
	e, err := eval.FactorKNNError(engine.Default(), met.L, tr.X, tr.Y, test.X, test.Y, k)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pairDist is (x_a − x_b)ᵀ M (x_a − x_b).
func pairDist(m mat.Symmetric, x *mat.Dense, a, b int) float64 {
	_, d := x.Dims()
	v := mat.NewVecDense(d, nil)
	v.SubVec(x.RowView(a), x.RowView(b))
	return mat.Inner(v, m, v)
}
