//go:build amd64 && !noasm

package f64

import "golang.org/x/sys/cpu"

// useAVX2 reports that the processor and the operating system support AVX2.
var useAVX2 = cpu.X86.HasAVX2

// axpyAVX2 sets y += alpha·x with 256-bit multiplies and adds (no FMA).
// len(y) must equal len(x).
//
//go:noescape
func axpyAVX2(alpha float64, x, y []float64)

// axpy4AVX2 and dot4AVX2 (axpy4_amd64.s) are Axpy4's and Dot4's loops on
// the first n entries, n a multiple of 4.
//
//go:noescape
func axpy4AVX2(n int, v *float64, w *[4]float64, ct *float64, ldc int)

//go:noescape
func dot4AVX2(n int, v *float64, ct *float64, ldc int, acc *[16]float64)

// spDot4AVX2 (spdot4_amd64.s) is SpDot4's loop over the first n entries.
//
//go:noescape
func spDot4AVX2(n int, val *float64, ind *int32, x *float64, out *[4]float64)

// dotWideAVX2 (dotwide_amd64.s) is DotWide's loop over the first n
// entries, n a multiple of 4.
//
//go:noescape
func dotWideAVX2(n int, a, b *float64, c *[4]float64)
