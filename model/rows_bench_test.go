package model

import (
	"math"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/preprocess"
	"gonum.org/v1/gonum/mat"
)

// The serving benchmarks: one raw row through the model at two shapes, the
// destination-buffer methods against the hand-written loop that
// standardises, projects and multiplies by L into the caller's buffers (the
// reference they are measured against) and against the allocating API.
//
//	go test -run '^$' -bench 'TransformRow|Distance|Transform$' -benchmem ./model

// benchShape is a model shape of the serving benchmarks.
type benchShape struct {
	name string
	m    *Model
}

var (
	benchOnce   sync.Once
	benchShapes []benchShape
)

// servingShapes returns a wine-like model (13 standardised features, a
// full-rank metric) and an MNIST-like one (784 standardised features, PCA
// to 164, a full-rank metric there), built once.
func servingShapes(b *testing.B) []benchShape {
	benchOnce.Do(func() {
		wine, err := NewMetric(lowRankPSD(21, 13, 13))
		if err != nil {
			panic(err)
		}
		mnist, err := NewMetric(lowRankPSD(22, 164, 164))
		if err != nil {
			panic(err)
		}
		benchShapes = []benchShape{
			{"D=13", &Model{Kind: KindMetric, Metric: wine, Preprocess: &preprocess.Pipeline{Std: benchStd(23, 13)}}},
			{"D=784,PCA=164", &Model{Kind: KindMetric, Metric: mnist, Preprocess: &preprocess.Pipeline{Std: benchStd(24, 784), PCA: benchPCA(25, 784, 164)}}},
		}
	})
	return benchShapes
}

func benchStd(seed uint64, d int) *preprocess.Standardizer {
	r := randDense(seed, 2, d)
	s := &preprocess.Standardizer{Mean: make([]float64, d), Scale: make([]float64, d)}
	for j := 0; j < d; j++ {
		s.Mean[j], s.Scale[j] = r.At(0, j), 0.5+math.Abs(r.At(1, j))
	}
	return s
}

// benchPCA returns a projection onto d random orthonormal axes of R^D.
func benchPCA(seed uint64, dim, d int) *preprocess.PCA {
	var qr mat.QR
	qr.Factorize(randDense(seed, dim, d))
	var q mat.Dense
	qr.QTo(&q)
	comp := mat.DenseCopyOf(q.Slice(0, dim, 0, d))
	vars := make([]float64, d)
	for i := range vars {
		vars[i] = float64(d - i)
	}
	return &preprocess.PCA{Mean: make([]float64, dim), Components: comp, Variances: vars}
}

func BenchmarkTransformRowTo(b *testing.B) {
	for _, s := range servingShapes(b) {
		b.Run(s.name, func(b *testing.B) {
			x := randDense(26, 1, s.m.InputDim()).RawRowView(0)
			z := make([]float64, s.m.OutputDim())
			b.ReportAllocs()
			for b.Loop() {
				if err := s.m.TransformRowTo(z, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTransformRowHandLoop is the reference of BenchmarkTransformRowTo:
// the loop a programmer writes for one model, without validation, into
// buffers the caller owns: standardise, centre and project (with PCA), then
// multiply by Lᵀ.
func BenchmarkTransformRowHandLoop(b *testing.B) {
	for _, s := range servingShapes(b) {
		b.Run(s.name, func(b *testing.B) {
			x := randDense(26, 1, s.m.InputDim()).RawRowView(0)
			std, pca := s.m.Preprocess.Std, s.m.Preprocess.PCA
			lr := s.m.Metric.L.RawMatrix()
			xs := make([]float64, len(x))
			var p []float64
			var cr mat.RawMatrixer
			if pca != nil {
				p = make([]float64, pca.OutDim())
				cr = pca.Components
			}
			z := make([]float64, lr.Cols)
			b.ReportAllocs()
			for b.Loop() {
				mean, scale, xs := std.Mean[:len(x)], std.Scale[:len(x)], xs[:len(x)]
				for j, v := range x {
					xs[j] = (v - mean[j]) / scale[j]
				}
				in := xs
				if pca != nil {
					c := cr.RawMatrix()
					clear(p)
					for j, v := range xs {
						t := v - pca.Mean[j]
						row, p := c.Data[j*c.Stride:j*c.Stride+c.Cols], p[:c.Cols]
						for k, w := range row {
							p[k] += t * w
						}
					}
					in = p
				}
				clear(z)
				for k, t := range in {
					row, z := lr.Data[k*lr.Stride:k*lr.Stride+lr.Cols], z[:lr.Cols]
					for j, w := range row {
						z[j] += t * w
					}
				}
			}
		})
	}
}

// BenchmarkTransformOneRow is the allocating API on one row, for comparison.
func BenchmarkTransformOneRow(b *testing.B) {
	for _, s := range servingShapes(b) {
		b.Run(s.name, func(b *testing.B) {
			x := randDense(26, 1, s.m.InputDim())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.m.Transform(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDistance(b *testing.B) {
	for _, s := range servingShapes(b) {
		b.Run(s.name, func(b *testing.B) {
			x := randDense(27, 2, s.m.InputDim())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.m.Distance(x.RawRowView(0), x.RawRowView(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTransformTo maps a request-sized batch of 32 rows into a reused
// matrix.
func BenchmarkTransformTo(b *testing.B) {
	for _, s := range servingShapes(b) {
		b.Run(s.name, func(b *testing.B) {
			x := randDense(28, 32, s.m.InputDim())
			z := mat.NewDense(32, s.m.OutputDim(), nil)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.m.TransformTo(z, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
