//go:build !amd64 || noasm

package f32

const useAVX2 = false

func axpyAVX2(alpha float32, x, y []float32) { axpyGeneric(alpha, x, y) }

func sqDistAVX2(a, b []float32) float64 { return sqDistGeneric(a, b) }
