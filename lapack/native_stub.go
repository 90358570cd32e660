//go:build !cgo || purego

package lapack

// HaveNative reports whether the native (LAPACKE/OpenBLAS) implementation is compiled in.
const HaveNative = false

// Native is nil in builds without cgo or with the purego tag.
var Native Eigensolver

// NativeBLAS falls back to gonum's pure-Go BLAS in builds without cgo.
var NativeBLAS BLAS = GoBLAS

// SetBLASThreads does nothing in builds without the native BLAS.
func SetBLASThreads(n int) {}

// BLASThreads returns 1 in builds without the native BLAS.
func BLASThreads() int { return 1 }

// BLASCore returns the zero Core in builds without the native BLAS.
func BLASCore() Core { return Core{} }
