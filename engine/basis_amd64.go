//go:build amd64 && !noasm

package engine

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels; tests turn it off to check that
// the Go loops give the same bits.
var useAVX2 = cpu.X86.HasAVX2

// axpy4AVX2 and dot4AVX2 are in basis_amd64.s; see axpy4 and dot4.
//
//go:noescape
func axpy4AVX2(n int, v *float64, w *[4]float64, ct *float64, ldc int)

//go:noescape
func dot4AVX2(n int, v *float64, ct *float64, ldc int, acc *[16]float64)

// axpy4Fast runs the assembly kernel on the first n4 entries and reports
// how many it did.
func axpy4Fast(v []float64, w *[4]float64, ct []float64, ldc int) int {
	n4 := len(v) &^ 3
	if !useAVX2 || n4 == 0 {
		return 0
	}
	_ = ct[3*ldc+n4-1]
	axpy4AVX2(n4, &v[0], w, &ct[0], ldc)
	return n4
}

// dot4Fast runs the assembly kernel on the first n4 entries and reports
// how many it did.
func dot4Fast(v []float64, ct []float64, ldc int, acc *[16]float64) int {
	n4 := len(v) &^ 3
	if !useAVX2 || n4 == 0 {
		return 0
	}
	_ = ct[3*ldc+n4-1]
	dot4AVX2(n4, &v[0], &ct[0], ldc, acc)
	return n4
}
