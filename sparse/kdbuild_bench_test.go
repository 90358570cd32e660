package sparse

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkKDTreeBuild builds the tree over 10,500 rows of 16 features (the
// letters training part's shape), the cost a failed pilot wastes.
func BenchmarkKDTreeBuild(b *testing.B) {
	const n, d = 10500, 16
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]float64, n*d)
	for i := range data {
		data[i] = rng.NormFloat64()
	}
	ref := blas64.General{Rows: n, Cols: d, Stride: d, Data: data}
	for i := 0; i < b.N; i++ {
		buildKDTree(ref, n, d)
	}
}
