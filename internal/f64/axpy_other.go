//go:build !amd64 || noasm

package f64

const useAVX2 = false

func axpyAVX2(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }

func axpy4AVX2(n int, v *float64, w *[4]float64, ct *float64, ldc int) {
	panic("f64: axpy4AVX2 without assembly")
}

func dot4AVX2(n int, v *float64, ct *float64, ldc int, acc *[16]float64) {
	panic("f64: dot4AVX2 without assembly")
}

func spDot4AVX2(n int, val *float64, ind *int32, x *float64, out *[4]float64) {
	panic("f64: spDot4AVX2 without assembly")
}

func dotWideAVX2(n int, a, b *float64, c *[4]float64) {
	panic("f64: dotWideAVX2 without assembly")
}
