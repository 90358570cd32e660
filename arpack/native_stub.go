//go:build !cgo || purego

package arpack

// HaveNative reports whether the arpack-ng implementation is compiled in.
const HaveNative = false

// Native is nil in builds without cgo or with the purego tag.
var Native Solver
