//go:build !cgo || purego

package lbfgsb

// HaveNative reports whether the native (Fortran L-BFGS-B) solver is compiled in.
const HaveNative = false

// Native is nil in builds without cgo or with the purego tag.
var Native Solver
