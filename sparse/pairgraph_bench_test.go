package sparse

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkLaplacianMulDense times L_W·X on a Fashion-MNIST-shaped triplet
// graph: N = 50,000 points, D = 164, each point paired with 3 targets and 9
// impostors drawn at random (no locality: the worst case for the reads).
func BenchmarkLaplacianMulDense(b *testing.B) {
	g, x := benchLaplacian(b)
	dst := mat.NewDense(x.RawMatrix().Rows, x.RawMatrix().Cols, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.LaplacianMulDense(dst, x)
	}
	b.ReportMetric(float64(len(g.lap.Data)), "entries")
}

// BenchmarkLaplacianMulDense32 is BenchmarkLaplacianMulDense in single
// precision (the product of FrobMetric's and BoostMetric's float32
// Grams). D = 164 is not a multiple of 8, so every row's axpy ends in its
// scalar tail.
func BenchmarkLaplacianMulDense32(b *testing.B) {
	g, x := benchLaplacian(b)
	raw := x.RawMatrix()
	x32 := make([]float32, raw.Rows*raw.Cols)
	for k, v := range raw.Data {
		x32[k] = float32(v) // normal values of order 1: nothing to flush
	}
	dst := make([]float32, len(x32))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.LaplacianMulDense32(dst, x32, raw.Cols)
	}
	b.ReportMetric(float64(len(g.lap.Data)), "entries")
}

// benchLaplacian returns the benchmarks' graph, weighted, and X.
func benchLaplacian(b *testing.B) (*PairGraph, *mat.Dense) {
	const n, d, partners = 50000, 164, 12
	rng := rand.New(rand.NewPCG(1, 2))
	pairs := make([]Pair, 0, n*partners)
	for i := 0; i < n; i++ {
		for k := 0; k < partners; k++ {
			j := rng.IntN(n - 1)
			if j >= i {
				j++
			}
			pairs = append(pairs, Pair{i, j})
		}
	}
	g, err := NewPairGraph(n, pairs)
	if err != nil {
		b.Fatal(err)
	}
	w := make([]float64, len(pairs))
	for k := range w {
		w[k] = rng.Float64() - 0.3
	}
	if err := g.SetWeights(w); err != nil {
		b.Fatal(err)
	}
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for k := range raw {
		raw[k] = rng.NormFloat64()
	}
	return g, x
}
