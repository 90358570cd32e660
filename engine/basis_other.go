//go:build !amd64 || noasm

package engine

// useAVX2 is false without the assembly kernels.
var useAVX2 = false

func axpy4Fast(v []float64, w *[4]float64, ct []float64, ldc int) int { return 0 }

func dot4Fast(v []float64, ct []float64, ldc int, acc *[16]float64) int { return 0 }
