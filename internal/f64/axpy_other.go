//go:build !amd64 || noasm

package f64

const useAVX2 = false

func axpyAVX2(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }
