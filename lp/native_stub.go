//go:build !cgo || purego

package lp

// HaveNative reports whether the native (CLP) implementation is compiled in.
const HaveNative = false

// Native is nil in builds without cgo or with the purego tag.
var Native Solver
