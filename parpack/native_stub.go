//go:build !cgo || !mpi || purego

package parpack

// HaveNative reports whether the PARPACK implementation is compiled in
// (cgo builds with the mpi tag and without purego).
const HaveNative = false

// Native is nil without PARPACK; For returns Go then.
var Native Solver
