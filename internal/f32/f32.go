// Package f32 holds the float32 vector loop of the single-precision
// Laplacian product (sparse.PairGraph.LaplacianMulDense32), which feeds
// BoostMetric's mixed-precision Gram, the squared distance of two float32
// rows (SqDist) of the k-NN search's prefix screen, and the
// rounding (Round) through which every float64 becomes a float32 for a
// single-precision kernel.
// The vectorised loop and the portable one perform the same float32
// operations, so they give the same bits.
package f32

// Axpy sets y += alpha·x, each element one float32 multiply then one
// float32 add. y must be at least as long as x.
func Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	if useAVX2 && len(x) >= 8 {
		axpyAVX2(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}

// axpyGeneric is Axpy's portable loop.
func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += float32(alpha * v) // the conversion rounds the product: no fused multiply-add
	}
}
